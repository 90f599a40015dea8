//! The SSH switch clients (SONiC, Comware) against test servers on
//! loopback that follow the vendors' documentation (`support/`): the exact
//! commands each scenario sends, and the state the device ends in.

#[path = "../support/comware_server.rs"]
pub(crate) mod comware_server;
#[path = "../support/sonic_server.rs"]
pub(crate) mod sonic_server;
#[path = "../support/ssh_server.rs"]
pub(crate) mod ssh_server;

use std::path::PathBuf;
use std::time::Duration;

use planner::render::Vendor;
use provisioner::push::comware::{Comware, ComwareOptions};
use provisioner::push::sonic::{self, Sonic};
use provisioner::push::ssh::{Ssh, SshOptions};
use provisioner::push::{
    BgpSession, Device, HostKeyCheck, Interface, LldpNeighbour, PushError, Route, Secret, Target,
    Tls, Transport,
};
use serde_json::{Value, json};

use comware_server::ComwareState;
use sonic_server::SonicState;
use ssh_server::{Script, TestServer};

pub(crate) const USER: &str = "admin";
pub(crate) const PASSWORD: &str = "YourPaSsWoRd";

pub(crate) fn target(
    switch: &str,
    vendor: Vendor,
    address: &str,
    password: &str,
    host_key: HostKeyCheck,
) -> Target {
    Target {
        switch: switch.to_string(),
        vendor,
        transport: Transport::Ssh,
        address: address.to_string(),
        netns: None,
        user: USER.to_string(),
        password: Some(Secret::new(password.to_string())),
        tls: Tls {
            ca_file: None,
            verify: true,
            server_name: None,
        },
        host_key,
    }
}

pub(crate) fn pinned<S: Script>(server: &TestServer<S>) -> HostKeyCheck {
    HostKeyCheck::Sha256(server.fingerprint())
}

fn quick() -> SshOptions {
    SshOptions {
        connect: Duration::from_secs(10),
        command: Duration::from_secs(10),
    }
}

fn golden(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../planner/tests/render/eflops-4x16")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

// ---------------------------------------------------------------- transport

#[tokio::test]
async fn wrong_password_is_an_auth_error_and_runs_nothing() {
    let server = TestServer::start(SonicState::new("sw01"), USER, PASSWORD, 1).await;
    let t = target(
        "sw01",
        Vendor::Sonic,
        &server.address,
        "wrong",
        pinned(&server),
    );
    let err = Ssh::connect(&t, quick()).await.unwrap_err();
    assert!(
        matches!(&err, PushError::Auth { user, .. } if user == USER),
        "{err}"
    );
    assert!(
        !err.to_string().contains("wrong"),
        "the password leaked: {err}"
    );
    assert!(server.commands().is_empty());
}

#[tokio::test]
async fn host_key_mismatch_is_refused_before_login() {
    let server = TestServer::start(SonicState::new("sw01"), USER, PASSWORD, 1).await;
    let other = TestServer::start(SonicState::new("sw01"), USER, PASSWORD, 2).await;
    // Pinned fingerprint of another key.
    let t = target(
        "sw01",
        Vendor::Sonic,
        &server.address,
        PASSWORD,
        pinned(&other),
    );
    let err = Ssh::connect(&t, quick()).await.unwrap_err();
    match &err {
        PushError::HostKey { message, .. } => {
            assert!(message.contains(&server.fingerprint()), "{message}");
            assert!(message.contains(&other.fingerprint()), "{message}");
        }
        e => panic!("expected a host key error, got {e}"),
    }
    // known_hosts: another key for this host, then no entry at all.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("known_hosts");
    let line = other.known_hosts_line();
    let (_, key) = line.split_once(' ').unwrap();
    let (host_port, _) = server
        .known_hosts_line()
        .split_once(' ')
        .map(|(h, k)| (h.to_string(), k.to_string()))
        .unwrap();
    std::fs::write(&file, format!("# comment\n{host_port} {key}\n")).unwrap();
    let t = target(
        "sw01",
        Vendor::Sonic,
        &server.address,
        PASSWORD,
        HostKeyCheck::KnownHosts(file.clone()),
    );
    let err = Ssh::connect(&t, quick()).await.unwrap_err();
    assert!(
        err.to_string().contains("line 2 records another key"),
        "{err}"
    );
    std::fs::write(&file, "[127.0.0.1]:1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n").unwrap();
    let err = Ssh::connect(&t, quick()).await.unwrap_err();
    assert!(
        err.to_string().contains("is not in the known-hosts file"),
        "{err}"
    );
    // A missing file is an error, never "no keys known, accept".
    let t = target(
        "sw01",
        Vendor::Sonic,
        &server.address,
        PASSWORD,
        HostKeyCheck::KnownHosts(dir.path().join("absent")),
    );
    let err = Ssh::connect(&t, quick()).await.unwrap_err();
    assert!(
        err.to_string().contains("cannot read the known-hosts file"),
        "{err}"
    );
    assert!(server.commands().is_empty());
}

#[tokio::test]
async fn known_hosts_entry_accepts_and_commands_report_status() {
    let server = TestServer::start(SonicState::new("sw01"), USER, PASSWORD, 1).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("known_hosts");
    std::fs::write(&file, format!("{}\n", server.known_hosts_line())).unwrap();
    let t = target(
        "sw01",
        Vendor::Sonic,
        &server.address,
        PASSWORD,
        HostKeyCheck::KnownHosts(file),
    );
    let mut ssh = Ssh::connect(&t, quick()).await.unwrap();
    let out = ssh.exec("show platform summary").await.unwrap();
    assert!(out.success() && out.stdout.contains("Serial Number: MT1822K07815"));
    let out = ssh.exec("frobnicate").await.unwrap();
    assert_eq!(out.status, Some(127));
    assert_eq!(out.message(), "bash: frobnicate: command not found");
    ssh.close().await;
}

#[tokio::test]
async fn unreachable_address_is_named() {
    // A port nobody listens on (bound, then closed).
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = l.local_addr().unwrap().to_string();
    drop(l);
    let t = target("sw01", Vendor::Sonic, &address, PASSWORD, HostKeyCheck::Off);
    let err = Ssh::connect(&t, quick()).await.unwrap_err();
    assert!(
        matches!(&err, PushError::Unreachable { address: a, .. } if *a == address),
        "{err}"
    );
}

// ---------------------------------------------------------------- SONiC

async fn sonic(server: &TestServer<SonicState>) -> Sonic {
    let t = target(
        "sw01",
        Vendor::Sonic,
        &server.address,
        PASSWORD,
        pinned(server),
    );
    Sonic::connect(&t, quick()).await.unwrap()
}

pub(crate) fn candidate() -> String {
    golden("sonic/sw01.config_db.json")
}

/// A load that stops after reading the running CONFIG_DB (nothing to
/// change, or a candidate refused by the client), then lets go of the lock.
const UNCHANGED_LOAD: [&str; 4] = [
    "mkdir /tmp/efl-push.lock",
    "cat > /tmp/efl-push.lock/owner",
    "sonic-cfggen -d --print-data",
    "rm -rf /tmp/efl-push.lock",
];

fn load_commands() -> Vec<String> {
    vec![
        "mkdir /tmp/efl-push.lock".to_string(),
        "cat > /tmp/efl-push.lock/owner".to_string(),
        "sonic-cfggen -d --print-data".to_string(),
        "cat > /tmp/efl-push.lock/candidate.json".to_string(),
        "sudo config replace --dry-run /tmp/efl-push.lock/candidate.json".to_string(),
    ]
}

#[tokio::test]
async fn sonic_happy_path() {
    let server = TestServer::start(SonicState::new("sw01"), USER, PASSWORD, 1).await;
    let before = server.state.lock().unwrap().running.clone();
    let mut d = sonic(&server).await;
    let id = d.identity().await.unwrap();
    assert_eq!(id.hostname, "sw01");
    assert_eq!(id.serial.as_deref(), Some("MT1822K07815"));
    let diff = d.load(&candidate()).await.unwrap();
    assert!(
        diff.contains("- /PORT/Ethernet0/mtu: \"9100\"\n+ /PORT/Ethernet0/mtu: \"9216\"\n"),
        "{diff}"
    );
    assert!(diff.contains("- /VLAN/Vlan999/vlanid: \"999\"\n"), "{diff}");
    let commit = d.commit(Duration::from_secs(300)).await.unwrap();
    assert!(!commit.native_timer);
    assert!(commit.point.starts_with("efl-push-"), "{}", commit.point);
    d.confirm().await.unwrap();
    let p = &commit.point;
    let mut expected = vec![
        "sonic-cfggen -d -v DEVICE_METADATA.localhost.hostname".to_string(),
        "show platform summary".to_string(),
    ];
    expected.extend(load_commands());
    expected.extend([
        format!("sudo config checkpoint {p}"),
        "sudo config replace /tmp/efl-push.lock/candidate.json".to_string(),
        "sudo config save -y".to_string(),
        format!("sudo config delete-checkpoint {p}"),
        "rm -rf /tmp/efl-push.lock".to_string(),
    ]);
    assert_eq!(server.commands(), expected);
    let state = server.state.lock().unwrap();
    // The plan's tables are in, the platform's kept, the stale VLAN gone.
    assert_eq!(state.running["PORT"]["Ethernet0"]["mtu"], "9216");
    assert_eq!(state.running["PORT"]["Ethernet0"]["lanes"], "0,1,2,3");
    assert_eq!(state.running["MGMT_INTERFACE"], before["MGMT_INTERFACE"]);
    assert!(state.running["VLAN"].get("Vlan999").is_none());
    assert!(
        state.running["STATIC_ROUTE"]
            .as_object()
            .is_some_and(|r| !r.is_empty())
    );
    assert_eq!(state.saved, state.running);
    assert!(state.checkpoints.is_empty());
    assert!(!state.dirs.contains(sonic::LOCK_DIR));
}

#[tokio::test]
async fn sonic_second_push_changes_nothing() {
    let server = TestServer::start(SonicState::new("sw01"), USER, PASSWORD, 1).await;
    let mut d = sonic(&server).await;
    d.load(&candidate()).await.unwrap();
    d.commit(Duration::from_secs(300)).await.unwrap();
    d.confirm().await.unwrap();
    server.clear();
    let diff = d.load(&candidate()).await.unwrap();
    assert_eq!(diff, "");
    d.discard().await.unwrap();
    assert_eq!(server.commands(), UNCHANGED_LOAD);
}

#[tokio::test]
async fn sonic_lock_held_names_the_holder_and_leaves_it() {
    let server = TestServer::start(SonicState::new("sw01"), USER, PASSWORD, 1).await;
    let mut first = sonic(&server).await;
    first.load(&candidate()).await.unwrap();
    server.clear();
    let mut second = sonic(&server).await;
    let err = second.load(&candidate()).await.unwrap_err();
    match &err {
        PushError::Locked { by } => {
            assert!(by.starts_with("provisioner push as admin since"), "{by}")
        }
        e => panic!("expected Locked, got {e}"),
    }
    assert_eq!(
        server.commands(),
        ["mkdir /tmp/efl-push.lock", "cat /tmp/efl-push.lock/owner"]
    );
    // The first push still holds it.
    assert!(server.state.lock().unwrap().dirs.contains(sonic::LOCK_DIR));
    first.discard().await.unwrap();
    assert!(!server.state.lock().unwrap().dirs.contains(sonic::LOCK_DIR));
}

#[tokio::test]
async fn sonic_rejected_candidate_shows_the_device_message() {
    let server = TestServer::start(SonicState::new("sw01"), USER, PASSWORD, 1).await;
    let before = server.state.lock().unwrap().running.clone();
    let mut bad: Value = serde_json::from_str(&candidate()).unwrap();
    bad["PORT"]["Ethernet0"]["mtu"] = json!("10000");
    let mut d = sonic(&server).await;
    let err = d.load(&bad.to_string()).await.unwrap_err();
    match &err {
        PushError::Rejected { message } => {
            assert!(
                message.contains("Invalid value \"10000\" in \"mtu\" element"),
                "{message}"
            );
            // sonic-utilities' own reason, without click's usage lines.
            assert!(
                message.starts_with(
                    "Failed to replace config: Given patch will produce invalid config."
                ),
                "{message}"
            );
            assert!(
                !message.contains("Usage:") && !message.contains("-h\" for help"),
                "{message}"
            );
        }
        e => panic!("expected Rejected, got {e}"),
    }
    let mut expected = load_commands();
    expected.push("rm -rf /tmp/efl-push.lock".to_string());
    assert_eq!(server.commands(), expected);
    let state = server.state.lock().unwrap();
    assert_eq!(state.running, before);
    assert!(!state.dirs.contains(sonic::LOCK_DIR));
}

/// A leaf of the `breakout-200g` plan: 16 cages of 400G, each `2x200G`.
fn breakout_candidate() -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../planner/tests/render/breakout-200g/sonic/leaf01.config_db.json");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Breakouts are the switch's own (Dynamic Port Breakout makes a cage's
/// child ports with their lanes; a replace only edits `BREAKOUT_CFG`, and
/// a child port without lanes is invalid): a plan with breakouts on a
/// switch whose cages run whole is refused at load, before anything is
/// written, naming each root port, both modes and SONiC's command. Once
/// the cages are broken out on the switch, the same candidate loads and
/// commits; `BREAKOUT_CFG` stays exactly the switch's, with its own mode
/// names and the root ports the plan does not use.
#[tokio::test]
async fn sonic_breakouts_are_set_on_the_switch_first_and_never_replaced() {
    let server = TestServer::start(SonicState::dpb("sw01", 32, 0), USER, PASSWORD, 1).await;
    let before = server.state.lock().unwrap().running.clone();
    let mut d = sonic(&server).await;
    let err = d.load(&breakout_candidate()).await.unwrap_err();
    match &err {
        PushError::Ports { lines } => {
            let roots: Vec<&String> = lines
                .iter()
                .filter(|l| l.starts_with("BREAKOUT_CFG|"))
                .collect();
            let ports: Vec<&String> = lines.iter().filter(|l| l.starts_with("PORT|")).collect();
            assert_eq!(
                (roots.len(), ports.len(), lines.len()),
                (16, 16, 32),
                "{lines:#?}"
            );
            assert!(lines.contains(&"BREAKOUT_CFG|Ethernet8: the switch runs 1x400G[200G,100G,50G,40G,25G,10G,1G], the plan needs 2x200G: run `sudo config interface breakout Ethernet8 <mode> -y` with the mode `show interfaces breakout` lists for 2x200G".to_string()), "{lines:#?}");
            assert!(
                lines.contains(
                    &"PORT|Ethernet12: the switch has no such port (`show interfaces status`)"
                        .to_string()
                ),
                "{lines:#?}"
            );
        }
        e => panic!("expected Ports, got {e}"),
    }
    assert!(err.is_bad_input(), "{err}");
    assert!(
        err.to_string().contains("config interface breakout"),
        "{err}"
    );
    assert_eq!(server.commands(), UNCHANGED_LOAD);
    assert_eq!(server.state.lock().unwrap().running, before);

    // The same candidate without the client's check: the switch itself
    // refuses the child ports it would have to invent (no lanes).
    {
        let mut st = server.state.lock().unwrap();
        let running = st.running.as_object().unwrap().clone();
        let mut target = running.clone();
        let candidate: Value = serde_json::from_str(&breakout_candidate()).unwrap();
        for (table, entries) in candidate.as_object().unwrap() {
            let mut t = running
                .get(table)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            for (k, v) in entries.as_object().unwrap() {
                let mut m = t
                    .get(k)
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                m.extend(v.as_object().unwrap().clone());
                t.insert(k.clone(), Value::Object(m));
            }
            target.insert(table.clone(), Value::Object(t));
        }
        st.files.insert(
            "/tmp/raw.json".into(),
            Value::Object(target).to_string().into_bytes(),
        );
        let r = st.exec("sudo config replace --dry-run /tmp/raw.json", b"");
        assert_ne!(r.status, 0);
        assert!(
            r.stderr.contains("Missing required element \"lanes\""),
            "{}",
            r.stderr
        );
    }

    // Broken out on the switch (the first 16 cages, as `config interface
    // breakout` leaves them): the candidate loads and commits.
    let server = TestServer::start(SonicState::dpb("sw01", 32, 16), USER, PASSWORD, 1).await;
    let before = server.state.lock().unwrap().running.clone();
    let mut d = sonic(&server).await;
    let diff = d.load(&breakout_candidate()).await.unwrap();
    assert!(!diff.contains("/BREAKOUT_CFG"), "{diff}");
    assert!(diff.contains("+ /PORT/Ethernet4/mtu: \"9216\""), "{diff}");
    d.commit(Duration::from_secs(300)).await.unwrap();
    d.confirm().await.unwrap();
    let state = server.state.lock().unwrap();
    assert_eq!(state.running["BREAKOUT_CFG"], before["BREAKOUT_CFG"]);
    assert_eq!(state.running["PORT"]["Ethernet4"]["lanes"], "4,5,6,7");
    assert_eq!(state.running["PORT"]["Ethernet4"]["speed"], "200000");
    assert_eq!(state.running["PORT"]["Ethernet4"]["mtu"], "9216");
    assert_eq!(
        state.running["PORT"]["Ethernet128"],
        before["PORT"]["Ethernet128"]
    );
    assert!(!state.dirs.contains(sonic::LOCK_DIR));
}

#[tokio::test]
async fn sonic_goes_dark_without_its_management_address_and_such_a_candidate_is_refused() {
    // The test server: a replace whose CONFIG_DB lacks MGMT_INTERFACE
    // takes eth0's address away; the session drops and every later
    // command finds no switch.
    let server = TestServer::start(SonicState::new("sw01"), USER, PASSWORD, 1).await;
    {
        let mut st = server.state.lock().unwrap();
        assert!(!st.dark());
        let mut cut = st.running.clone();
        cut.as_object_mut().unwrap().remove("MGMT_INTERFACE");
        st.files
            .insert("/tmp/cut.json".into(), cut.to_string().into_bytes());
        assert!(st.exec("sudo config replace /tmp/cut.json", b"").drop);
        assert!(st.dark());
        assert!(st.exec("show platform summary", b"").drop);
    }
    // The client: a candidate that carries MGMT_INTERFACE with another
    // address is refused before anything is written, naming the entry.
    let server = TestServer::start(SonicState::new("sw01"), USER, PASSWORD, 1).await;
    let before = server.state.lock().unwrap().running.clone();
    let mut bad: Value = serde_json::from_str(&candidate()).unwrap();
    bad["MGMT_INTERFACE"] = json!({"eth0|192.0.2.99/24": {"gwaddr": "192.0.2.1"}});
    let mut d = sonic(&server).await;
    let err = d.load(&bad.to_string()).await.unwrap_err();
    match &err {
        PushError::Management { lines, .. } => assert_eq!(
            lines,
            &["MGMT_INTERFACE|eth0|192.0.2.10/24 {\"gwaddr\":\"192.0.2.1\"}"]
        ),
        e => panic!("expected Management, got {e}"),
    }
    assert!(err.is_bad_input(), "{err}");
    assert_eq!(server.commands(), UNCHANGED_LOAD);
    let state = server.state.lock().unwrap();
    assert_eq!(state.running, before);
    assert!(!state.dark());
}

#[tokio::test]
async fn sonic_connection_dropped_mid_commit_rolls_back_after_reconnecting() {
    let mut state = SonicState::new("sw01");
    state.drop_on_replace = true;
    let server = TestServer::start(state, USER, PASSWORD, 1).await;
    let before = server.state.lock().unwrap().running.clone();
    let mut d = sonic(&server).await;
    d.load(&candidate()).await.unwrap();
    server.clear();
    let err = d.commit(Duration::from_secs(300)).await.unwrap_err();
    let PushError::Transport { action, .. } = &err else {
        panic!("expected a lost connection, got {err}");
    };
    assert!(
        action.contains("reconnected and rolled back to checkpoint efl-push-"),
        "{action}"
    );
    let log = server.commands();
    let point = log[0]
        .strip_prefix("sudo config checkpoint ")
        .unwrap()
        .to_string();
    assert_eq!(
        log,
        [
            format!("sudo config checkpoint {point}"),
            "sudo config replace /tmp/efl-push.lock/candidate.json".to_string(),
            format!("sudo config rollback {point}"),
            "sudo config save -y".to_string(),
            format!("sudo config delete-checkpoint {point}"),
            "rm -rf /tmp/efl-push.lock".to_string(),
        ]
    );
    let state = server.state.lock().unwrap();
    assert_eq!(state.running, before);
    assert_eq!(state.saved, before);
}

#[tokio::test]
async fn sonic_timer_expiry_is_our_watchdogs_rollback_on_a_new_connection() {
    let server = TestServer::start(SonicState::new("sw01"), USER, PASSWORD, 1).await;
    let before = server.state.lock().unwrap().running.clone();
    let mut d = sonic(&server).await;
    d.load(&candidate()).await.unwrap();
    let commit = d.commit(Duration::from_secs(1)).await.unwrap();
    assert!(
        !commit.native_timer,
        "SONiC has no commit-confirm timer of its own"
    );
    drop(d);
    assert_ne!(server.state.lock().unwrap().running, before);
    server.clear();
    // What the watchdog process does at expiry: connect, roll back.
    let mut watchdog = sonic(&server).await;
    watchdog.rollback(&commit.point).await.unwrap();
    assert_eq!(
        server.commands(),
        [
            format!("sudo config rollback {}", commit.point),
            "sudo config save -y".to_string(),
            format!("sudo config delete-checkpoint {}", commit.point),
            "rm -rf /tmp/efl-push.lock".to_string(),
        ]
    );
    {
        let state = server.state.lock().unwrap();
        assert_eq!(state.running, before);
        assert!(!state.dirs.contains(sonic::LOCK_DIR));
    }
    // A name this client never makes is refused before anything runs.
    server.clear();
    let err = watchdog.rollback("x; rm -rf /").await.unwrap_err();
    assert!(matches!(err, PushError::Parameter { .. }), "{err}");
    assert!(server.commands().is_empty());
}

/// A SONiC switch whose `show` and `vtysh` answers are the documented
/// samples (one neighbour, one session, one route).
pub(crate) fn sonic_with_outputs() -> SonicState {
    let mut state = SonicState::new("sw01");
    state.lldp_table = "Capability codes: (R) Router, (B) Bridge, (O) Other\n\
LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr\n\
-----------  --------------  --------------  ------------  -----------------\n\
Ethernet0    sw05            Ethernet64      BR            to sw01-u Ethernet0\n\
--------------------------------------------------\nTotal entries displayed:  1\n"
        .to_string();
    state.interfaces_status = "  Interface            Lanes    Speed    MTU    FEC    Alias    Vlan    Oper    Admin                                             Type    Asym PFC\n\
-----------  ---------------  -------  -----  -----  -------  ------  ------  -------  -----------------------------------------------  ----------\n\
  Ethernet0          0,1,2,3     100G   9216     rs     etp1  routed      up       up  QSFP28 or later                                         N/A\n\
  Ethernet4          4,5,6,7     100G   9216     rs     etp2  routed    down       up  N/A                                                     N/A\n"
        .to_string();
    state.bgp_json = r#"{"default":{"ipv4Unicast":{"routerId":"10.255.0.1","as":65001,
        "peers":{"10.255.0.1":{"remoteAs":65101,"state":"Established","peerState":"OK"}}}}}"#
        .to_string();
    state.bfd_json = r#"[{"peer":"10.255.0.1","vrf":"default","status":"up"}]"#.to_string();
    state.routes_json = Some(r#"{"default":{"10.100.16.0/24":[{"prefix":"10.100.16.0/24","protocol":"bgp","selected":true,
        "installed":true,"nexthops":[{"ip":"10.255.0.1","fib":true,"active":true}]}]}}"#
        .to_string());
    state
}

#[tokio::test]
async fn sonic_observe_reads_the_documented_outputs() {
    let state = sonic_with_outputs();
    let server = TestServer::start(state, USER, PASSWORD, 1).await;
    let mut d = sonic(&server).await;
    let seen = d.observe().await.unwrap();
    assert_eq!(
        server.commands(),
        [
            "show lldp table",
            "show interfaces status",
            "sudo vtysh -c 'show bgp vrf all summary json'",
            "sudo vtysh -c 'show bfd peers json'",
            "sudo vtysh -c 'show ip route vrf all json'",
        ]
    );
    assert_eq!(
        seen.lldp,
        [LldpNeighbour {
            port: "Ethernet0".into(),
            system: "sw05".into(),
            port_id: "Ethernet64".into()
        }]
    );
    assert_eq!(
        seen.interfaces,
        [
            Interface {
                name: "Ethernet0".into(),
                up: true,
                speed_mbps: Some(100_000)
            },
            Interface {
                name: "Ethernet4".into(),
                up: false,
                speed_mbps: Some(100_000)
            }
        ]
    );
    assert_eq!(
        seen.bgp,
        [BgpSession {
            vrf: "default".into(),
            peer: "10.255.0.1".into(),
            remote_as: Some(65101),
            established: true,
            last_reset: None
        }]
    );
    assert!(seen.bfd[0].up);
    assert_eq!(
        seen.routes,
        [Route {
            vrf: "default".into(),
            prefix: "10.100.16.0/24".into(),
            next_hops: vec!["10.255.0.1".into()]
        }]
    );
}

// ---------------------------------------------------------------- Comware

/// One Comware "minute" in these tests (client and server agree).
pub(crate) const MINUTE: Duration = Duration::from_millis(300);

async fn comware(server: &TestServer<ComwareState>) -> Comware {
    let t = target(
        "sw01",
        Vendor::Comware,
        &server.address,
        PASSWORD,
        pinned(server),
    );
    let options = ComwareOptions {
        ssh: quick(),
        minute: MINUTE,
    };
    Comware::connect(&t, options).await.unwrap()
}

pub(crate) fn comware_candidate() -> String {
    golden("comware/sw01.comware.cfg")
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

const COMWARE_LOAD: [&str; 4] = [
    "mkdir flash:/efl-push",
    "scp -t flash:/efl-push/owner.txt",
    "display current-configuration",
    "scp -t flash:/efl-push/candidate.cfg",
];

/// The rollback file of a commit, from its `save` line in the log.
fn saved_point(log: &[String]) -> String {
    log.iter()
        .find_map(|l| l.strip_prefix("save flash:/efl-rollback-"))
        .map(|n| format!("flash:/efl-rollback-{n}"))
        .expect("a save of the rollback file")
}

#[tokio::test]
async fn comware_happy_path() {
    let server = TestServer::start(ComwareState::new("sw01", MINUTE), USER, PASSWORD, 3).await;
    let mut d = comware(&server).await;
    let id = d.identity().await.unwrap();
    assert_eq!(id.hostname, "sw01");
    assert_eq!(id.serial.as_deref(), Some("210235A2CSH19C000012"));
    let diff = d.load(&comware_candidate()).await.unwrap();
    assert!(diff.contains(" interface HundredGigE1/0/1\n"), "{diff}");
    assert!(
        diff.contains("- mtu 1500\n") && diff.contains("+ mtu 9216\n"),
        "{diff}"
    );
    assert!(
        diff.contains("- ip route-static vpn-instance Vrf101 10.9.0.0 16 10.255.0.9\n"),
        "{diff}"
    );
    assert!(
        !diff.contains("ssh server enable"),
        "kept lines are no change: {diff}"
    );
    let commit = d.commit(Duration::from_secs(1)).await.unwrap();
    assert!(commit.native_timer);
    assert!(server.state.lock().unwrap().delay.is_some());
    d.confirm().await.unwrap();
    let p = commit.point.clone();
    let mut expected = strings(&[
        "screen-length disable",
        "display current-configuration | include sysname",
        "display device manuinfo",
    ]);
    expected.extend(strings(&COMWARE_LOAD));
    expected.extend([
        format!("save {p}"),
        "Y".to_string(),
        "system-view".to_string(),
        // 1 s in 300 ms minutes: 4 minutes.
        "configuration commit delay 4".to_string(),
        "configuration replace file flash:/efl-push/candidate.cfg".to_string(),
        "N".to_string(),
        "return".to_string(),
        "system-view".to_string(),
        "configuration commit".to_string(),
        "return".to_string(),
        "save force".to_string(),
        "delete /unreserved flash:/efl-push/candidate.cfg".to_string(),
        "Y".to_string(),
        "delete /unreserved flash:/efl-push/owner.txt".to_string(),
        "Y".to_string(),
        "rmdir flash:/efl-push".to_string(),
        "Y".to_string(),
        format!("delete /unreserved {p}"),
        "Y".to_string(),
    ]);
    assert_eq!(server.commands(), expected);
    // Past the timer's deadline nothing rolls back: it was committed.
    tokio::time::sleep(MINUTE * 5).await;
    {
        let mut state = server.state.lock().unwrap();
        state.tick();
        assert_eq!(state.timer_rollbacks, 0);
        assert!(state.running.contains(" mtu 9216"));
        assert!(
            state.running.contains("ssh server enable"),
            "the management config survives"
        );
        assert!(state.running.contains("local-user admin class manage"));
        assert!(
            !state.running.contains("10.9.0.0 16"),
            "the stale route in a plan VRF is gone"
        );
        assert!(
            state
                .running
                .contains("ip route-static vpn-instance mgmt 0.0.0.0 0 192.0.2.1")
        );
        assert_eq!(state.saved, state.running);
        assert!(state.files.is_empty(), "{:?}", state.files.keys());
        assert!(!state.dirs.contains("flash:/efl-push"));
    }
    // A second push finds nothing to change.
    server.clear();
    assert_eq!(d.load(&comware_candidate()).await.unwrap(), "");
    d.discard().await.unwrap();
    assert_eq!(
        server.commands(),
        strings(&[
            "mkdir flash:/efl-push",
            "scp -t flash:/efl-push/owner.txt",
            "display current-configuration",
            "delete /unreserved flash:/efl-push/owner.txt",
            "Y",
            "rmdir flash:/efl-push",
            "Y",
        ])
    );
}

#[tokio::test]
async fn comware_timer_expiry_rolls_back_on_the_device() {
    let server = TestServer::start(ComwareState::new("sw01", MINUTE), USER, PASSWORD, 3).await;
    let before = server.state.lock().unwrap().running.clone();
    let mut d = comware(&server).await;
    d.load(&comware_candidate()).await.unwrap();
    let commit = d.commit(MINUTE).await.unwrap();
    assert!(server.state.lock().unwrap().running.contains(" mtu 9216"));
    tokio::time::sleep(MINUTE * 2).await;
    server.clear();
    let err = d.confirm().await.unwrap_err();
    match &err {
        PushError::TimerExpired { point } => assert_eq!(*point, commit.point),
        e => panic!("expected TimerExpired, got {e}"),
    }
    // No `configuration commit` after the deadline: only our files go.
    assert_eq!(
        server.commands(),
        strings(&[
            "delete /unreserved flash:/efl-push/candidate.cfg",
            "Y",
            "delete /unreserved flash:/efl-push/owner.txt",
            "Y",
            "rmdir flash:/efl-push",
            "Y",
        ])
    );
    let state = server.state.lock().unwrap();
    assert_eq!(state.timer_rollbacks, 1);
    assert_eq!(state.running, before);
    assert_eq!(state.saved, before);
}

#[tokio::test]
async fn comware_confirm_from_a_new_session_after_expiry_reports_it() {
    let server = TestServer::start(ComwareState::new("sw01", MINUTE), USER, PASSWORD, 3).await;
    let before = server.state.lock().unwrap().running.clone();
    let mut d = comware(&server).await;
    d.load(&comware_candidate()).await.unwrap();
    d.commit(MINUTE).await.unwrap();
    drop(d);
    tokio::time::sleep(MINUTE * 2).await;
    server.clear();
    // `push confirm` in a later process: it does not know the deadline.
    let mut later = comware(&server).await;
    let err = later.confirm().await.unwrap_err();
    assert!(matches!(err, PushError::TimerExpired { .. }), "{err}");
    assert_eq!(
        server.commands(),
        strings(&[
            "screen-length disable",
            "system-view",
            "configuration commit",
            "return"
        ])
    );
    assert_eq!(server.state.lock().unwrap().running, before);
}

/// The lock is read from its owner file, not from the words of `mkdir`'s
/// refusal, which the guides never show: another wording still names the
/// holder, and a refusal with no lock behind it is not taken for one.
#[tokio::test]
async fn comware_lock_is_named_whatever_the_release_says_of_an_existing_directory() {
    let server = TestServer::start(ComwareState::new("sw01", MINUTE), USER, PASSWORD, 3).await;
    server.state.lock().unwrap().mkdir_exists =
        Some("%Failed to create directory flash:/efl-push.".to_string());
    let mut first = comware(&server).await;
    first.load(&comware_candidate()).await.unwrap();
    let mut second = comware(&server).await;
    match second.load(&comware_candidate()).await.unwrap_err() {
        PushError::Locked { by } => {
            assert!(by.starts_with("provisioner push as admin since"), "{by}")
        }
        e => panic!("expected Locked, got {e}"),
    }
    // A directory left without an owner file, refused in words that do
    // not say it exists: the device's words, not a made-up holder.
    server.state.lock().unwrap().files.clear();
    let mut third = comware(&server).await;
    match third.load(&comware_candidate()).await.unwrap_err() {
        PushError::Protocol { action, message } => {
            assert!(action.contains("mkdir flash:/efl-push"), "{action}");
            assert_eq!(message, "%Failed to create directory flash:/efl-push.");
        }
        e => panic!("expected the device's refusal, got {e}"),
    }
}

#[tokio::test]
async fn comware_lock_held_names_the_holder() {
    let server = TestServer::start(ComwareState::new("sw01", MINUTE), USER, PASSWORD, 3).await;
    let mut first = comware(&server).await;
    first.load(&comware_candidate()).await.unwrap();
    let mut second = comware(&server).await;
    server.clear();
    let err = second.load(&comware_candidate()).await.unwrap_err();
    match &err {
        PushError::Locked { by } => {
            assert!(by.starts_with("provisioner push as admin since"), "{by}")
        }
        e => panic!("expected Locked, got {e}"),
    }
    assert_eq!(
        server.commands(),
        strings(&["mkdir flash:/efl-push", "more flash:/efl-push/owner.txt"])
    );
    assert!(
        server
            .state
            .lock()
            .unwrap()
            .dirs
            .contains("flash:/efl-push")
    );
}

#[tokio::test]
async fn comware_rejected_candidate_is_undone_at_once() {
    let server = TestServer::start(ComwareState::new("sw01", MINUTE), USER, PASSWORD, 3).await;
    let before = server.state.lock().unwrap().running.clone();
    let bad = comware_candidate().replacen(" mtu 9216", " mtu 10000", 1);
    let mut d = comware(&server).await;
    d.load(&bad).await.unwrap();
    server.clear();
    let err = d.commit(Duration::from_secs(60)).await.unwrap_err();
    let PushError::Rejected { message } = &err else {
        panic!("expected Rejected, got {err}");
    };
    assert!(
        message.contains("' mtu 10000' of flash:/efl-push/candidate.cfg: Wrong parameter"),
        "{message}"
    );
    let p = saved_point(&server.commands());
    assert_eq!(
        server.commands(),
        [
            format!("save {p}"),
            "Y".to_string(),
            "system-view".to_string(),
            "configuration commit delay 200".to_string(),
            "configuration replace file flash:/efl-push/candidate.cfg".to_string(),
            "N".to_string(),
            format!("configuration replace file {p}"),
            "N".to_string(),
            "return".to_string(),
        ]
    );
    let state = server.state.lock().unwrap();
    assert_eq!(state.running.trim_end(), before.trim_end());
}

#[tokio::test]
async fn comware_connection_dropped_mid_commit_is_rolled_back_by_the_timer() {
    let mut state = ComwareState::new("sw01", MINUTE);
    state.drop_on_replace = true;
    let server = TestServer::start(state, USER, PASSWORD, 3).await;
    let before = server.state.lock().unwrap().running.clone();
    let mut d = comware(&server).await;
    d.load(&comware_candidate()).await.unwrap();
    let err = d.commit(MINUTE).await.unwrap_err();
    let PushError::Transport { action, .. } = &err else {
        panic!("expected a lost connection, got {err}");
    };
    assert!(
        action.contains("commit delay rolls the change back within 1 min"),
        "{action}"
    );
    assert!(server.state.lock().unwrap().running.contains(" mtu 9216"));
    tokio::time::sleep(MINUTE * 2).await;
    let mut state = server.state.lock().unwrap();
    state.tick();
    assert_eq!(state.timer_rollbacks, 1);
    assert_eq!(state.running, before);
}

#[tokio::test]
async fn comware_rollback_before_expiry_replaces_with_the_saved_file() {
    let server = TestServer::start(ComwareState::new("sw01", MINUTE), USER, PASSWORD, 3).await;
    let before = server.state.lock().unwrap().running.clone();
    let mut d = comware(&server).await;
    d.load(&comware_candidate()).await.unwrap();
    let commit = d.commit(Duration::from_secs(60)).await.unwrap();
    server.clear();
    d.rollback(&commit.point).await.unwrap();
    assert_eq!(
        server.commands(),
        [
            "system-view".to_string(),
            format!("configuration replace file {}", commit.point),
            "N".to_string(),
            "return".to_string(),
            // Saved: a reboot keeps the rollback.
            "save force".to_string(),
            "delete /unreserved flash:/efl-push/candidate.cfg".to_string(),
            "Y".to_string(),
            "delete /unreserved flash:/efl-push/owner.txt".to_string(),
            "Y".to_string(),
            "rmdir flash:/efl-push".to_string(),
            "Y".to_string(),
        ]
    );
    {
        let state = server.state.lock().unwrap();
        assert_eq!(state.running.trim_end(), before.trim_end());
        assert!(!state.dirs.contains("flash:/efl-push"));
    }
    let err = d.rollback("flash:/startup.cfg").await.unwrap_err();
    assert!(matches!(err, PushError::Parameter { .. }), "{err}");
}

#[tokio::test]
async fn comware_wrong_password_and_pinned_key() {
    let server = TestServer::start(ComwareState::new("sw01", MINUTE), USER, PASSWORD, 3).await;
    let t = target(
        "sw01",
        Vendor::Comware,
        &server.address,
        "nope",
        pinned(&server),
    );
    let err = Comware::connect(&t, ComwareOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, PushError::Auth { .. }), "{err}");
    let t = target(
        "sw01",
        Vendor::Comware,
        &server.address,
        PASSWORD,
        HostKeyCheck::Sha256("SHA256:AAAA".into()),
    );
    let err = Comware::connect(&t, ComwareOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, PushError::HostKey { .. }), "{err}");
    assert!(server.commands().is_empty());
}

/// A Comware switch whose `display` answers are the documented samples.
pub(crate) fn comware_with_outputs() -> ComwareState {
    let mut state = ComwareState::new("sw01", MINUTE);
    state.lldp = "Chassis ID : * -- -- Nearest nontpmr bridge neighbor\n             # -- -- Nearest customer bridge neighbor\n             Default -- -- Nearest bridge neighbor\n\nSystem Name          Local Interface Chassis ID      Port ID\nsw05                 HGE1/0/1        0cda-411d-0005  HundredGigE1/0/17".to_string();
    state.brief = "Brief information on interfaces in route mode:\nLink: ADM - administratively down; Stby - standby\nProtocol: (s) - spoofing\nInterface            Link Protocol Primary IP      Description\nHGE1/0/1             UP   UP       10.255.0.0      to sw01-l HundredGigE1/0/17".to_string();
    state.bgp = "  Peer                    AS  MsgRcvd  MsgSent OutQ PrefRcv Up/Down  State\n\n  10.255.0.1           65101        7       10    0       4 00:05:19 Established".to_string();
    state.bfd = " LD/RD            SourceAddr      DestAddr        State  Holdtime    Interface\n 513/513          10.255.0.0      10.255.0.1      Up     2297ms      HGE1/0/1".to_string();
    state.routes = "Destination/Mask   Proto   Pre Cost        NextHop         Interface\n10.100.16.0/24     BGP     255 0           10.255.0.1      HGE1/0/1".to_string();
    state
}

#[tokio::test]
async fn comware_observe_reads_the_documented_outputs() {
    let state = comware_with_outputs();
    let server = TestServer::start(state, USER, PASSWORD, 3).await;
    let mut d = comware(&server).await;
    // `load` learns the VPN instances whose peers and routes are read.
    d.load(&comware_candidate()).await.unwrap();
    d.discard().await.unwrap();
    server.clear();
    let seen = d.observe().await.unwrap();
    assert_eq!(
        server.commands(),
        strings(&[
            "display lldp neighbor-information list",
            "display interface brief",
            "display bgp peer ipv4",
            "display ip routing-table",
            "display bgp peer ipv4 vpn-instance mgmt",
            "display ip routing-table vpn-instance mgmt",
            "display bgp peer ipv4 vpn-instance Vrf101",
            "display ip routing-table vpn-instance Vrf101",
            // The plan's second VPN instance, learned from the candidate.
            "display bgp peer ipv4 vpn-instance Vrf102",
            "display ip routing-table vpn-instance Vrf102",
            "display bfd session",
        ])
    );
    assert_eq!(
        seen.lldp,
        [LldpNeighbour {
            port: "HundredGigE1/0/1".into(),
            system: "sw05".into(),
            port_id: "HundredGigE1/0/17".into()
        }]
    );
    assert_eq!(
        seen.interfaces,
        [Interface {
            name: "HundredGigE1/0/1".into(),
            up: true,
            speed_mbps: None
        }]
    );
    assert_eq!(
        seen.bgp,
        [BgpSession {
            vrf: "Vrf101".into(),
            peer: "10.255.0.1".into(),
            remote_as: Some(65101),
            established: true,
            last_reset: None
        }]
    );
    assert_eq!(seen.bfd.len(), 1);
    assert_eq!(
        seen.routes,
        [
            Route {
                vrf: "mgmt".into(),
                prefix: "0.0.0.0/0".into(),
                next_hops: vec!["192.0.2.1".into()]
            },
            Route {
                vrf: "Vrf101".into(),
                prefix: "10.100.16.0/24".into(),
                next_hops: vec!["10.255.0.1".into()]
            }
        ]
    );
}

// ------------------------------------------------ through `provisioner push`

/// An LLDP row a test server reports: local port, neighbour, its port.
type Lldp = (String, String, String);

/// Test servers of one vendor for every physical switch of the 2x8
/// BiGraph plan, each reporting the plan's cables (LLDP, ports up at speed)
/// unless `tweak` changes its rows; and the devices file naming them.
/// `make` builds a switch's state from its name, LLDP rows and planned
/// ports.
struct SshFabric<S: Script> {
    dir: tempfile::TempDir,
    plan: PathBuf,
    servers: std::collections::BTreeMap<String, TestServer<S>>,
}

impl<S: Script> SshFabric<S> {
    /// No switch but sw1 was sent a command starting with `prefix`.
    fn none_but_sw1_ran(&self, prefix: &str) {
        for (sw, server) in &self.servers {
            if sw != "sw1" {
                let log = server.commands();
                assert!(!log.iter().any(|c| c.starts_with(prefix)), "{sw}: {log:?}");
            }
        }
    }

    async fn new(
        vendor: &str,
        make: impl Fn(&str, &[Lldp], &[planner::expect::ExpectedPort]) -> S,
        tweak: impl Fn(&str, &mut Vec<Lldp>),
    ) -> SshFabric<S> {
        let plan = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/data/bigraph-2x8.plan.json");
        let text = std::fs::read_to_string(&plan).unwrap();
        let checked =
            planner::checked::CheckedPlan::load(&text, &plan.display().to_string()).unwrap();
        let v = Vendor::named(vendor).unwrap();
        let mut switches: Vec<String> = checked
            .switch_list
            .iter()
            .map(|s| s.physical.to_string())
            .collect();
        switches.dedup();
        let dir = tempfile::tempdir().unwrap();
        let mut servers = std::collections::BTreeMap::new();
        let mut devices = String::new();
        for (i, sw) in switches.iter().enumerate() {
            let expected = provisioner::push::verify::expected(&checked, sw, v).unwrap();
            let mut lldp: Vec<Lldp> = expected
                .ports
                .iter()
                .map(|p| {
                    (
                        p.interface.clone(),
                        p.lldp.device.clone(),
                        p.lldp.port.clone(),
                    )
                })
                .collect();
            tweak(sw, &mut lldp);
            let state = make(sw, &lldp, &expected.ports);
            let seed = u8::try_from(10 + i).unwrap();
            let server = TestServer::start(state, USER, PASSWORD, seed).await;
            devices += &format!(
                "[[device]]\nswitch = \"{sw}\"\nvendor = \"{vendor}\"\ntransport = \"ssh\"\naddress = \"{}\"\nuser = \"{USER}\"\npassword_env = \"EFL_TEST_PASSWORD\"\nhost_key_sha256 = \"{}\"\n\n",
                server.address,
                server.fingerprint()
            );
            servers.insert(sw.clone(), server);
        }
        std::fs::write(dir.path().join("devices.toml"), devices).unwrap();
        SshFabric { dir, plan, servers }
    }

    /// A push of every switch (`--format json`) that must succeed.
    async fn push_ok(&self) {
        let out = self.push(&["--format", "json"]).await;
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Pushes again: it succeeds and no switch sees a line starting with
    /// `change` (nothing to commit).
    async fn second_push_changes_nothing(&self, change: &str) {
        for server in self.servers.values() {
            server.clear();
        }
        let out = self.push(&[]).await;
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (sw, server) in &self.servers {
            let log = server.commands();
            assert!(!log.iter().any(|c| c.starts_with(change)), "{sw}: {log:?}");
        }
    }

    /// `provisioner push PLAN --devices devices.toml ARGS` (off the
    /// runtime's threads, so the servers keep answering).
    async fn push(&self, args: &[&str]) -> std::process::Output {
        let mut all: Vec<String> = vec![
            "push".into(),
            self.plan.display().to_string(),
            "--devices".into(),
            "devices.toml".into(),
            "--confirm-timer".into(),
            "60s".into(),
            // The test servers answer at once: a mismatch is final.
            "--settle".into(),
            "0s".into(),
        ];
        all.extend(args.iter().map(|a| a.to_string()));
        let dir = self.dir.path().to_path_buf();
        let out = tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_provisioner"))
                .current_dir(dir)
                .env("EFL_TEST_PASSWORD", PASSWORD)
                .args(all)
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!text.contains(PASSWORD), "the password was printed");
        out
    }
}

/// A SONiC switch reporting `lldp` and every planned port up.
fn sonic_world(sw: &str, lldp: &[Lldp], ports: &[planner::expect::ExpectedPort]) -> SonicState {
    let mut state = SonicState::new(sw);
    state.lldp_table = "Capability codes: (R) Router, (B) Bridge, (O) Other\n\
LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr\n\
-----------  --------------  --------------  ------------  -----------------\n"
        .to_string();
    for (port, system, port_id) in lldp {
        state.lldp_table +=
            &format!("{port:<12} {system:<15} {port_id:<15} BR            {port_id}\n");
    }
    state.lldp_table += &format!(
        "--------------------------------------------------\nTotal entries displayed:  {}\n",
        lldp.len()
    );
    state.interfaces_status = "  Interface    Lanes    Speed    MTU    FEC    Alias    Vlan    Oper    Admin    Type    Asym PFC\n\
-----------  -------  -------  -----  -----  -------  ------  ------  -------  ------  ----------\n"
        .to_string();
    for p in ports {
        state.interfaces_status += &format!(
            "  {}  0,1,2,3  {}G  9216  rs  etp  routed  up  up  QSFP28 or later  N/A\n",
            p.interface, p.gbps
        );
    }
    state
}

/// `HundredGigE1/0/1` -> `HGE1/0/1`, as Comware's tables print it.
fn comware_short(name: &str) -> String {
    for (long, short) in [
        ("HundredGigE", "HGE"),
        ("FourHundredGigE", "FH"),
        ("Twenty-FiveGigE", "WGE"),
    ] {
        if let Some(rest) = name.strip_prefix(long) {
            return format!("{short}{rest}");
        }
    }
    name.to_string()
}

/// A Comware switch (real minutes) reporting `lldp` and every planned port
/// up, in its short interface names.
fn comware_world(sw: &str, lldp: &[Lldp], ports: &[planner::expect::ExpectedPort]) -> ComwareState {
    let mut state = ComwareState::new(sw, Duration::from_secs(60));
    state.lldp = "Chassis ID : * -- -- Nearest nontpmr bridge neighbor\n             # -- -- Nearest customer bridge neighbor\n             Default -- -- Nearest bridge neighbor\n\nSystem Name          Local Interface Chassis ID      Port ID\n".to_string();
    for (port, system, port_id) in lldp {
        state.lldp += &format!(
            "{system:<20} {:<15} 0cda-411d-0001  {port_id}\n",
            comware_short(port)
        );
    }
    state.brief = "Brief information on interfaces in route mode:\nLink: ADM - administratively down; Stby - standby\nProtocol: (s) - spoofing\nInterface            Link Protocol Primary IP      Description\n".to_string();
    for p in ports {
        state.brief += &format!(
            "{:<20} UP   UP       --              --\n",
            comware_short(&p.interface)
        );
    }
    state
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sonic_switches_pushed_through_provisioner_push() {
    let f = SshFabric::new("sonic", sonic_world, |_, _| {}).await;
    f.push_ok().await;
    for (sw, server) in &f.servers {
        let log = server.commands();
        assert!(
            log.contains(&"sudo config replace /tmp/efl-push.lock/candidate.json".to_string()),
            "{sw}: {log:?}"
        );
        assert!(
            log.contains(&"show lldp table".to_string()),
            "{sw}: {log:?}"
        );
        assert_eq!(
            log.last().map(String::as_str),
            Some("rm -rf /tmp/efl-push.lock"),
            "{sw}: {log:?}"
        );
        let state = server.state.lock().unwrap();
        assert_eq!(
            state.running["DEVICE_METADATA"]["localhost"]["hostname"],
            sw.as_str()
        );
        assert!(state.running.get("STATIC_ROUTE").is_some(), "{sw}");
        assert_eq!(state.saved, state.running, "{sw}: confirmed and saved");
        assert!(state.checkpoints.is_empty());
    }
    // Again: nothing to change, nothing committed.
    f.second_push_changes_nothing("sudo config").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sonic_verification_mismatch_rolls_back_to_the_checkpoint() {
    let (f, before) =
        push_with_a_miscabled_canary("sonic", sonic_world, |s| s.running.clone()).await;
    let log = f.servers["sw1"].commands();
    let point = log
        .iter()
        .find_map(|c| c.strip_prefix("sudo config checkpoint "))
        .unwrap()
        .to_string();
    assert!(
        log.contains(&format!("sudo config rollback {point}")),
        "{log:?}"
    );
    let state = f.servers["sw1"].state.lock().unwrap();
    assert_eq!(state.running, before);
    // The rest of the rollout stopped: nobody else was touched.
    f.none_but_sw1_ran("sudo config");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comware_switches_pushed_through_provisioner_push() {
    let f = SshFabric::new("comware", comware_world, |_, _| {}).await;
    f.push_ok().await;
    for (sw, server) in &f.servers {
        let log = server.commands();
        // 60 s confirm timer: a one-minute commit delay, then the commit.
        assert!(
            log.contains(&"configuration commit delay 1".to_string()),
            "{sw}: {log:?}"
        );
        assert!(
            log.contains(&"configuration commit".to_string()),
            "{sw}: {log:?}"
        );
        assert!(log.contains(&"save force".to_string()), "{sw}: {log:?}");
        let state = server.state.lock().unwrap();
        assert!(state.delay.is_none(), "{sw}: committed");
        assert!(state.running.contains(&format!(" sysname {sw}")), "{sw}");
        assert!(
            state.running.contains("ssh server enable"),
            "{sw}: management kept"
        );
        assert_eq!(state.saved, state.running, "{sw}: saved");
        assert!(state.files.is_empty(), "{sw}: {:?}", state.files.keys());
    }
    f.second_push_changes_nothing("configuration").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn comware_verification_mismatch_rolls_back_to_the_saved_file() {
    let (f, before) =
        push_with_a_miscabled_canary("comware", comware_world, |s| s.running.clone()).await;
    let log = f.servers["sw1"].commands();
    let point = saved_point(&log);
    assert!(
        log.contains(&format!("configuration replace file {point}")),
        "{log:?}"
    );
    // The rollback is saved (a reboot keeps it): the startup file holds
    // the configuration from before, never the failed candidate.
    let state = f.servers["sw1"].state.lock().unwrap();
    assert_eq!(state.running.trim_end(), before.trim_end());
    assert_eq!(state.saved.trim_end(), before.trim_end());
    // The rest of the rollout stopped: nobody else was touched.
    f.none_but_sw1_ran("configuration");
}

/// A push whose canary sw1 sees another switch on its first cabled port:
/// it must fail verification (exit 2, the neighbour named). Returns the
/// fabric and what `running` read of sw1's state before the push.
async fn push_with_a_miscabled_canary<S: Script, R>(
    vendor: &str,
    make: impl Fn(&str, &[Lldp], &[planner::expect::ExpectedPort]) -> S,
    running: impl Fn(&S) -> R,
) -> (SshFabric<S>, R) {
    let f = SshFabric::new(vendor, make, |sw, lldp: &mut Vec<Lldp>| {
        if sw == "sw1"
            && let Some(first) = lldp.first_mut()
        {
            first.1 = "sw99".to_string();
        }
    })
    .await;
    let before = running(&f.servers["sw1"].state.lock().unwrap());
    let out = f.push(&["--canary", "sw1"]).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("LLDP neighbour is sw99"), "{stdout}");
    (f, before)
}
