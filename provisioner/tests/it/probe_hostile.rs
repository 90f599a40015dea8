//! The collective engine against hostile peers (issue #31): raw TCP clients on loopback that speak the probe's wire protocol, or almost: an empty figures vector, a forged figure, a wrong job secret, a rank outside the world, a second copy of a rank, junk and a peer that trickles bytes. Each is refused with the exact reason, the waits stay within the timeouts, and rank 0 never reports a figure it did not measure.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use provisioner::probe::{
    self, Algorithm, Bootstrap, Check, Config, Error, NoHook, Report, Secret, Timeouts,
};
use serde_json::{Value, json};

const MAGIC: &[u8] = b"EFLOPS-PROBE";

fn secret() -> Secret {
    Secret::new(b"the-job-secret-of-this-test-run", "test").unwrap()
}

/// 8 bytes (two f32), halving-doubling, one timed iteration, checked.
fn config(connect: u64, idle: u64) -> Config {
    Config {
        algorithm: Algorithm::Hd,
        sizes: vec![8],
        warmup: 0,
        iters: 1,
        check: Check::Every,
        segment: 4096,
        timeouts: Timeouts {
            connect: Duration::from_secs(connect),
            idle: Duration::from_secs(idle),
        },
        step_barrier: false,
    }
}

/// Rank 0 of `world` on its own thread, with the test's secret.
fn rank0(
    addrs: &[SocketAddr],
    c: &Config,
) -> thread::JoinHandle<(Result<Report, Error>, Duration)> {
    let boot = Bootstrap::table(0, addrs.to_vec()).with_secret(secret());
    let c = c.clone();
    thread::spawn(move || {
        let start = Instant::now();
        let r = probe::run(&boot, &c, &mut NoHook);
        (r, start.elapsed())
    })
}

fn write_frame(s: &mut TcpStream, v: &Value) {
    let body = serde_json::to_vec(v).unwrap();
    s.write_all(&(body.len() as u32).to_le_bytes()).unwrap();
    s.write_all(&body).unwrap();
}

fn read_frame(s: &mut TcpStream) -> Value {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).unwrap();
    let mut body = vec![0u8; u32::from_le_bytes(len) as usize];
    s.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(t: &str) -> Vec<u8> {
    (0..t.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&t[i..i + 2], 16).unwrap())
        .collect()
}

/// A raw client that connects to `to` and says hello as `rank` (control
/// connection or data lane), proving `key`; returns the socket and rank
/// 0's first answer after the handshake (or its refusal).
struct Raw {
    s: TcpStream,
}

impl Raw {
    fn hello(
        to: SocketAddr,
        rank: usize,
        listen: &str,
        control: bool,
        lane: u8,
        fingerprint: &probe::Fingerprint,
        key: &Secret,
    ) -> (Raw, Value) {
        let mut s = connect(to);
        let nonce = [7u8; 32];
        let hello = json!({"hello": {
            "version": 2, "endian": "little", "control": control, "rank": rank,
            "listen": listen, "lane": lane, "fingerprint": fingerprint,
            "auth": true, "nonce": hex(&nonce),
        }});
        let body = serde_json::to_vec(&hello).unwrap();
        s.write_all(MAGIC).unwrap();
        s.write_all(&(body.len() as u32).to_le_bytes()).unwrap();
        s.write_all(&body).unwrap();
        let answer = read_frame(&mut s);
        let Some(ch) = answer.get("challenge") else {
            return (Raw { s }, answer);
        };
        let theirs = unhex(ch["nonce"].as_str().unwrap());
        // The same HMAC a rank computes: whoever holds `key` can answer.
        let proof = key.connect_proof(&nonce, &theirs, &body);
        write_frame(&mut s, &json!({"proof": hex(&proof)}));
        let next = read_frame(&mut s);
        (Raw { s }, next)
    }
}

fn connect(to: SocketAddr) -> TcpStream {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        match TcpStream::connect(to) {
            Ok(s) => {
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                return s;
            }
            Err(e) if Instant::now() > until => panic!("{to}: {e}"),
            Err(_) => thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Plays rank 1 of two, by the protocol, up to the gathering of the
/// results, where it sends `figures` (f64 bits) instead of its own.
fn rank1_that_sends(addrs: &[SocketAddr], c: &Config, figures: Vec<u64>) {
    let fp = c.fingerprint(2);
    let listener = TcpListener::bind(addrs[1]).unwrap();
    let (mut ctl, table) = Raw::hello(addrs[0], 1, &addrs[1].to_string(), true, 0, &fp, &secret());
    assert!(table.get("table").is_some(), "{table}");
    // Both data lanes to rank 0: lane 0 rank 1 sends on, lane 1 it
    // receives on.
    let (mut out, w) = Raw::hello(addrs[0], 1, "", false, 0, &fp, &secret());
    assert_eq!(w, json!("welcome"));
    let (mut inn, w) = Raw::hello(addrs[0], 1, "", false, 1, &fp, &secret());
    assert_eq!(w, json!("welcome"));
    drop(listener);
    // The barrier after the fill: no figures.
    write_frame(&mut ctl.s, &json!({"local": []}));
    assert!(read_frame(&mut ctl.s).get("global").is_some());
    // Halving-doubling over two ranks, two floats: one float each way in
    // the reduce-scatter, one each way in the all-gather.
    for _ in 0..2 {
        out.s.write_all(&1f32.to_ne_bytes()).unwrap();
        let mut got = [0u8; 4];
        inn.s.read_exact(&mut got).unwrap();
    }
    write_frame(&mut ctl.s, &json!({ "local": figures }));
    // Rank 0 stops the run and says why.
    let stop = read_frame(&mut ctl.s);
    assert!(stop.get("stop").is_some(), "{stop}");
}

fn gathering_refuses(figures: Vec<u64>, expected: &str) {
    let addrs = testkit::ports::loopback(2);
    let c = config(10, 5);
    let zero = rank0(&addrs, &c);
    rank1_that_sends(&addrs, &c, figures);
    let (r, _) = zero.join().expect("rank 0 does not panic");
    let e = r.expect_err("rank 0 reports no figures it did not measure");
    assert!(matches!(e, Error::Protocol { rank: 1, .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "rank 1 ({}) broke the probe protocol in the gathering of the results of size 8 B: {expected}",
            addrs[1]
        )
    );
}

#[test]
fn an_empty_figures_vector_at_the_gathering_stops_the_run_naming_the_rank() {
    gathering_refuses(vec![], "sent 0 figures where 2 were due");
}

#[test]
fn a_forged_figure_at_the_gathering_is_no_measurement() {
    gathering_refuses(
        vec![(-5e11f64).to_bits(), 0f64.to_bits()],
        "sent the figure -500000000000, which is no measurement (a finite number of 0 or more, or -1 for none)",
    );
    gathering_refuses(
        vec![f64::NAN.to_bits(), 0f64.to_bits()],
        "sent the figure NaN, which is no measurement (a finite number of 0 or more, or -1 for none)",
    );
}

/// Strangers come and go while rank 0 waits; each is refused with its
/// reason and the run of the two real ranks goes on.
#[test]
fn strangers_are_refused_alone_and_the_run_goes_on() {
    let addrs = testkit::ports::loopback(2);
    let c = config(15, 2);
    let fp = c.fingerprint(2);
    let zero = rank0(&addrs, &c);
    // A wrong secret: rank 0 proves its own, then refuses the peer's proof.
    let other = Secret::new(b"another-job-secret-entirely", "test").unwrap();
    let (_, answer) = Raw::hello(addrs[0], 1, &addrs[1].to_string(), true, 0, &fp, &other);
    assert_eq!(
        answer,
        json!({"refused": "failed authentication: it does not hold this run's job secret"})
    );
    // A rank outside the world, with the right secret.
    let (_, answer) = Raw::hello(addrs[0], 5, "127.0.0.1:9", true, 0, &fp, &secret());
    assert_eq!(
        answer,
        json!({"refused": "claims rank 5 of 2 ranks, but rank 0 is this one and the run has ranks 0 to 1"})
    );
    // Junk, then a peer that says nothing and closes.
    let mut junk = connect(addrs[0]);
    junk.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    drop(junk);
    drop(connect(addrs[0]));
    // The real rank 1.
    let boot = Bootstrap::table(1, addrs.clone()).with_secret(secret());
    let one = probe::run(&boot, &c, &mut NoHook).expect("rank 1 runs");
    let (r, took) = zero.join().unwrap();
    let r = r.expect("rank 0 runs");
    assert_eq!(r.results[0].wrong, Some(0));
    assert_eq!(one.results[0].time_us, r.results[0].time_us);
    assert!(took < Duration::from_secs(15), "{took:?}");
}

#[test]
fn a_duplicate_rank_is_refused_while_the_first_waits() {
    let addrs = testkit::ports::loopback(3);
    let c = config(4, 2);
    let fp = c.fingerprint(3);
    let zero = rank0(&addrs, &c);
    let (to, a1, fp1) = (addrs[0], addrs[1].to_string(), fp.clone());
    // The first copy is accepted and waits for the address table.
    let first = thread::spawn(move || Raw::hello(to, 1, &a1, true, 0, &fp1, &secret()).1);
    // Let the first copy through the handshake before the second comes.
    thread::sleep(Duration::from_millis(500));
    let (_, answer) = Raw::hello(addrs[0], 1, "127.0.0.1:7", true, 0, &fp, &secret());
    assert_eq!(
        answer,
        json!({"refused": format!("claims rank 1, which rank 1 at {} has already", addrs[1])})
    );
    // Rank 2 never comes: the run ends at the connect timeout, and the
    // error names the refused copy among the reasons.
    let (r, took) = zero.join().unwrap();
    let e = r.unwrap_err().to_string();
    assert!(e.starts_with("no connection from rank 2 within 4 s"), "{e}");
    assert!(e.contains("refused meanwhile: 127.0.0.1:"), "{e}");
    assert!(e.contains("claims rank 1, which rank 1 at"), "{e}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(
        first.join().unwrap(),
        json!({"refused": "the run is refused: not every rank connected"})
    );
}

/// A connection that trickles its hello a byte at a time holds rank 0 no
/// longer than the idle timeout per try, and the whole wait ends at the
/// connect timeout.
#[test]
fn a_trickling_peer_gains_no_time() {
    let addrs = testkit::ports::loopback(2);
    let c = config(3, 1);
    let zero = rank0(&addrs, &c);
    let to = addrs[0];
    let trickle = thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(8);
        let mut tries = 0;
        while Instant::now() < until {
            let Ok(mut s) = TcpStream::connect(to) else {
                // Rank 0 is not listening yet, or no longer.
                thread::sleep(Duration::from_millis(50));
                continue;
            };
            tries += 1;
            for b in MAGIC.iter().cycle() {
                if Instant::now() > until || s.write_all(&[*b]).is_err() {
                    break;
                }
                thread::sleep(Duration::from_millis(300));
            }
        }
        tries
    });
    let (r, took) = zero.join().unwrap();
    let e = r.unwrap_err();
    assert!(matches!(e, Error::Missing { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("sent no whole message within 1 s"), "{text}");
    assert!(
        took < Duration::from_millis(3_800),
        "rank 0 took {took:?} with --connect-timeout 3"
    );
    assert!(trickle.join().unwrap() >= 1);
}

/// Rank 0 listens on the address it was given, not on every address of
/// the machine.
#[test]
fn rank_0_listens_on_master_addr_only() {
    let port = testkit::ports::loopback(1)[0].port();
    let c = config(2, 1);
    let boot = Bootstrap::master(0, 2, format!("127.0.0.1:{port}")).with_secret(secret());
    let zero = thread::spawn(move || probe::run(&boot, &c, &mut NoHook));
    thread::sleep(Duration::from_millis(300));
    // 127.0.0.2 is this machine too (all of 127/8 is loopback).
    let other: SocketAddr = format!("127.0.0.2:{port}").parse().unwrap();
    let e = TcpStream::connect_timeout(&other, Duration::from_secs(1)).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused, "{e}");
    assert!(TcpStream::connect(("127.0.0.1", port)).is_ok());
    assert!(zero.join().unwrap().is_err());
}

/// A rank whose secret differs cannot check rank 0's proof: it stops,
/// saying so, and rank 0 names it among the refusals.
#[test]
fn ranks_with_different_secrets_name_each_other() {
    let addrs = testkit::ports::loopback(2);
    let c = config(2, 1);
    let zero = rank0(&addrs, &c);
    let other = Secret::new(b"another-job-secret-entirely", "test").unwrap();
    let boot = Bootstrap::table(1, addrs.clone()).with_secret(other);
    let e = probe::run(&boot, &c, &mut NoHook).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "rank 0 at {} could not prove it holds this run's job secret in the bootstrap: it belongs to another run or was given another secret; give every rank the same --token-file or PROBE_TOKEN",
            addrs[0]
        )
    );
    assert!(e.is_bad_input());
    let e = zero.join().unwrap().0.unwrap_err().to_string();
    assert!(
        e.contains("refused this rank's proof of the job secret"),
        "{e}"
    );
    // Without any secret on one side, the other says what is missing.
    let addrs = testkit::ports::loopback(2);
    let zero = rank0(&addrs, &c);
    let e = probe::run(&Bootstrap::table(1, addrs.clone()), &c, &mut NoHook).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "rank 0 ({}) refused this rank: gave no job secret but this rank runs with one; give every rank the same secret (--token-file or PROBE_TOKEN)",
            addrs[0]
        )
    );
    assert!(zero.join().unwrap().0.is_err());
}

/// A hello far larger than any rank's is refused before it is read whole.
#[test]
fn an_oversized_hello_is_refused_unread() {
    let addrs = testkit::ports::loopback(2);
    let c = config(2, 1);
    let zero = rank0(&addrs, &c);
    let mut s = connect(addrs[0]);
    s.write_all(MAGIC).unwrap();
    s.write_all(&u32::MAX.to_le_bytes()).unwrap();
    let e = zero.join().unwrap().0.unwrap_err().to_string();
    assert!(
        e.contains("sent a message of 4294967295 bytes; at most"),
        "{e}"
    );
}

/// Without a job secret a rank run by hand runs unauthenticated and warns,
/// saying where to give one; a rank of a submitted job
/// (`EFLOPS_PROBE_AUTH=required`, which `provisioner submit` sets) is
/// refused; a bad secret exits 2 and is never printed.
#[test]
fn cli_without_a_job_secret_warns_saying_where_to_give_one() {
    let run_with = |env: Option<&str>, file: Option<&std::path::Path>, auth: Option<&str>| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_provisioner"));
        c.args([
            "probe",
            "--rank",
            "0",
            "--world-size",
            "1",
            "--master-addr",
            "127.0.0.1",
            "--master-port",
            "0",
            "--size",
            "8B",
        ]);
        c.env_remove("PROBE_TOKEN").env_remove("EFLOPS_PROBE_AUTH");
        if let Some(a) = auth {
            c.env("EFLOPS_PROBE_AUTH", a);
        }
        if let Some(t) = env {
            c.env("PROBE_TOKEN", t);
        }
        if let Some(f) = file {
            c.arg("--token-file").arg(f);
        }
        c.output().unwrap()
    };
    let run = |env: Option<&str>, file: Option<&std::path::Path>| run_with(env, file, None);
    let out = run(None, None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: no job secret, so peers are not authenticated: give --token-file FILE or set PROBE_TOKEN"),
        "{err}"
    );
    let out = run_with(None, None, Some("required"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("EFLOPS_PROBE_AUTH=required says this rank belongs to a job submitted with a job secret, but PROBE_TOKEN is not set"),
        "{err}"
    );
    let out = run_with(None, None, Some("yes"));
    assert_eq!(out.status.code(), Some(2));
    // With the secret, a submitted job's rank runs.
    let out = run_with(
        Some("a-submitted-job-secret-0123456789"),
        None,
        Some("required"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(Some("short"), None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("PROBE_TOKEN: the job secret has 5 bytes"),
        "{err}"
    );
    assert!(!err.contains("short"), "the secret was printed: {err}");
    let dir = tempfile::tempdir().unwrap();
    let out = run(None, Some(dir.path()));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a regular file"), "{err}");
    // A good secret from a file: the one-rank run goes through and its
    // output holds no byte of the secret.
    let f = dir.path().join("token");
    std::fs::write(&f, "a-secret-nobody-may-see-0123456789\n").unwrap();
    let out = run(None, Some(&f));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = [out.stdout, out.stderr].concat();
    assert!(!String::from_utf8_lossy(&all).contains("nobody-may-see"));
}
