use std::io;

use super::Error;
use crate::{lab, probe, push::PushError};

/// The exit code a binary gives for `e` when it reaches it through the
/// tree: 2 for bad input, 1 for a failure.
fn exit_code(e: impl Into<Error>) -> u8 {
    if e.into().is_bad_input() { 2 } else { 1 }
}

fn s(text: &str) -> String {
    text.to_string()
}

fn io_error() -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionReset, "reset by peer")
}

/// A bad-input and an internal error of the planner, as subsystems
/// carry them.
fn planner_bad() -> Box<planner::Error> {
    Box::new(planner::Error::parameter("ranks", "0 is not a rank count"))
}

/// Each case: the error, the exit code its subsystem's own
/// `is_bad_input` gives, and so the one the tree must give.
#[test]
fn every_probe_error_keeps_its_exit_code_through_the_tree() {
    let cases: Vec<(probe::Error, u8)> = vec![
        (probe::Error::parameter("size", "0 B is no size"), 2),
        (
            probe::Error::Table {
                file: s("ranks.csv"),
                message: s("rank 3 twice"),
            },
            2,
        ),
        (
            probe::Error::RankFile {
                file: s("ranks.csv"),
                source: planner_bad(),
            },
            2,
        ),
        (
            probe::Error::Schedule {
                algorithm: s("hdrm"),
                ranks: 3,
                source: planner_bad(),
            },
            2,
        ),
        (
            probe::Error::Mismatch {
                rank: s("1"),
                addr: s("10.0.0.2:29500"),
                message: s("runs with --size 1MB"),
            },
            2,
        ),
        (
            probe::Error::Refused {
                rank: 0,
                addr: s("10.0.0.1:29500"),
                reason: s("world size 4, not 8"),
            },
            2,
        ),
        (
            probe::Error::Protocol {
                rank: 2,
                addr: s("10.0.0.3:29500"),
                step: s("the hello"),
                message: s("a frame of 9 GB"),
            },
            1,
        ),
        (
            probe::Error::Unauthenticated {
                rank: 2,
                addr: s("10.0.0.3:29500"),
                step: s("the hello"),
            },
            2,
        ),
        (
            probe::Error::Unreachable {
                rank: 1,
                addr: s("10.0.0.2:29500"),
                seconds: 30,
                source: io_error(),
            },
            1,
        ),
        (
            probe::Error::Missing {
                ranks: vec![2, 3],
                listen: s("0.0.0.0:29500"),
                seconds: 30,
                refused: Vec::new(),
            },
            1,
        ),
        (
            probe::Error::Peer {
                rank: 1,
                addr: s("10.0.0.2:29500"),
                what: s("closed the connection"),
                step: s("step 3"),
                source: io_error(),
            },
            1,
        ),
        (
            probe::Error::Stopped {
                addr: s("10.0.0.1:29500"),
                reason: s("rank 2 failed"),
            },
            1,
        ),
        (
            probe::Error::Listen {
                addr: s("0.0.0.0:29500"),
                source: io_error(),
            },
            1,
        ),
        (
            probe::Error::Hook {
                step: s("step 1"),
                source: io_error(),
            },
            1,
        ),
        (probe::Error::Internal(s("no buffer")), 1),
    ];
    for (e, code) in cases {
        let name = format!("{e:?}");
        assert_eq!(u8::from(e.is_bad_input()) + 1, code, "probe itself: {name}");
        assert_eq!(exit_code(e), code, "through the tree: {name}");
    }
}

#[test]
fn every_lab_error_keeps_its_exit_code_through_the_tree() {
    let cases: Vec<(lab::Error, u8)> = vec![
        (
            lab::Error::parameter("rate", "give a rate such as 100mbit"),
            2,
        ),
        (
            lab::Error::Missing {
                what: s("ip"),
                fix: s("install iproute2"),
            },
            2,
        ),
        (
            lab::Error::Plan {
                file: s("plan.json"),
                source: planner_bad(),
            },
            2,
        ),
        (
            lab::Error::AlreadyUp {
                name: s("lab"),
                state: s("/run/lab.json"),
            },
            2,
        ),
        (
            lab::Error::Leftover {
                name: s("lab"),
                namespace: s("efl-lab-h0"),
                state_dir: s("/run"),
            },
            2,
        ),
        (
            lab::Error::NotUp {
                name: s("lab"),
                state: s("/run/lab.json"),
            },
            2,
        ),
        (lab::Error::NotReady { name: s("lab") }, 2),
        (
            lab::Error::State {
                file: s("/run/lab.json"),
                message: s("not JSON"),
            },
            2,
        ),
        (
            lab::Error::Unknown {
                what: s("link"),
                message: s("no cable s0-l1"),
            },
            2,
        ),
        (
            lab::Error::Planner {
                what: s("the lab's schedule"),
                source: planner_bad(),
            },
            2,
        ),
        (
            lab::Error::Foreign {
                file: s("/run/lab.json"),
                object: s("namespace decoy"),
                why: s("it carries no mark of this lab"),
            },
            2,
        ),
        (
            lab::Error::Command {
                command: s("ip netns add"),
                message: s("exit status 1"),
            },
            1,
        ),
        (
            lab::Error::Rank {
                rank: 0,
                sub_node: s("node01/0"),
                namespace: s("efl-lab-h0"),
                message: s("exit status 1"),
            },
            1,
        ),
        (
            lab::Error::Io {
                what: s("writing the state file"),
                source: io_error(),
            },
            1,
        ),
    ];
    for (e, code) in cases {
        let name = format!("{e:?}");
        assert_eq!(u8::from(e.is_bad_input()) + 1, code, "lab itself: {name}");
        assert_eq!(exit_code(e), code, "through the tree: {name}");
    }
}

/// A refused workload whose Secret could not be deleted: the refusal's
/// exit code, and the Secret named with the command that deletes it.
#[test]
fn an_orphaned_secret_keeps_the_refusals_exit_code_and_is_named() {
    let refused = Error::BadObject {
        object: s("Job ml/ar32"),
        message: s("has no metadata"),
    };
    let e = Error::Orphaned {
        refused: Box::new(refused),
        secret: s("Secret ml/ar32-probe-token"),
        name: s("ar32-probe-token"),
        namespace: s("ml"),
        why: s("connection reset"),
    };
    let text = e.to_string();
    assert!(
        text.contains("kubectl delete secret ar32-probe-token -n ml"),
        "{text}"
    );
    assert!(std::error::Error::source(&e).is_some());
    assert_eq!(exit_code(e), 1);
}

#[test]
fn every_sot_error_keeps_its_exit_code_through_the_tree() {
    let url = || s("http://127.0.0.1:8089/api/dcim/devices/");
    let cases: Vec<(crate::sot::SotError, u8)> = vec![
        (
            crate::sot::SotError::Parameter {
                parameter: s("url"),
                message: s("give http:// or https://"),
            },
            2,
        ),
        (
            crate::sot::SotError::Token {
                message: s("the token file is empty"),
            },
            2,
        ),
        (
            crate::sot::SotError::Auth {
                url: url(),
                status: 403,
                detail: s("Invalid token"),
            },
            2,
        ),
        (
            crate::sot::SotError::Transport {
                action: s("listing devices"),
                url: url(),
                message: s("connection refused"),
                source: None,
            },
            1,
        ),
        (
            crate::sot::SotError::Api {
                action: s("listing devices"),
                url: url(),
                message: s("HTTP 500"),
            },
            1,
        ),
        (
            crate::sot::SotError::Refused {
                what: s("importing"),
                problems: vec![s("device sw1: no device type")],
            },
            2,
        ),
        (
            crate::sot::SotError::Outcome {
                message: s("2 cabling findings"),
            },
            2,
        ),
        (crate::sot::SotError::Inventory(planner_bad()), 2),
        (
            crate::sot::SotError::Io {
                action: s("writing inventory.toml"),
                source: io_error(),
            },
            2,
        ),
    ];
    for (e, code) in cases {
        let name = format!("{e:?}");
        assert_eq!(u8::from(e.is_bad_input()) + 1, code, "sot itself: {name}");
        assert_eq!(exit_code(e), code, "through the tree: {name}");
    }
}

#[test]
fn every_push_error_keeps_its_exit_code_through_the_tree() {
    let bad = || PushError::Locked { by: s("admin") };
    let failed = || PushError::Timeout {
        action: s("commit"),
        seconds: 60,
    };
    let cases: Vec<(PushError, u8)> = vec![
        (
            PushError::Parameter {
                parameter: s("batch"),
                message: s("give at least 1"),
            },
            2,
        ),
        (
            PushError::DevicesSyntax {
                file: s("devices.toml"),
                line: 3,
                column: 1,
                message: s("expected `=`"),
            },
            2,
        ),
        (
            PushError::Devices {
                file: s("devices.toml"),
                problems: vec![(4, s("leaf9 is not in the plan"))],
            },
            2,
        ),
        (
            PushError::Credentials {
                switch: s("leaf1"),
                message: s("PUSH_PASSWORD is not set"),
            },
            2,
        ),
        (
            PushError::Plan {
                file: s("plan.json"),
                source: planner_bad(),
            },
            2,
        ),
        (
            PushError::Journal {
                file: s("push.journal"),
                message: s("belongs to another plan"),
                source: None,
            },
            2,
        ),
        (bad().on("leaf1"), 2),
        (failed().on("leaf1"), 1),
        (
            PushError::Unreachable {
                address: s("10.0.0.9:443"),
                hint: s("check the address"),
                source: Box::new(io_error()),
            },
            2,
        ),
        (
            PushError::Auth {
                address: s("10.0.0.9:443"),
                user: s("admin"),
            },
            2,
        ),
        (
            PushError::HostKey {
                address: s("10.0.0.9:22"),
                message: s("the key changed"),
            },
            2,
        ),
        (bad(), 2),
        (
            PushError::Rejected {
                message: s("bad syntax"),
            },
            2,
        ),
        (
            PushError::Identity {
                expected: s("leaf1"),
                found: s("leaf2"),
            },
            2,
        ),
        (
            PushError::Verify {
                mismatches: vec![s("swp1 is down")],
            },
            2,
        ),
        (
            PushError::Protocol {
                action: s("load"),
                message: s("no revision"),
            },
            1,
        ),
        (
            PushError::Transport {
                action: s("load"),
                source: Box::new(io_error()),
            },
            1,
        ),
        (failed(), 1),
        (
            PushError::TimerExpired {
                point: s("revision 4"),
            },
            1,
        ),
        (
            PushError::Rollback {
                point: s("revision 4"),
                cause: s("verification failed"),
                source: Box::new(failed()),
            },
            1,
        ),
        (
            PushError::Io {
                action: s("starting the watchdog"),
                source: io_error(),
            },
            1,
        ),
    ];
    for (e, code) in cases {
        let name = format!("{e:?}");
        assert_eq!(u8::from(e.is_bad_input()) + 1, code, "push itself: {name}");
        assert_eq!(exit_code(e), code, "through the tree: {name}");
    }
}

#[test]
fn planner_errors_keep_their_exit_code_through_the_tree() {
    assert_eq!(exit_code(*planner_bad()), 2);
    let internal = planner::Error::Internal(s("no route"));
    assert!(!internal.is_bad_input());
    assert_eq!(exit_code(internal), 1);
}

/// Every subsystem's parameter error comes out as the planner's, which
/// the binary shows with its flag (`--size`), and exits 2.
#[test]
fn parameter_errors_of_every_subsystem_become_the_planners() {
    let trees: Vec<Error> = vec![
        probe::Error::parameter("size", "m").into(),
        lab::Error::parameter("size", "m").into(),
        PushError::Parameter {
            parameter: s("size"),
            message: s("m"),
        }
        .into(),
    ];
    for e in trees {
        assert!(
            matches!(
                &e,
                Error::Plan(planner::Error::Parameter { parameter, message })
                    if parameter == "size" && message == "m"
            ),
            "{e:?}"
        );
        assert!(e.is_bad_input());
        let shown = planner::error::display_chain(
            match &e {
                Error::Plan(p) => p,
                other => other,
            },
            &|p| Some(format!("--{p}")),
        );
        assert_eq!(shown, "--size: m");
    }
}
