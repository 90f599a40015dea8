//! The intra-server tier: one rank per GPU, NVLink links of their own,
//! per-level bandwidth in the hierarchical closed forms (issue 18).

use super::*;
use crate::network::{Network, Policy};
use crate::plan::Plan;
use crate::ranks::Link;
use sim::Routes;

fn bundled(name: &str) -> CheckedPlan {
    bundled_as(name, Topology::FatTree)
}

/// A bundled inventory designed as `topology`.
pub(super) fn bundled_as(name: &str, topology: Topology) -> CheckedPlan {
    crate::design::bundled(name, Some(topology))
}

pub(super) fn spray() -> Options {
    Options {
        routing: Policy::Spray,
        ..opts(Method::Event)
    }
}

/// The same plan without its intra-server tier, as written before it.
fn without_tier(plan: &CheckedPlan) -> CheckedPlan {
    let mut p: Plan = (**plan).clone();
    for s in &mut p.servers {
        s.nvlink.clear();
    }
    for sn in &mut p.sub_node_list {
        sn.gpu_indices.clear();
    }
    let json = serde_json::to_string(&p).unwrap();
    CheckedPlan::load(&json, "old.json").unwrap()
}

/// A ring of `ranks` ranks (default: all) on `plan`, 1 MiB, with `method`.
fn ring(plan: &CheckedPlan, ranks: Option<usize>, method: Method) -> Result<Estimate> {
    estimate(
        plan,
        Algorithm::Ring,
        ranks,
        1 << 20,
        &Params::default(),
        &opts(method),
    )
}

#[test]
fn a_shared_nic_carries_one_rank_per_gpu() {
    let plan = bundled("cloud-8x16");
    let ranks = |p: &CheckedPlan| ring(p, None, Method::ClosedForm).unwrap().ranks;
    assert_eq!(ranks(&plan), 128);
    assert_eq!(ranks(&without_tier(&plan)), 16);
    assert_eq!(ranks(&bundled("s822lc-48")), 192);
    // What `iteration` takes when no --ranks is given.
    assert_eq!(default_ranks(&plan), 128);
    assert_eq!(default_ranks(&without_tier(&plan)), 16);
}

/// The estimates widen a NIC-level order to one rank per GPU by the same
/// rule as `planner ranks` ([`crate::ranks::gpus::widen`]) and give each
/// rank the GPU `ranks` names ([`crate::ranks::rank_gpus`]): the tables
/// `simulate` and `ranks` use are one.
#[test]
fn the_tier_widens_ranks_as_the_rank_table_does() {
    for name in ["cloud-8x16", "dgx1-v100", "s822lc-48", "h100-8x32"] {
        let plan = bundled(name);
        let order: Vec<usize> = (0..plan.sub_node_list.len()).rev().collect();
        let total = default_ranks(&plan);
        for x in [1, total / 3 + 1, total] {
            let (table, tier) =
                crate::estimate::intra::Tier::build(&plan, &order, Some(x), 0).unwrap();
            assert_eq!(
                table,
                crate::ranks::gpus::widen(&plan, &order, x),
                "{name} {x}"
            );
            assert_eq!(tier.server.len(), x, "{name}");
            let gpus = crate::ranks::rank_gpus(&plan, &table);
            for (r, g) in gpus.iter().enumerate() {
                let server = &plan.servers[tier.server[r] as usize];
                let in_domain =
                    g.is_some_and(|g| server.nvlink.iter().any(|d| d.gpu_indices.contains(&g)));
                assert_eq!(tier.domain[r].is_some(), in_domain, "{name} rank {r}");
            }
        }
    }
}

#[test]
fn more_ranks_than_gpus_is_refused() {
    let plan = bundled("cloud-8x16");
    let err = ring(&plan, Some(129), Method::ClosedForm)
        .unwrap_err()
        .to_string();
    assert!(err.contains("128 GPUs"), "{err}");
    assert_eq!(ring(&plan, Some(12), Method::Event).unwrap().ranks, 12);
}

#[test]
fn a_flow_inside_a_domain_uses_only_nvlink_and_one_leaving_uses_the_nic() {
    let plan = bundled("cloud-8x16");
    let params = Params::default();
    let ctx = Context::new(&plan, Algorithm::Ring, None, &params).unwrap();
    let net = Network::new(&plan, plan.source()).unwrap();
    let fabric = net.link_count();
    // 16 servers x 8 GPUs, an up and a down NVLink link each.
    assert_eq!(ctx.caps.len(), fabric + 2 * 128);
    assert!(
        ctx.caps[fabric..]
            .iter()
            .all(|&c| c == params::bytes_per_us(1200.0))
    );
    let sched = ctx.schedule(1 << 20, 1).unwrap();
    let mut routes = PlanRoutes::new(&ctx, &sched, 0, Policy::Ecmp);
    let send = |s: u32, d: u32| {
        (0..sched.len())
            .find(|&i| sched.src[i] == s && sched.dst[i] == d)
            .unwrap()
    };
    // Ranks 0 and 1: two GPUs of vm01.
    let inside = routes.route(send(0, 1)).unwrap();
    assert_eq!(inside.len, 2);
    assert!(inside.links().iter().all(|&l| l as usize >= fabric));
    // Ranks 7 and 8: vm01's last GPU to vm02's first, through both NICs.
    let out = routes.route(send(7, 8)).unwrap();
    let links = out.links();
    assert!(links.iter().all(|&l| (l as usize) < fabric));
    assert!(matches!(
        net.link(links[0] as usize),
        Some(Link::Up {
            sub_node: 0,
            port: 0
        })
    ));
    assert!(matches!(
        net.link(*links.last().unwrap() as usize),
        Some(Link::Down {
            sub_node: 1,
            port: 0
        })
    ));
}

#[test]
fn hierarchical_closed_forms_charge_each_level_at_its_own_bandwidth() {
    let plan = bundled("cloud-8x16");
    let params = Params::default();
    let n = 100_000_000u64;
    let e = estimate(
        &plan,
        Algorithm::BlueConnect,
        None,
        n,
        &params,
        &opts(Method::ClosedForm),
    )
    .unwrap();
    // Level 0: 8 GPUs on NVLink at 1200 Gbps; level 1: 16 servers, the 8
    // GPUs of one sharing its 25 Gbps NIC.
    let lv = [
        models::Level {
            p: 8,
            alpha: params.latency_us(1),
            w: params::bytes_per_us(1200.0),
        },
        models::Level {
            p: 16,
            alpha: params.latency_us(1),
            w: params::bytes_per_us(25.0) / 8.0,
        },
    ];
    let want = models::blueconnect(&lv, n as f64, params.gamma_us(), false);
    assert_close(e.closed_form_us, want, "blueconnect on cloud-8x16");
}

/// The simulated time (packet spraying) equals the closed form.
fn agrees(name: &str, plan: &CheckedPlan, a: Algorithm, n: u64, params: &Params) {
    let e = estimate(plan, a, None, n, params, &spray()).unwrap();
    let (t, c) = (e.time_us, e.closed_form_us);
    assert!(
        (t - c).abs() <= 1e-6 * c,
        "{name} {}: simulated {t} µs, closed form {c} µs",
        a.as_str()
    );
}

#[test]
fn closed_forms_agree_with_the_simulation_without_contention() {
    let params = Params::default();
    let n = 100_000_000u64;
    for (name, algorithms) in [
        (
            "cloud-8x16",
            &[
                Algorithm::Ring,
                Algorithm::TwoD,
                Algorithm::BlueConnect,
                Algorithm::HiTopK,
            ][..],
        ),
        // 48 nodes: HiTopKComm all-gathers across them by a ring of 47
        // steps, and its closed form counts their α.
        (
            "s822lc-48",
            &[
                Algorithm::Ring,
                Algorithm::TwoD,
                Algorithm::BlueConnect,
                Algorithm::HiTopK,
            ][..],
        ),
        ("dgx1-v100", &[Algorithm::Ring, Algorithm::TwoD][..]),
    ] {
        let plan = bundled(name);
        for &a in algorithms {
            agrees(name, &plan, a, n, &params);
        }
    }
}

#[test]
fn the_tier_makes_hierarchies_faster_than_the_nic_alone() {
    let plan = bundled("cloud-8x16");
    let params = Params::default();
    let n = 100_000_000u64;
    let ring = estimate(&plan, Algorithm::Ring, None, n, &params, &spray()).unwrap();
    let hitopk = estimate(&plan, Algorithm::HiTopK, None, n, &params, &spray()).unwrap();
    let flat = estimate(&plan, Algorithm::TopKAllGather, None, n, &params, &spray()).unwrap();
    assert!(hitopk.time_us < ring.time_us && ring.time_us < flat.time_us);
}

#[test]
fn closed_forms_agree_exactly_without_latency_reduction_or_contention() {
    // With α = γ = 0 every closed form charges exactly the bytes its
    // schedule moves on each level at that level's bandwidth. With them:
    // two-level's schedule charges a reduction late (see
    // `two_level_follows_blueconnect_eq_4`) and a level's α is its
    // longest route.
    let params = Params {
        alpha_us: 0.0,
        nic_us: 0.0,
        gamma_ns_per_byte: 0.0,
        ..Params::default()
    };
    let n = 102_000_000u64;
    for name in ["cloud-8x16", "s822lc-48", "h100-8x32", "dgx1-v100"] {
        let plan = bundled(name);
        for a in [
            Algorithm::TwoD,
            Algorithm::BlueConnect,
            Algorithm::TwoLevel,
            Algorithm::HiTopK,
        ] {
            agrees(name, &plan, a, n, &params);
        }
    }
}
