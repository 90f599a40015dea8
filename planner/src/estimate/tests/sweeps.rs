//! Sweeps, parameters and the parsing of sizes and node counts.

use super::*;

// Sweeps, parameters, parsing.

#[test]
fn sweeps_report_progress_and_build_the_papers_shapes() {
    assert_eq!(bigraph_shape(64).unwrap(), (4, 16));
    assert_eq!(bigraph_shape(1024).unwrap(), (16, 64));
    assert!(bigraph_shape(63).is_err());
    let plans = scale_plans(&[64], &ScaleSpec::default()).unwrap();
    assert_eq!(plans.len(), 2);
    assert_eq!(plans[0].topology, Topology::BiGraph);
    assert_eq!(plans[1].topology, Topology::FatTree);
    let mut calls = Vec::new();
    let rows = scale_sweep(
        &plans,
        &Algorithm::EFLOPS,
        &[256 << 10],
        &Params::default(),
        &opts(Method::Fast),
        &mut |d, t| calls.push((d, t)),
    )
    .unwrap();
    // HDRM runs on the BiGraph only.
    assert_eq!(rows.len(), 5);
    assert_eq!(calls.first(), Some(&(0, 5)));
    assert_eq!(calls.last(), Some(&(5, 5)));
    // The JSON contract, keys in this order.
    let json = serde_json::to_string(&rows[0].row()).unwrap();
    let keys = [
        "algorithm",
        "topology",
        "ranks",
        "size_bytes",
        "time_us",
        "algbw_gbps",
        "busbw_gbps",
    ];
    let at: Vec<usize> = keys
        .iter()
        .map(|k| json.find(&format!("\"{k}\":")).unwrap())
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{json}");
    assert!(
        json.starts_with(r#"{"algorithm":"ring","topology":"bigraph","ranks":64,"#),
        "{json}"
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&json)
            .unwrap()
            .as_object()
            .unwrap()
            .len(),
        7
    );
    let csv = csv(&rows);
    assert!(csv.starts_with(
        "algorithm,topology,ranks,size_bytes,time_us,algbw_gbps,busbw_gbps\nring,bigraph,64,262144,"
    ));
    assert_eq!(csv.lines().count(), 6);
}

#[test]
fn params_take_overrides_by_name() {
    let p = Params::default()
        .with_overrides(&["alpha_us=2", "density=0.1,link_gbps=200"])
        .unwrap();
    assert_eq!(p.alpha_us, 2.0);
    assert_eq!(p.density, 0.1);
    assert_eq!(p.link_gbps, Some(200.0));
    let p = p.with_overrides(&["link_gbps=plan"]).unwrap();
    assert_eq!(p.link_gbps, None);
    for bad in [
        "beta=1",
        "alpha_us=-1",
        "density=0",
        "density=2",
        "alpha_us",
        "nic_us=x",
    ] {
        let e = Params::default().with_overrides(&[bad]).unwrap_err();
        assert!(matches!(e, Error::Parameter { .. }), "{bad}: {e}");
    }
    // The documented defaults are the defaults.
    let mut documented = Params {
        alpha_us: 9.0,
        nic_us: 9.0,
        gamma_ns_per_byte: 9.0,
        link_gbps: Some(9.0),
        density: 0.9,
        topk_ns_per_byte: 9.0,
        gradient_bytes: 9,
        eager_bytes: 9,
        channels: Channels::Pair,
        packet: PacketParams {
            mtu_bytes: Some(9),
            header_bytes: 9,
            buffer_kib: 9.0,
            pfc_headroom_kib: 9.0,
            pfc_hysteresis_kib: 9.0,
            pfc_delay_us: 9.0,
            ecn_kmin_kib: Some(9.0),
            ecn_kmax_kib: Some(9.0),
            ecn_pmax: Some(0.9),
            dcqcn: false,
            dcqcn_g: 0.9,
            dcqcn_alpha_us: 9.0,
            dcqcn_timer_us: 9.0,
            dcqcn_bytes: 9,
            dcqcn_rai_mbps: 9.0,
            dcqcn_rhai_mbps: 9.0,
            dcqcn_f: 9,
            dcqcn_min_mbps: 9.0,
            dcqcn_clamp_target: true,
            cnp_interval_us: 9.0,
        },
    };
    for doc in PARAMS.iter().chain(&PACKET_PARAMS) {
        documented.set(doc.name, doc.default).unwrap();
    }
    assert_eq!(documented, Params::default());
    // A faster link override speeds a simulation up.
    let plan = bigraph_plan(2, 8);
    let slow = estimate(
        &plan,
        Algorithm::Ring,
        None,
        1 << 24,
        &Params::default(),
        &opts(Method::Event),
    )
    .unwrap();
    let fast_links = Params::default()
        .with_overrides(&["link_gbps=400"])
        .unwrap();
    let quick = estimate(
        &plan,
        Algorithm::Ring,
        None,
        1 << 24,
        &fast_links,
        &opts(Method::Event),
    )
    .unwrap();
    assert!(quick.time_us < slow.time_us / 3.0);
}

#[test]
fn sizes_and_nodes_parse() {
    assert_eq!(parse_size("4096").unwrap(), 4096);
    assert_eq!(parse_size("256KiB").unwrap(), 256 << 10);
    assert_eq!(parse_size("16M").unwrap(), 16 << 20);
    assert_eq!(parse_size(" 1GiB ").unwrap(), 1 << 30);
    // Issue #19: decimal units are decimal.
    assert_eq!(parse_size("200KB").unwrap(), 200_000);
    assert_eq!(parse_size("200kb").unwrap(), 200_000);
    assert_eq!(parse_size("200KiB").unwrap(), 204_800);
    assert_eq!(parse_size("256MB").unwrap(), 256_000_000);
    assert_eq!(parse_size("2GB").unwrap(), 2_000_000_000);
    assert_eq!(parse_size("1.5MiB").unwrap(), 3 << 19);
    assert_eq!(parse_size("1.5MB").unwrap(), 1_500_000);
    assert_eq!(parse_size("0.5K").unwrap(), 512);
    assert_eq!(parse_size("12B").unwrap(), 12);
    for bad in [
        "",
        "0",
        "0KB",
        "12XB",
        "KiB",
        "1.5B",
        "1.0001KB",
        "1..2",
        ".",
        "1.2.3MB",
        "99999999999GB",
    ] {
        let e = parse_size(bad).unwrap_err();
        assert!(matches!(e, Error::Parameter { .. }), "{bad}: {e}");
    }
    assert!(
        parse_size("1.0001KB")
            .unwrap_err()
            .to_string()
            .contains("not a whole number of bytes")
    );
    assert_eq!(format_size(200_000), "200KB");
    assert_eq!(format_size(204_800), "200KiB");
    assert_eq!(format_size(1_000_000_000), "1GB");
    let sweep = parse_sizes("1KiB..256MiB").unwrap();
    assert_eq!(sweep.len(), 19);
    assert_eq!(sweep[0], 1024);
    assert_eq!(*sweep.last().unwrap(), 256 << 20);
    assert_eq!(
        parse_sizes("256KiB,256MiB").unwrap(),
        vec![256 << 10, 256 << 20]
    );
    // One grammar with the probe's: a range doubles from any size.
    assert_eq!(parse_sizes("3KB..12KB").unwrap(), [3000, 6000, 12000]);
    assert_eq!(
        parse_sizes("8B, 1KiB..4KiB").unwrap(),
        [8, 1024, 2048, 4096]
    );
    for bad in ["1MiB..1KiB", "0..8", "", " , "] {
        assert!(parse_sizes(bad).is_err(), "{bad}");
    }
    assert_eq!(
        parse_nodes("64..1024").unwrap(),
        vec![64, 128, 256, 512, 1024]
    );
    assert_eq!(parse_nodes("64,96").unwrap(), vec![64, 96]);
    assert!(parse_nodes("1024..64").is_err());
    assert_eq!(format_size(256 << 20), "256MiB");
    assert_eq!(format_size(1000), "1KB");
    assert_eq!(format_size(1001), "1001B");
    assert_eq!(
        Algorithm::parse_list("ring, hd,ring").unwrap(),
        vec![Algorithm::Ring, Algorithm::Hd]
    );
    assert_eq!(
        Algorithm::parse_list("all").unwrap().len(),
        Algorithm::ALL.len()
    );
    assert!(Algorithm::parse_list("ring,bogus").is_err());
    assert_eq!("fast".parse::<Method>().unwrap(), Method::Fast);
}

#[test]
fn estimates_of_several_sizes_equal_one_estimate_each() {
    // issue13: `iteration` fits its allreduce line from one context (the
    // folded rank search ran once per size and took 28 s on 1,000 ranks).
    let plan = bigraph_plan(2, 8);
    let sizes = [4096, 1 << 20, 1 << 24];
    for algorithm in [Algorithm::Hd, Algorithm::Ring] {
        let together = estimates(
            &plan,
            algorithm,
            Some(12),
            &sizes,
            &Params::default(),
            &opts(Method::Event),
        )
        .unwrap();
        for (&n, e) in sizes.iter().zip(&together) {
            let alone = estimate(
                &plan,
                algorithm,
                Some(12),
                n,
                &Params::default(),
                &opts(Method::Event),
            )
            .unwrap();
            assert_eq!(&alone, e, "{algorithm:?} at {n} bytes");
        }
    }
}

/// Issue #33: a sweep counts the sends its simulations start into
/// `Options::sends`: every send of every job, streamed (the ring, into the
/// lone pass) or stored (the trees, in the event loop), against a total
/// counted from the shapes before any job starts: exact for the ring, an
/// upper bound for the trees (their roots send nothing up).
#[test]
fn issue33_sweeps_count_the_sends_they_start() {
    let plan = bigraph_plan(4, 8);
    let params = Params::default();
    let sizes = [1 << 10, 1 << 20];
    for (algorithm, exact) in [
        (Algorithm::Ring, true),
        (Algorithm::OverlappedDoubleTree, false),
    ] {
        for method in [Method::Event, Method::Fast] {
            let sends = Arc::new(SendProgress::default());
            let options = Options {
                sends: Some(Arc::clone(&sends)),
                ..opts(method)
            };
            let rows = size_sweep(
                &plan,
                &[algorithm],
                &sizes,
                None,
                &params,
                &options,
                &mut |_, _| {},
            )
            .unwrap();
            let made: u64 = rows
                .iter()
                .map(|e| e.schedule.as_ref().unwrap().sends as u64)
                .sum();
            let what = format!("{} {method:?}", algorithm.as_str());
            assert_eq!(sends.started(), made, "{what}");
            if exact {
                assert_eq!(sends.total(), made, "{what}");
            } else {
                assert!(sends.total() >= made && sends.total() < 2 * made, "{what}");
            }
        }
    }
}
