//! The collective engine tested in-process over loopback: every rank a thread on 127.0.0.1 with its own port; many ranks, every algorithm, the data check, dead and silent peers, mismatched settings and tables, the step barrier, and the `provisioner probe` binary with torchrun's environment.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use provisioner::probe::{
    self, Algorithm, Bootstrap, Check, Config, Error, NoHook, Report, StepHook, StepPoint, Timeouts,
};

fn config(algorithm: Algorithm, sizes: &[u64]) -> Config {
    Config {
        algorithm,
        sizes: sizes.to_vec(),
        warmup: 1,
        iters: 2,
        check: Check::Every,
        segment: 4096,
        timeouts: Timeouts {
            connect: Duration::from_secs(10),
            idle: Duration::from_secs(10),
        },
        step_barrier: false,
    }
}

/// Runs every rank of `boots` on its own thread with its own config and
/// hook; returns each rank's outcome and how long the slowest took.
fn run_ranks(
    runs: Vec<(Bootstrap, Config, Box<dyn StepHook + Send>)>,
) -> (Vec<Result<Report, Error>>, Duration) {
    let start = Instant::now();
    let handles: Vec<_> = runs
        .into_iter()
        .map(|(boot, config, mut hook)| {
            thread::spawn(move || probe::run(&boot, &config, &mut *hook))
        })
        .collect();
    let out = handles
        .into_iter()
        .map(|h| h.join().expect("no rank panics"))
        .collect();
    (out, start.elapsed())
}

/// Every rank of a table run with one config and no hook.
fn run_world(world: usize, config: &Config) -> Vec<Result<Report, Error>> {
    let addrs = testkit::ports::loopback(world);
    run_ranks(
        (0..world)
            .map(|r| {
                let hook: Box<dyn StepHook + Send> = Box::new(NoHook);
                (Bootstrap::table(r, addrs.clone()), config.clone(), hook)
            })
            .collect(),
    )
    .0
}

#[test]
fn every_algorithm_sums_exactly_on_many_world_sizes() {
    // 4 B (fewer elements than ranks), an odd count, one above the
    // inline limit and segment size, and 1 MiB.
    let sizes = [4, 1028, 65540, 1 << 20];
    for world in [1, 2, 3, 5, 8, 13, 16] {
        for algorithm in [Algorithm::Ring, Algorithm::Hd, Algorithm::Hdrm] {
            let reports = run_world(world, &config(algorithm, &sizes));
            for (rank, r) in reports.iter().enumerate() {
                let r = r.as_ref().unwrap_or_else(|e| {
                    panic!("{} over {world}, rank {rank}: {e}", algorithm.as_str())
                });
                assert_eq!(r.results.len(), sizes.len());
                for s in &r.results {
                    assert_eq!(
                        s.wrong,
                        Some(0),
                        "{} over {world}, rank {rank}, {} B",
                        algorithm.as_str(),
                        s.bytes
                    );
                    assert!(s.time_us >= 0.0 && s.time_us.is_finite());
                }
                let steps = r.results[0].steps.len();
                let expected = match (algorithm, world) {
                    (_, 1) => 0,
                    (Algorithm::Ring, w) => 2 * (w - 1),
                    (_, w) if w.is_power_of_two() => 2 * w.ilog2() as usize,
                    (_, w) => 2 * w.ilog2() as usize + 2,
                };
                assert_eq!(steps, expected, "{} over {world}", algorithm.as_str());
            }
            // Every rank reports the same figures over all ranks.
            let first = reports[0].as_ref().unwrap();
            for r in &reports {
                let r = r.as_ref().unwrap();
                for (a, b) in r.results.iter().zip(&first.results) {
                    assert_eq!(a.time_us, b.time_us);
                }
            }
        }
    }
}

#[test]
fn folded_ranks_move_whole_buffers_and_report_their_steps() {
    let reports = run_world(6, &config(Algorithm::Hd, &[4096]));
    let extra = &reports[5].as_ref().unwrap().results[0].steps;
    assert_eq!(extra[0].phase, "fold");
    assert_eq!(
        (
            extra[0].partner,
            extra[0].sent_bytes,
            extra[0].received_bytes
        ),
        (Some(1), 4096, 0)
    );
    assert_eq!(extra[5].phase, "unfold");
    assert_eq!((extra[5].sent_bytes, extra[5].received_bytes), (0, 4096));
    assert!(extra[1..5].iter().all(|s| s.partner.is_none()));
    let core = &reports[1].as_ref().unwrap().results[0].steps;
    assert_eq!((core[0].partner, core[0].received_bytes), (Some(5), 4096));
    // Reduce-scatter halves what rank 1 sends: 2048, then 1024.
    assert_eq!((core[1].partner, core[1].sent_bytes), (Some(0), 2048));
    assert_eq!((core[2].partner, core[2].sent_bytes), (Some(3), 1024));
}

#[test]
fn the_torchrun_bootstrap_finds_every_rank_through_rank_0() {
    let master = testkit::ports::loopback(1)[0].to_string();
    let c = config(Algorithm::Ring, &[8, 4096]);
    let (out, _) = run_ranks(
        (0..5)
            .map(|r| {
                let hook: Box<dyn StepHook + Send> = Box::new(NoHook);
                (Bootstrap::master(r, 5, master.clone()), c.clone(), hook)
            })
            .collect(),
    );
    for r in out {
        let r = r.unwrap();
        assert_eq!(r.addresses.len(), 5);
        assert_eq!(r.addresses[0], master);
        assert!(r.results.iter().all(|s| s.wrong == Some(0)));
    }
}

/// Adds 1 to one element of the rank's contribution in one iteration.
struct Corrupt {
    iteration: usize,
}

impl StepHook for Corrupt {
    fn between_steps(&mut self, _: &StepPoint) -> std::io::Result<()> {
        Ok(())
    }
    fn filled(&mut self, size_index: usize, iteration: usize, buf: &mut [f32]) {
        if size_index == 1 && iteration == self.iteration {
            buf[3] += 1.0;
            buf[100] = f32::NAN;
        }
    }
}

#[test]
fn a_corrupted_contribution_is_counted_as_wrong_on_every_rank() {
    let addrs = testkit::ports::loopback(4);
    let c = config(Algorithm::Hdrm, &[1024, 1024, 4096]);
    let (out, _) = run_ranks(
        (0..4)
            .map(|r| {
                let hook: Box<dyn StepHook + Send> = if r == 2 {
                    Box::new(Corrupt { iteration: 1 })
                } else {
                    Box::new(NoHook)
                };
                (Bootstrap::table(r, addrs.clone()), c.clone(), hook)
            })
            .collect(),
    );
    for r in out {
        let r = r.unwrap();
        let wrong: Vec<Option<u64>> = r.results.iter().map(|s| s.wrong).collect();
        // Both elements are wrong on all 4 ranks.
        assert_eq!(wrong, [Some(0), Some(8), Some(0)], "rank {}", r.rank);
        assert_eq!(r.results[1].local_wrong, Some(2));
        assert!(probe::report::render(&r, false).contains("# Wrong elements : 8 FAILED"));
    }
}

#[test]
fn a_rank_that_leaves_mid_run_is_named_with_the_step_by_its_partners() {
    let addrs = testkit::ports::loopback(4);
    let mut c = config(Algorithm::Hd, &[4096, 1 << 20, 1 << 20]);
    c.timeouts.idle = Duration::from_secs(3);
    // Rank 2 agrees on the run, then stops after the first size: its
    // sockets close mid-run.
    let mut short = c.clone();
    short.sizes.truncate(1);
    let runs = (0..4)
        .map(|r| {
            let boot = Bootstrap::table(r, addrs.clone());
            let c = c.clone();
            let short = short.clone();
            thread::spawn(move || {
                if r == 2 {
                    let peers = probe::schedule::peers(c.algorithm, 4, 2).unwrap();
                    let mesh = probe::Mesh::establish(
                        2,
                        &boot.peers,
                        &c.fingerprint(4),
                        &peers,
                        None,
                        c.timeouts,
                    )
                    .unwrap();
                    probe::run_on(&mesh, &short, &mut NoHook)
                } else {
                    probe::run(&boot, &c, &mut NoHook)
                }
            })
        })
        .collect::<Vec<_>>();
    let start = Instant::now();
    let out: Vec<_> = runs.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "took {:?}",
        start.elapsed()
    );
    assert!(out[2].is_ok());
    for r in [0, 1, 3] {
        let e = out[r].as_ref().unwrap_err();
        assert!(!e.is_bad_input(), "{e}");
        let text = e.to_string();
        assert!(text.contains("size 1048576 B"), "rank {r}: {text}");
    }
    // Rank 0 notices at the barrier before the next size and tells the
    // others, so that every rank names rank 2.
    for r in [0, 1, 3] {
        let text = out[r].as_ref().unwrap_err().to_string();
        assert!(
            text.contains(&format!("rank 2 ({}) closed the connection", addrs[2])),
            "rank {r}: {text}"
        );
    }
    assert!(
        out[1]
            .as_ref()
            .unwrap_err()
            .to_string()
            .starts_with("rank 0 (")
    );
}

/// Stops answering (keeps its sockets open) from one step on.
struct Stall;

impl StepHook for Stall {
    fn between_steps(&mut self, p: &StepPoint) -> std::io::Result<()> {
        if p.iteration == 1 && p.step == 0 {
            thread::sleep(Duration::from_secs(6));
            return Err(std::io::Error::other("stalled on purpose"));
        }
        Ok(())
    }
}

#[test]
fn a_silent_peer_is_named_after_the_timeout_instead_of_a_hang() {
    // With the step barrier, rank 1 stalls before releasing the others...
    // so give the stall to a rank that is not 0: every rank waits at the
    // barrier for rank 0, and rank 0 waits for rank 1's report.
    let addrs = testkit::ports::loopback(3);
    let mut c = config(Algorithm::Ring, &[4096]);
    c.step_barrier = true;
    c.timeouts.idle = Duration::from_secs(2);
    let (out, took) = run_ranks(
        (0..3)
            .map(|r| {
                let hook: Box<dyn StepHook + Send> = if r == 1 {
                    Box::new(Stall)
                } else {
                    Box::new(NoHook)
                };
                (Bootstrap::table(r, addrs.clone()), c.clone(), hook)
            })
            .collect(),
    );
    assert!(took < Duration::from_secs(12), "took {took:?}");
    let e0 = out[0].as_ref().unwrap_err().to_string();
    assert!(
        e0.starts_with(&format!(
            "rank 1 ({}) moved no data for 2 s in step reduce-scatter 2",
            addrs[1]
        )),
        "{e0}"
    );
    assert!(
        out[1]
            .as_ref()
            .unwrap_err()
            .to_string()
            .contains("the step hook failed")
    );
    assert!(out[2].is_err());
}

fn run_pair_with(
    world: usize,
    tweak: impl Fn(usize, &mut Bootstrap, &mut Config),
) -> Vec<Result<Report, Error>> {
    let addrs = testkit::ports::loopback(world);
    let mut c = config(Algorithm::Hd, &[8, 1024]);
    c.timeouts.connect = Duration::from_secs(3);
    run_ranks(
        (0..world)
            .map(|r| {
                let mut boot = Bootstrap::table(r, addrs.clone());
                let mut c = c.clone();
                tweak(r, &mut boot, &mut c);
                let hook: Box<dyn StepHook + Send> = Box::new(NoHook);
                (boot, c, hook)
            })
            .collect(),
    )
    .0
}

#[test]
fn ranks_started_with_other_settings_are_refused_by_name() {
    type Change = fn(&mut Config);
    let cases: [(&str, Change); 3] = [
        ("runs sizes 8B,2048B (rank 2) but 8B,1024B (rank 0)", |c| {
            c.sizes[1] = 2048
        }),
        ("runs algorithm ring (rank 2) but hd (rank 0)", |c| {
            c.algorithm = Algorithm::Ring
        }),
        ("runs iterations 7 (rank 2) but 2 (rank 0)", |c| c.iters = 7),
    ];
    for (want, change) in cases {
        let out = run_pair_with(4, |r, _, c| {
            if r == 2 {
                change(c);
            }
        });
        for (r, o) in out.iter().enumerate() {
            let e = o.as_ref().unwrap_err();
            assert!(e.is_bad_input(), "rank {r}: {e}");
            assert!(e.to_string().contains(want), "rank {r}: {e}");
        }
        let e0 = out[0].as_ref().unwrap_err().to_string();
        assert!(e0.starts_with("rank 2 (127.0.0.1:"), "{e0}");
        let e2 = out[2].as_ref().unwrap_err().to_string();
        assert!(
            e2.starts_with("rank 0 (127.0.0.1:") && e2.contains("refused this rank"),
            "{e2}"
        );
    }
}

#[test]
fn rank_tables_that_disagree_are_refused() {
    // Rank 1's table has 3 ranks, the others' 2.
    let extra = testkit::ports::loopback(1)[0];
    let out = run_pair_with(2, |r, boot, _| {
        if r == 1 {
            let probe::Peers::Table(a) = &mut boot.peers else {
                unreachable!()
            };
            a.push(extra);
            boot.world = 3;
        }
    });
    let e0 = out[0].as_ref().unwrap_err().to_string();
    assert!(
        e0.contains("runs with world size 3 (rank 1) but 2 (rank 0)"),
        "{e0}"
    );
    assert!(out[1].as_ref().unwrap_err().is_bad_input());
    // A table that gives a rank another address than rank 0's table.
    let other = testkit::ports::loopback(1)[0];
    let out = run_pair_with(3, |r, boot, _| {
        if r == 2 {
            let probe::Peers::Table(a) = &mut boot.peers else {
                unreachable!()
            };
            a[2] = other;
        }
    });
    let e0 = out[0].as_ref().unwrap_err().to_string();
    assert!(
        e0.contains(&format!(
            "listens on {other} but rank 0's rank table gives it"
        )),
        "{e0}"
    );
    // A table whose length is not the world size.
    let mut b = Bootstrap::table(0, testkit::ports::loopback(2));
    b.world = 3;
    let e = probe::run(&b, &config(Algorithm::Hd, &[8]), &mut NoHook).unwrap_err();
    assert_eq!(
        e.to_string(),
        "world-size: the rank table has 2 ranks but the world size is 3"
    );
}

#[test]
fn an_unreachable_rank_0_and_missing_ranks_are_named_within_the_timeout() {
    let addrs = testkit::ports::loopback(3);
    let mut c = config(Algorithm::Ring, &[8]);
    c.timeouts.connect = Duration::from_secs(1);
    let start = Instant::now();
    let e = probe::run(&Bootstrap::table(1, addrs.clone()), &c, &mut NoHook).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(4));
    assert!(!e.is_bad_input());
    assert!(
        e.to_string()
            .starts_with(&format!("cannot reach rank 0 at {} within 1 s", addrs[0])),
        "{e}"
    );
    let e = probe::run(&Bootstrap::table(0, addrs.clone()), &c, &mut NoHook).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "no connection from ranks 1, 2 within 1 s (listening on {})",
            addrs[0]
        )
    );
}

#[test]
fn the_step_barrier_lets_a_controller_see_every_step_on_a_unix_socket() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sync.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let controller = thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        let mut lines = Vec::new();
        let mut r = BufReader::new(s.try_clone().unwrap());
        let mut w = s;
        let mut line = String::new();
        while r.read_line(&mut line).unwrap() > 0 {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            lines.push(v);
            line.clear();
            writeln!(w, "go").unwrap();
        }
        lines
    });
    let addrs = testkit::ports::loopback(4);
    let mut c = config(Algorithm::Hdrm, &[1024]);
    c.step_barrier = true;
    let (out, _) = run_ranks(
        (0..4)
            .map(|r| {
                let hook: Box<dyn StepHook + Send> =
                    Box::new(probe::stepsync::UnixStepSync::connect(&path, r).unwrap());
                (Bootstrap::table(r, addrs.clone()), c.clone(), hook)
            })
            .collect(),
    );
    for o in &out {
        assert_eq!(o.as_ref().unwrap().results[0].wrong, Some(0));
    }
    drop(out);
    let lines = controller.join().unwrap();
    // 3 iterations (1 warm-up) of 4 steps, in order.
    assert_eq!(lines.len(), 12);
    let names: Vec<&str> = lines[..4]
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "reduce-scatter 1",
            "reduce-scatter 2",
            "all-gather 1",
            "all-gather 2"
        ]
    );
    assert_eq!(lines[5]["partner"], 2);
    assert_eq!(lines[11]["iteration"], 2);
}

/// `provisioner probe` with the flags of `args` (split at spaces).
fn probe(args: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_provisioner"));
    c.arg("probe").args(args.split_whitespace());
    // Every rank of a run shares one job secret.
    c.env("PROBE_TOKEN", "cli-test-job-secret-0123456789");
    c
}

#[test]
fn cli_ranks_meet_through_torchrun_environment_and_rank_0_prints_the_table() {
    let port = testkit::ports::loopback(1)[0].port();
    let children: Vec<_> = (0..3)
        .map(|r| {
            probe("--algorithm ring --size 8B..4KiB --warmup 1 --iters 3 --connect-timeout 20")
                .env("RANK", r.to_string())
                .env("WORLD_SIZE", "3")
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", port.to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    for (r, o) in outs.iter().enumerate() {
        assert!(
            o.status.success(),
            "rank {r}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let table = String::from_utf8(outs[0].stdout.clone()).unwrap();
    assert!(
        table.starts_with("# provisioner probe: allreduce, f32 sum, algorithm ring, 3 ranks"),
        "{table}"
    );
    let rows: Vec<Vec<&str>> = table
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 10, "{table}");
    assert_eq!(rows[0][..4], ["8", "2", "float", "sum"]);
    assert_eq!(rows[9][..4], ["4096", "1024", "float", "sum"]);
    assert!(rows.iter().all(|r| r[7] == "0"), "{table}");
    assert!(table.contains("# Wrong elements : 0 OK"));
    assert!(outs[1].stdout.is_empty() && outs[2].stdout.is_empty());
}

#[test]
fn cli_bad_input_exits_2_naming_the_flag() {
    let o = probe("--size 6B --rank 0 --world-size 1 --master-addr 127.0.0.1 --master-port 1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("error: --size: 6 B: every size must be a positive multiple of 4 bytes"),
        "{err}"
    );
    let o = probe("--world-size 2 --master-addr 127.0.0.1 --master-port 1")
        .env_remove("RANK")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no rank: give --rank or set RANK"));
}

#[test]
fn cli_a_killed_rank_makes_the_others_exit_1_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts.csv");
    let addrs = testkit::ports::loopback(3);
    let text: String = std::iter::once("rank,address\n".to_string())
        .chain(addrs.iter().enumerate().map(|(r, a)| format!("{r},{a}\n")))
        .collect();
    std::fs::write(&hosts, text).unwrap();
    let mut children: Vec<_> = (0..3)
        .map(|r| {
            probe("--algorithm ring --size 4MiB --warmup 0 --iters 100000 --check off --timeout 5 --connect-timeout 10")
                .arg("--hosts")
                .arg(&hosts)
                .args(["--rank", &r.to_string()])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    thread::sleep(Duration::from_secs(3));
    children[1].kill().unwrap();
    let start = Instant::now();
    let mut errors = Vec::new();
    for (r, c) in children.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        if r != 1 {
            assert_eq!(o.status.code(), Some(1), "rank {r}");
            errors.push(String::from_utf8_lossy(&o.stderr).to_string());
        }
    }
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "took {:?}",
        start.elapsed()
    );
    // Ring: rank 0 sends to rank 1 and rank 2 receives from it, so the
    // first survivor to notice names rank 1; the other may notice the
    // first one's exit before rank 1's death (rank 0 also receives from
    // rank 2, rank 2 also sends to rank 0) and name it instead. Which one
    // is first depends on scheduling, not on the engine.
    let named = |e: &str, r: usize| e.contains(&format!("rank {r} ({})", addrs[r]));
    assert!(errors.iter().any(|e| named(e, 1)), "{errors:?}");
    for (e, other) in errors.iter().zip([2, 0]) {
        assert!(named(e, 1) || named(e, other), "{e}");
        assert!(
            e.contains(" in step ") && e.starts_with("error: rank "),
            "{e}"
        );
    }
}

#[test]
fn a_planner_rank_table_gives_each_rank_its_sub_node_address_in_the_plan() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let text =
        std::fs::read_to_string(format!("{dir}/../examples/data/eflops-4x16.plan.json")).unwrap();
    let plan = planner::checked::CheckedPlan::load(&text, "plan.json").unwrap();
    let table = "rank,server,sub_node\n0,node01,sn1\n1,node01,sn0\n";
    let (algorithm, addrs) =
        probe::bootstrap::read_plan_table(table, "t.csv", &plan, 29500).unwrap();
    assert_eq!(algorithm, None);
    assert_eq!(
        addrs,
        [
            "10.100.1.2:29500".parse().unwrap(),
            "10.100.1.1:29500".parse().unwrap()
        ]
    );
    let e = probe::bootstrap::read_plan_table(
        "rank,server,sub_node\n0,nodeXX,sn0\n",
        "t.csv",
        &plan,
        1,
    )
    .unwrap_err();
    assert!(e.is_bad_input());
    assert!(
        format!("{e}: {}", std::error::Error::source(&e).unwrap())
            .contains("nodeXX sn0 is not a sub-node"),
        "{e}"
    );
}
