//! The cluster burn-in (`provisioner probe --burn-in`) in-process over loopback: every rank a thread on 127.0.0.1 standing for one sub-node of the 2x8 BiGraph, every directed inter-switch link loaded once, rank 0's report.

use std::path::Path;
use std::thread;
use std::time::Duration;

use planner::checked::CheckedPlan;
use planner::network::Lab;
use provisioner::probe::burnin::{self, Config};
use provisioner::probe::{Bootstrap, Secret, Timeouts};

fn lab() -> Lab {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/data/bigraph-2x8.plan.json");
    let plan = CheckedPlan::load(&std::fs::read_to_string(&file).unwrap(), "bigraph-2x8").unwrap();
    Lab::of(&plan, "bigraph-2x8").unwrap()
}

fn config(expect_gbps: f64) -> Config {
    Config {
        seconds: 0.2,
        threshold: 0.7,
        max_flows: 8,
        expect_gbps: Some(expect_gbps),
        timeouts: Timeouts {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(10),
        },
    }
}

/// A rate every loopback flow reaches however loaded the machine: 1 Mbit/s
/// expected, 1 MB a flow, so a flow is slow only if its megabyte takes
/// over 11 s (the test threads share two cores with the others).
fn healthy() -> Config {
    Config {
        seconds: 8.0,
        ..config(0.001)
    }
}

/// One burn-in of this file at a time: each takes 16 loopback ports
/// found free and then released, and measures rates, so two at once
/// could take each other's ports or load each other's flows.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs every rank (rank r on sub-node `sub_nodes[r]`) on a thread.
fn run(
    sub_nodes: Vec<usize>,
    c: Config,
) -> Vec<Result<Option<planner::network::burnin::BurnIn>, provisioner::probe::Error>> {
    let _one = serial();
    let lab = lab();
    let addrs = testkit::ports::loopback(sub_nodes.len());
    let handles: Vec<_> = (0..sub_nodes.len())
        .map(|r| {
            let (lab, subs, c, addrs) = (lab.clone(), sub_nodes.clone(), c.clone(), addrs.clone());
            thread::spawn(move || burnin::run(&Bootstrap::table(r, addrs), &lab, &subs, &c))
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn every_directed_link_is_loaded_once_and_a_healthy_fabric_names_no_cable() {
    let out = run((0..16).collect(), healthy());
    let report = out[0].as_ref().unwrap().as_ref().expect("rank 0 reports");
    assert!(out[1..].iter().all(|r| matches!(r, Ok(None))));
    assert_eq!(report.links, 32, "every directed link of the 16 cables");
    assert_eq!(report.flows.len(), 32);
    assert_eq!(report.rounds, 4);
    assert!(
        report
            .flows
            .iter()
            .all(|f| f.links.len() == 1 && f.measured_kbit > 0)
    );
    assert!(report.slow_cables.is_empty(), "{:?}", report.slow_cables);
}

#[test]
fn flows_below_the_expected_rate_name_their_cables() {
    // Loopback does not reach 1 Tbit/s: every flow is slow, so every
    // cable is named, both directions (25 MB per flow).
    let c = Config {
        seconds: 0.0002,
        ..config(1000.0)
    };
    let out = run((0..16).collect(), c);
    let report = out[0].as_ref().unwrap().as_ref().unwrap();
    assert_eq!(report.slow_cables.len(), 16);
    assert!(report.slow_cables.iter().all(|c| c.directions.len() == 2));
}

#[test]
fn sub_nodes_without_a_rank_leave_their_links_out() {
    // Ranks on the sub-nodes of four switches only: the cables between
    // them are loaded, the others are not.
    let lab = lab();
    let subs: Vec<usize> = (0..lab.hosts.len())
        .filter(|&i| lab.hosts[i].switch < 4)
        .collect();
    let out = run(subs, healthy());
    let report = out[0].as_ref().unwrap().as_ref().unwrap();
    assert!(report.links > 0 && report.links < 32, "{}", report.links);
    assert!(report.slow_cables.is_empty());
}

#[test]
fn bad_settings_are_refused_before_any_connection() {
    let lab = lab();
    let addrs = testkit::ports::loopback(2);
    let boot = Bootstrap::table(0, addrs);
    for (c, want) in [
        (
            Config {
                seconds: 0.0,
                ..config(1.0)
            },
            "seconds",
        ),
        (
            Config {
                threshold: 1.5,
                ..config(1.0)
            },
            "threshold",
        ),
        (
            Config {
                expect_gbps: Some(-1.0),
                ..config(1.0)
            },
            "expect-gbps",
        ),
    ] {
        let e = burnin::run(&boot, &lab, &[0, 1], &c)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(want), "{e}");
    }
    let e = burnin::run(&boot, &lab, &[0], &config(1.0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("one sub-node per rank"), "{e}");
}

/// A rank of another job (another job secret) among the burn-in's ranks
/// (issue #31): the burn-in meets through the probe's authenticated mesh,
/// so that rank is refused, it says it could not prove rank 0's secret,
/// and no rank reports figures: a burn-in that did not measure every
/// flow it planned names no cable.
#[test]
fn a_rank_of_another_job_stops_the_burn_in_with_no_report_issue_31() {
    let _one = serial();
    let lab = lab();
    let addrs = testkit::ports::loopback(16);
    let ours = Secret::new(b"the-job-secret-of-this-burn-in", "test").unwrap();
    let theirs = Secret::new(b"another-job-secret-entirely", "test").unwrap();
    let c = Config {
        timeouts: Timeouts {
            connect: Duration::from_secs(3),
            idle: Duration::from_secs(2),
        },
        ..healthy()
    };
    let handles: Vec<_> = (0..16)
        .map(|r| {
            let key = if r == 5 { theirs.clone() } else { ours.clone() };
            let (lab, c, addrs) = (lab.clone(), c.clone(), addrs.clone());
            thread::spawn(move || {
                let boot = Bootstrap::table(r, addrs).with_secret(key);
                burnin::run(&boot, &lab, &(0..16).collect::<Vec<_>>(), &c)
            })
        })
        .collect();
    let out: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(
        out.iter().all(|r| !matches!(r, Ok(Some(_)))),
        "no rank reports a burn-in"
    );
    let zero = out[0].as_ref().expect_err("rank 0 stops").to_string();
    assert!(zero.contains("rank 5"), "rank 0 names the stranger: {zero}");
    let five = out[5].as_ref().expect_err("rank 5 stops").to_string();
    assert!(
        five.contains("could not prove it holds this run's job secret"),
        "{five}"
    );
}
