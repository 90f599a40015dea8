//! Test servers for the push clients, on loopback over TLS (a self-signed
//! certificate made here with rcgen; clients trust it through `ca_file`):
//! an NVUE REST server and an Arista eAPI server, each a state machine
//! written from the vendor's documentation (docs/switch-push.md,
//! "Vendors", says what is documented and what is assumed). Every request
//! is logged so tests can assert the exact sequence.
//!
//! Both servers check HTTP basic auth (401 otherwise), keep a running
//! configuration, a pending candidate and a confirm timer that rolls the
//! device back when it runs out, and report an operational state (the
//! "world": hostname, interfaces, LLDP neighbours) that tests build from
//! the plan's cables.
//!
//! Management is real in both (issue #30): each server listens on the
//! address its configuration gives its management interface (NVUE
//! `interface eth0`, EOS `interface Management1`, 127.0.0.1 here), and
//! once an applied configuration loses that address, the VRF route, or
//! the API service, the server answers nothing (every connection is
//! closed) until its confirm timer puts the previous configuration back;
//! a configuration without push's user refuses its login. The behaviour
//! and the release it follows is cited where it is written.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Response, StatusCode};

use crate::http_server::Received;
use serde_json::{Map, Value, json};
use tokio_rustls::rustls;

#[path = "fabric_bgp.rs"]
pub mod fabric_bgp;

pub use fabric_bgp::{BgpConf, Fabric, SharedBgp, Speaker, Speaking};

/// A certificate authority for loopback servers: one self-signed
/// certificate for `localhost` and 127.0.0.1.
pub struct Tls {
    /// PEM of the certificate (the clients' `ca_file`).
    pub ca_pem: String,
    config: Arc<rustls::ServerConfig>,
}

impl Tls {
    pub fn new() -> Tls {
        Tls::issued(&["localhost", "127.0.0.1"], true)
    }

    /// A certificate issued for `names` only (with `ip`, for 127.0.0.1
    /// too): a switch's management certificate names the switch, not its
    /// address.
    pub fn for_names(names: &[&str]) -> Tls {
        Tls::issued(names, false)
    }

    fn issued(names: &[&str], ip: bool) -> Tls {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut params =
            rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .expect("params");
        if ip {
            params
                .subject_alt_names
                .push(rcgen::SanType::IpAddress("127.0.0.1".parse().expect("ip")));
        }
        let cert = params.self_signed(&key).expect("cert");
        let der = cert.der().clone();
        let key_der = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(vec![der], key_der)
        .expect("server config");
        Tls {
            ca_pem: cert.pem(),
            config: Arc::new(config),
        }
    }
}

/// What a handler answers.
pub enum Reply {
    /// A status and a JSON body.
    Json(u16, Value),
    /// Close the connection without an answer (a dropped connection).
    Drop,
    /// Ask again after this long (the state is not locked meanwhile).
    Later(Duration),
    /// Done already; the answer comes after this long (a commit whose
    /// answer is slow: a push killed meanwhile has committed).
    Slow(Duration, Value),
    /// A status, headers and a body as given (a hostile or broken
    /// device).
    Raw(u16, Vec<(&'static str, String)>, Vec<u8>),
}

/// A hostile or broken device's answers: given what was asked (an NVUE
/// request's URI, an eAPI request's commands) and the honest JSON answer,
/// the bytes to send instead (`None`: the honest answer). The fuzz
/// target of device answers sets it.
#[derive(Clone)]
pub struct Mutator(pub Arc<MutateFn>);

/// See [`Mutator`].
pub type MutateFn = dyn Fn(&str, &Value) -> Option<Vec<u8>> + Send + Sync;

impl std::fmt::Debug for Mutator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Mutator")
    }
}

impl Mutator {
    /// `reply`, mutated when it is a JSON answer.
    fn apply(this: Option<&Mutator>, what: &str, reply: Reply) -> Reply {
        match (this, reply) {
            (Some(m), Reply::Json(code, v)) => match (m.0)(what, &v) {
                Some(bytes) => Reply::Raw(
                    code,
                    vec![("content-type", "application/json".to_string())],
                    bytes,
                ),
                None => Reply::Json(code, v),
            },
            (_, r) => r,
        }
    }
}

/// What a hostile or broken device does instead of answering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hostile {
    /// Every answer is a 307 to this address (another host, plain HTTP).
    Redirect(String),
    /// Every answer is a body longer than any device sends.
    Endless,
    /// Every answer is a 400 whose text echoes the request's
    /// Authorization header (a device that logs it back).
    EchoAuth,
}

impl Hostile {
    /// The reply to `req`.
    pub fn reply(&self, req: &Req) -> Reply {
        match self {
            Hostile::Redirect(to) => Reply::Raw(
                307,
                vec![("location", format!("{to}{}", req.uri))],
                Vec::new(),
            ),
            Hostile::Endless => Reply::Raw(
                200,
                vec![("content-type", "application/json".into())],
                vec![b' '; 40 * 1024 * 1024],
            ),
            Hostile::EchoAuth => Reply::Json(
                400,
                json!({"title": "Bad Request", "detail": format!("cannot parse header Authorization: {}", req.authorization.clone().unwrap_or_default())}),
            ),
        }
    }
}

/// A request as the handlers see it.
pub struct Req {
    pub method: String,
    /// Path and query, as sent.
    pub uri: String,
    /// `(user, password)` of basic auth.
    pub auth: Option<(String, String)>,
    /// The Authorization header as sent.
    pub authorization: Option<String>,
    pub body: Value,
    /// True when this is the second call after [`Reply::Later`].
    pub delayed: bool,
}

fn basic_auth(h: Option<&hyper::header::HeaderValue>) -> Option<(String, String)> {
    use std::str;
    let v = h?.to_str().ok()?.strip_prefix("Basic ")?;
    let bytes = base64_decode(v)?;
    let s = str::from_utf8(&bytes).ok()?;
    let (u, p) = s.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let mut buf = 0u32;
    let mut bits = 0;
    for c in s.bytes().filter(|c| *c != b'=') {
        let v = table.iter().position(|t| *t == c)? as u32;
        buf = (buf << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buf >> bits) as u8);
        }
    }
    Some(out)
}

type Handler = Arc<dyn Fn(&Req) -> Reply + Send + Sync>;

/// Serves `handler` over TLS on a loopback port; returns the address.
pub async fn serve(tls: &Tls, handler: Handler) -> SocketAddr {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls.config.clone());
    crate::http_server::serve(Some(acceptor), move |received: Received| {
        let handler = handler.clone();
        async move {
            let mut req = Req {
                auth: basic_auth(received.headers.get(hyper::header::AUTHORIZATION)),
                authorization: received.header(hyper::header::AUTHORIZATION),
                body: received.json().unwrap_or(Value::Null),
                method: received.method,
                uri: received.uri,
                delayed: false,
            };
            let mut reply = handler(&req);
            if let Reply::Later(d) = reply {
                tokio::time::sleep(d).await;
                req.delayed = true;
                reply = handler(&req);
            }
            if let Reply::Slow(d, v) = reply {
                tokio::time::sleep(d).await;
                reply = Reply::Json(200, v);
            }
            if let Reply::Raw(status, headers, body) = reply {
                let mut r = Response::new(Full::new(Bytes::from(body)));
                *r.status_mut() = StatusCode::from_u16(status).expect("status");
                for (k, v) in headers {
                    r.headers_mut()
                        .insert(k, hyper::header::HeaderValue::from_str(&v).expect("header"));
                }
                return Ok::<_, std::io::Error>(r);
            }
            match reply {
                Reply::Json(status, v) => {
                    let mut r = Response::new(Full::new(Bytes::from(v.to_string())));
                    *r.status_mut() = StatusCode::from_u16(status).expect("status");
                    r.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static("application/json"),
                    );
                    Ok::<_, std::io::Error>(r)
                }
                Reply::Drop | Reply::Later(_) | Reply::Slow(..) | Reply::Raw(..) => {
                    Err(std::io::Error::other("dropped by the test server"))
                }
            }
        }
    })
    .await
}

/// What a switch reports about the world (not configuration).
#[derive(Clone, Debug, Default)]
pub struct World {
    pub hostname: String,
    /// Interface -> (up, speed in Mb/s).
    pub interfaces: BTreeMap<String, (bool, u64)>,
    /// Interface -> (neighbour system, neighbour port).
    pub lldp: BTreeMap<String, (String, String)>,
}

/// What `a` has that `b` has not (NVUE's diff query), written here apart
/// from the client's.
pub fn tree_minus(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Object(am), Value::Object(bm)) => {
            let mut out = Map::new();
            for (k, av) in am {
                match bm.get(k) {
                    None => {
                        out.insert(k.clone(), av.clone());
                    }
                    Some(bv) => {
                        let d = tree_minus(av, bv);
                        let same = d == json!({}) || (av == &json!({}) && bv.is_object());
                        if !same {
                            out.insert(k.clone(), d);
                        }
                    }
                }
            }
            Value::Object(out)
        }
        (x, y) if x == y => json!({}),
        (x, _) => x.clone(),
    }
}

pub fn merge(into: &mut Value, patch: &Value) {
    match (into, patch) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(k) {
                    Some(old) if old.is_object() && v.is_object() => merge(old, v),
                    _ => {
                        a.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

// ----------------------------------------------------------------------
// NVUE

#[derive(Clone, Debug)]
pub struct Revision {
    pub state: String,
    pub tree: Value,
    pub issue: Option<String>,
    /// Times the state was read since the last apply: the first read
    /// after an apply says `checking`.
    reads: u32,
}

/// How an NVUE test server reads the confirm exchange. NVIDIA documents
/// the CLI (`nv config apply --confirm <time>`, Config-Commands.md of the
/// NVUE command reference, "Introduced in Cumulus Linux 5.0.0"; the
/// revision states of `nv config revision`, 5.5.0) but not its REST form;
/// each reading is a public client's (docs/switch-push.md, "The NVUE
/// confirm exchange"), written here from that client, not from ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmReading {
    /// entropia/gpn-noc-gpncfg (`gpncfg/deployment/__init__.py`): the
    /// applied revision waits in `confirm`; `{"state":"confirm_yes"}`
    /// keeps it, `confirm_no` (its cancel) goes back; an apply while
    /// another revision waits stays in `apply` ("waiting on other
    /// revisions") until that one is answered or expires.
    ConfirmState,
    /// NVIDIA/nv-config-manager (`nv_config_manager_workflows.clients.
    /// device.cumulus`, as its tests exercise it): the revision waits in
    /// `ays`; a second apply with
    /// `"auto-prompt":{"ays":"ays_yes"}` keeps it (`ays_no` goes back);
    /// an apply while another revision waits is refused (409).
    AysPrompt,
}

/// Per switch (hostname), the swp ports its applied configuration
/// configures: shared by the servers of one fabric.
pub type SharedPorts = Arc<Mutex<BTreeMap<String, std::collections::BTreeSet<String>>>>;

/// One moment of the fabric as a switch's request sees it: what the
/// others say about BGP, and their configured ports.
type Frozen = (
    Option<BTreeMap<String, Speaking>>,
    Option<BTreeMap<String, std::collections::BTreeSet<String>>>,
);

/// The NVUE REST state machine.
#[derive(Debug)]
pub struct NvueState {
    pub user: String,
    pub password: String,
    pub world: World,
    pub revisions: BTreeMap<u64, Revision>,
    pub applied: u64,
    pub saved: Option<Value>,
    /// The confirm timer: (revision, deadline, revision to go back to).
    pub confirm: Option<(u64, Instant, u64)>,
    /// Candidates with a larger `link mtu` are refused at apply.
    pub max_mtu: u64,
    /// Drop the connection of the apply-with-confirm request (after
    /// applying it).
    pub drop_on_commit: bool,
    /// Delay of operational reads of interfaces.
    pub observe_delay: Duration,
    /// True when applies save by themselves (Cumulus 5.9 and later).
    pub auto_save: bool,
    /// Hold the confirm's first state read until the timer has run out.
    pub stall_confirm: bool,
    /// The release `GET /nvue_v1/system` reports (`build`).
    pub release: String,
    /// Answers every request this way instead.
    pub hostile: Option<Hostile>,
    /// The address the API is reached at: management is lost when no
    /// applied interface carries it.
    pub api_address: String,
    /// How the confirm exchange goes.
    pub reading: ConfirmReading,
    /// An apply queued behind a revision that waits for its confirm
    /// ([`ConfirmReading::ConfirmState`]): (revision, apply body).
    pub queued: Option<(u64, Value)>,
    /// A fresh fabric: swp ports are administratively down until their
    /// switch configures them (`nv set interface swpN`; issue #30's
    /// reference notes, not checked on a device), so a cable is up only
    /// when both ends are configured. The map (hostname -> configured
    /// swp ports) is shared by every server of the fabric.
    pub fabric: Option<SharedPorts>,
    /// What every switch of the fabric says about BGP (fabric_bgp.rs),
    /// for sessions, BFD and learned routes: with `None` a configured
    /// neighbour never comes up.
    pub bgp: Option<SharedBgp>,
    /// Answers sent instead of the honest ones (fuzzing).
    pub mutate: Option<Mutator>,
    /// A cable of this port fails when a candidate is applied with a
    /// confirm timer (a world event during a push into a running fabric).
    pub fail_on_commit: Option<String>,
    /// The other switches as one verification read found them (BGP,
    /// configured ports), from its operational interface read to its last
    /// operational read ([`NvueState::freeze_for`]). A real switch answers
    /// each GET from its state at that moment (NVIDIA's NVUE API page,
    /// "Supported HTTP Methods", Cumulus Linux 5.6 to 5.12: "The GET
    /// method displays configuration and operational data, and is
    /// equivalent to the nv show commands": one `nv show` per request,
    /// and nothing documented ties two requests together), so a peer committing between the client's
    /// reads can show a route through a session an earlier read called
    /// down; the client's settle loop reads again. The tests run with
    /// `--settle 0s`, where a mismatch is final: the one moment per
    /// verification read is the tests' choice, not NVUE behaviour.
    frozen: Option<Frozen>,
    pub log: Vec<String>,
}

/// An NVUE switch's management configuration as NVIDIA's "Replace an
/// Entire Configuration" example carries it in the root patch (NVUE-API.md,
/// Cumulus Linux 5.9 and 5.15: `interface eth0` with its address and `ip
/// vrf mgmt`, type `eth`; `vrf mgmt` with its static default route), plus
/// the user push logs in as (`nv set system aaa user`, User-Accounts.md)
/// and NTP and syslog servers in the management VRF (`nv set service ntp
/// mgmt server`, `nv set service syslog mgmt server`, Cumulus Linux 5.9).
pub fn nvue_management(hostname: &str, user: &str, address: &str) -> Value {
    json!({
        "system": {
            "hostname": hostname,
            "aaa": {"user": {user: {"role": "system-admin", "hashed-password": "$6$rounds=5000$efl$0123456789abcdef"}}}
        },
        "service": {
            "ntp": {"mgmt": {"server": {"192.0.2.123": {"iburst": "on"}}}},
            "syslog": {"mgmt": {"server": {"192.0.2.50": {}}}}
        },
        "interface": {"eth0": {"ip": {"address": {format!("{address}/8"): {}}, "vrf": "mgmt"}, "type": "eth"}},
        "vrf": {"mgmt": {"router": {"static": {"0.0.0.0/0": {"address-family": "ipv4-unicast",
            "via": {"127.0.0.254": {"type": "ipv4-address"}}}}}}}
    })
}

/// What the management configuration of a switch lets push do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reachable, push's user known.
    Open,
    /// Reachable, push's user gone: every login is refused.
    NoUser,
    /// The address, its VRF route or the API service is gone: nothing
    /// answers.
    Dark,
}

impl NvueState {
    pub fn new(world: World, user: &str, password: &str, initial: Value) -> NvueState {
        let mut revisions = BTreeMap::new();
        revisions.insert(
            1,
            Revision {
                state: "applied".into(),
                tree: initial,
                issue: None,
                reads: 0,
            },
        );
        NvueState {
            user: user.into(),
            password: password.into(),
            world,
            revisions,
            applied: 1,
            saved: None,
            confirm: None,
            max_mtu: 9216,
            drop_on_commit: false,
            observe_delay: Duration::ZERO,
            auto_save: false,
            stall_confirm: false,
            release: "5.9.1".into(),
            hostile: None,
            api_address: "127.0.0.1".into(),
            reading: ConfirmReading::ConfirmState,
            queued: None,
            fabric: None,
            bgp: None,
            mutate: None,
            fail_on_commit: None,
            frozen: None,
            log: Vec::new(),
        }
    }

    /// Freezes the fabric as `req` finds it when `req` starts a
    /// verification read (the client's `observe` reads the operational
    /// interfaces first), keeps it for the reads that follow (operational
    /// reads and the applied VRF list), and lets it go at any other
    /// request ([`NvueState::frozen`]).
    fn freeze_for(&mut self, req: &Req) {
        let operational = req.method == "GET"
            && (req.uri.contains("rev=operational") || req.uri.contains("rev=applied"));
        if req.method == "GET"
            && req.uri.starts_with("/nvue_v1/interface?")
            && req.uri.contains("rev=operational")
        {
            self.frozen = Some((
                self.bgp.as_ref().map(|b| b.lock().expect("fabric").clone()),
                self.fabric
                    .as_ref()
                    .map(|f| f.lock().expect("fabric").clone()),
            ));
        } else if !operational {
            self.frozen = None;
        }
    }

    /// What the applied configuration lets push do. The API listens on
    /// the management address (NVUE-API.md, "API Port and Listening
    /// Address": eth0's address in the management VRF); `nv set system
    /// api state disabled` turns the REST API off (NVUE-API.md, "Use the
    /// API", 5.15; 5.9's `nv set system api state` likewise); an address
    /// whose VRF lost its default route cannot answer a client off its
    /// subnet; a user unset from `system aaa user` no longer logs in.
    pub fn access(&self) -> Access {
        let t = &self.revisions[&self.applied].tree;
        let carries = t
            .get("interface")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .find(|(_, i)| {
                i.pointer("/ip/address")
                    .and_then(Value::as_object)
                    .is_some_and(|a| {
                        a.keys()
                            .any(|k| k.split('/').next() == Some(self.api_address.as_str()))
                    })
            });
        let Some((_, i)) = carries else {
            return Access::Dark;
        };
        if let Some(vrf) = i.pointer("/ip/vrf").and_then(Value::as_str)
            && vrf != "default"
            && t.pointer(&format!("/vrf/{vrf}/router/static/0.0.0.0~10"))
                .is_none()
        {
            return Access::Dark;
        }
        if t.pointer("/system/api/state").and_then(Value::as_str) == Some("disabled") {
            return Access::Dark;
        }
        let had_user = self.revisions[&1]
            .tree
            .pointer(&format!("/system/aaa/user/{}", self.user))
            .is_some();
        if had_user
            && t.pointer(&format!("/system/aaa/user/{}", self.user))
                .is_none()
        {
            return Access::NoUser;
        }
        Access::Open
    }

    /// The applied configuration.
    pub fn applied_tree(&mut self) -> Value {
        self.expire();
        self.revisions[&self.applied].tree.clone()
    }

    /// Rolls back a confirm whose timer ran out.
    pub fn expire(&mut self) {
        if let Some((rev, deadline, back)) = self.confirm
            && Instant::now() >= deadline
        {
            self.applied = back;
            if let Some(r) = self.revisions.get_mut(&rev) {
                r.state = "confirm_fail".into();
            }
            self.confirm = None;
            self.run_queued();
        }
    }

    /// Applies the apply that waited behind an answered revision.
    fn run_queued(&mut self) {
        if let Some((id, body)) = self.queued.take() {
            let _ = self.apply(id, &body);
        }
    }

    /// The state in which an applied revision waits for its confirm.
    fn waiting_state(&self) -> &'static str {
        match self.reading {
            ConfirmReading::ConfirmState => "confirm",
            ConfirmReading::AysPrompt => "ays",
        }
    }

    /// The swp ports the applied configuration configures.
    fn configured_ports(&self) -> std::collections::BTreeSet<String> {
        self.revisions[&self.applied]
            .tree
            .get("interface")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, _)| k.clone())
            .filter(|k| k.starts_with("swp"))
            .collect()
    }

    /// Tells the fabric which ports this switch configures now.
    pub fn publish(&self) {
        if let Some(f) = &self.fabric {
            f.lock()
                .expect("fabric")
                .insert(self.world.hostname.clone(), self.configured_ports());
        }
        if let Some(b) = &self.bgp {
            b.lock()
                .expect("fabric")
                .insert(self.world.hostname.clone(), self.speaking());
        }
    }

    /// What this switch tells the fabric about BGP.
    fn speaking(&self) -> Speaking {
        let tree = &self.revisions[&self.applied].tree;
        Speaking {
            conf: BgpConf {
                addresses: nvue_addresses(tree),
                speakers: nvue_bgp(tree),
            },
            world: self.world.clone(),
            configured: self.fabric.as_ref().map(|_| self.configured_ports()),
        }
    }

    /// `f` of the fabric as published, with this switch as it is now.
    fn with_fabric<R>(&self, f: impl FnOnce(&Fabric) -> R) -> Option<R> {
        let shared = self.bgp.as_ref()?;
        let mut all = match self.frozen.as_ref().and_then(|(b, _)| b.clone()) {
            Some(b) => b,
            None => shared.lock().expect("fabric").clone(),
        };
        all.insert(self.world.hostname.clone(), self.speaking());
        Some(f(&Fabric(&all)))
    }

    /// The BGP neighbours of each VRF of the applied configuration, as
    /// `nv show vrf <v> router bgp neighbor -o json` reads them. Up to
    /// 5.11 that object is the detail: per neighbour `remote-as` and the
    /// session `state` (`established`, `idle`: the state column of the
    /// Troubleshooting-BGP pages). From 5.12 it is a summary and the
    /// detail needs `--view=detail` (REST `?view=detail`): NVIDIA's note
    /// on the 5.12 Troubleshooting-BGP page; NVIDIA publishes no JSON
    /// sample of the summary, so without `detail` each neighbour here
    /// is an empty object (a client must ask for the detail). From 5.15
    /// the session state is `session-state` and `state` is the
    /// neighbour's admin state (`enabled`), with `last-reset-reason` and
    /// `last-reset-code` (the 5.15 page's `nv show vrf default router bgp
    /// neighbor swp51`); before 5.15 the reason is given the same way
    /// here, not checked on a device.
    ///
    /// The session is the fabric's ([`Fabric::session`], written from
    /// RFC 4271): established when both ends accept each other; the
    /// reason is FRR's last reset text as this switch sees it
    /// (`peer_down_str` of bgpd/bgp_fsm.c, codes `PEER_DOWN_*` of
    /// bgpd/bgpd.h; the 5.15 Troubleshooting-BGP page shows "Waiting for
    /// Peer IPv6 LLA", code 28 = PEER_DOWN_NBR_ADDR): 13 "BGP
    /// Notification received", 14 "BGP Notification send" (an FRR `show
    /// bgp neighbors json` with Bad Peer AS shows `lastResetDueTo` "BGP
    /// Notification send", code 14), 25 "Interface down", 27 "Waiting for
    /// NHT".
    ///
    /// A neighbour with BFD has `bfd.status` `up` or `down` in the
    /// detail: the key the client reads; NVIDIA documents the BFD peers
    /// of a VRF as `nv show vrf <v> router bfd peers` (state per session,
    /// NVUE command reference of 5.15) and publishes no JSON of either,
    /// docs/switch-push.md.
    pub fn bgp_neighbours(&self, detail: bool) -> BTreeMap<String, Value> {
        let summary = self.release_at_least(5, 12) && !detail;
        let me = self.world.hostname.clone();
        let mut out = BTreeMap::new();
        for s in nvue_bgp(&self.revisions[&self.applied].tree) {
            let mut m = Map::new();
            for (peer, remote_as) in &s.neighbours {
                if summary {
                    m.insert(peer.clone(), json!({}));
                    continue;
                }
                let (session, bfd) = self
                    .with_fabric(|f| {
                        let one = f.session(&me, &s, peer);
                        let both = one.and_then(|()| {
                            if f.established(&me, &s, peer) {
                                Ok(())
                            } else {
                                Err(("", 0))
                            }
                        });
                        (both, f.bfd_up(&me, &s, peer))
                    })
                    .unwrap_or((Err(("", 0)), false));
                let (state, reason) = match session {
                    Ok(()) => ("established", None),
                    Err(r) => ("idle", Some(r).filter(|r| r.1 != 0)),
                };
                let mut n = json!({"remote-as": remote_as});
                if self.is_515() {
                    n["session-state"] = json!(state);
                    n["state"] = json!("enabled");
                } else {
                    n["state"] = json!(state);
                }
                if let Some((text, code)) = reason {
                    n["last-reset-reason"] = json!(text);
                    n["last-reset-code"] = json!(code);
                }
                if s.bfd.contains(peer) {
                    n["bfd"] = json!({"status": if bfd { "up" } else { "down" }});
                }
                m.insert(peer.clone(), n);
            }
            out.insert(s.vrf.clone(), Value::Object(m));
        }
        out
    }

    /// True when `port` is up: cabled up in the world and, on a fresh
    /// fabric, configured at both ends.
    fn link_up(&self, port: &str, cabled_up: bool) -> bool {
        let Some(f) = &self.fabric else {
            return cabled_up;
        };
        if !cabled_up || !self.configured_ports().contains(port) {
            return false;
        }
        let configured = |ports: &BTreeMap<String, std::collections::BTreeSet<String>>,
                          peer: &str,
                          peer_port: &str| {
            ports.get(peer).is_some_and(|p| p.contains(peer_port))
        };
        match self.world.lldp.get(port) {
            Some((peer, peer_port)) => match self.frozen.as_ref().and_then(|(_, p)| p.as_ref()) {
                Some(p) => configured(p, peer, peer_port),
                None => configured(&f.lock().expect("fabric"), peer, peer_port),
            },
            None => true,
        }
    }

    fn operational_interfaces(&self) -> Value {
        let mut m = Map::new();
        for (name, (cabled_up, speed)) in &self.world.interfaces {
            let up = &self.link_up(name, *cabled_up);
            let mut i = json!({"link": {"state": {(if *up { "up" } else { "down" }): {}}, "speed": format!("{}G", speed / 1000)}});
            if let Some((sys, port)) = self.world.lldp.get(name).filter(|_| *up) {
                i["lldp"] = json!({"neighbor": {sys.clone(): {"chassis": {"system-name": sys}, "port": {"name": port}}}});
            }
            m.insert(name.clone(), i);
        }
        Value::Object(m)
    }

    /// True from Cumulus Linux 5.15.
    fn is_515(&self) -> bool {
        self.release_at_least(5, 15)
    }

    /// True from Cumulus Linux `major.minor`.
    fn release_at_least(&self, major: u32, minor: u32) -> bool {
        let mut v = self
            .release
            .split('.')
            .map(|x| x.parse::<u32>().unwrap_or(0));
        (v.next().unwrap_or(0), v.next().unwrap_or(0)) >= (major, minor)
    }

    /// The next-hop groups of the RIB (`nv show router nexthop rib`,
    /// 5.15): one group per static route, numbered in route order.
    fn nexthop_groups(&self) -> Value {
        let mut m = Map::new();
        for (i, (_, _, _, via)) in self.rib_routes().into_iter().enumerate() {
            m.insert((i + 1).to_string(), json!({"resolved-via": via}));
        }
        Value::Object(m)
    }

    /// The routes of the RIB: the applied static routes, then those BGP
    /// learned from the fabric ([`Fabric::rib`]), as (VRF, prefix,
    /// protocol, via).
    fn rib_routes(&self) -> Vec<(String, String, &'static str, Value)> {
        let mut out: Vec<_> = self
            .static_routes()
            .into_iter()
            .map(|(v, p, via)| (v, p, "static", via))
            .collect();
        let me = self.world.hostname.clone();
        for ((vrf, prefix), hops) in self.with_fabric(|f| f.rib(&me)).unwrap_or_default() {
            let via: Map<String, Value> = hops.into_iter().map(|h| (h, json!({}))).collect();
            out.push((vrf, prefix, "bgp", Value::Object(via)));
        }
        out
    }

    /// The applied static routes whose next hops are reachable: (VRF,
    /// prefix, via). A next hop is resolved over the connected subnet
    /// that holds it, and a connected route exists only while its port is
    /// up (FRR's zebra, whose RIB NVUE shows: a static route whose
    /// nexthop does not resolve is not installed, FRR user guide "Static
    /// Route Commands" and "Nexthop Tracking"), so a via over a dark port
    /// is left out, and a route with none left is not in the RIB.
    fn static_routes(&self) -> Vec<(String, String, Value)> {
        let applied = &self.revisions[&self.applied].tree;
        let addresses = nvue_addresses(applied);
        let reachable = |hop: &str| {
            hop.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| {
                addresses.iter().any(|(port, a, len)| {
                    fabric_bgp::same_subnet(*a, ip, *len)
                        && self
                            .world
                            .interfaces
                            .get(port)
                            .is_some_and(|(cabled, _)| self.link_up(port, *cabled))
                })
            })
        };
        let mut out = Vec::new();
        for (vrf, v) in applied
            .get("vrf")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            for (prefix, r) in v
                .pointer("/router/static")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let via: Map<String, Value> = r
                    .get("via")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .filter(|(hop, _)| reachable(hop))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if !via.is_empty() {
                    out.push((vrf.clone(), prefix.clone(), Value::Object(via)));
                }
            }
        }
        out
    }

    /// The routing table of each VRF: the applied static routes and the
    /// routes BGP learned ([`NvueState::rib_routes`]), in the shape of the
    /// release: up to 5.14 `route/<prefix>/protocol/<static|bgp>/
    /// entry-index/1/via/<via>` (NVUE command reference RIB.md, since
    /// 5.0.0: `nv show vrf <vrf-id> router rib <afi> route <route-id>
    /// protocol <protocol-id> entry-index <index> via <via-id>`; the
    /// equal paths of one entry are its `via`s); from 5.15
    /// `route/<prefix>/route-entry/1/{protocol, nexthop-group-id}`
    /// (NVUE-API.md of 5.15, "Retrieve View Types"), the next hops in
    /// [`NvueState::nexthop_groups`].
    fn operational_vrfs(&self, detail: bool) -> Value {
        let mut m = Map::new();
        for (vrf, ns) in self.bgp_neighbours(detail) {
            m.insert(vrf, json!({"router": {"bgp": {"neighbor": ns}}}));
        }
        for (i, (vrf, prefix, proto, via)) in self.rib_routes().into_iter().enumerate() {
            let entry = if self.is_515() {
                json!({"route-entry": {"1": {"protocol": proto, "nexthop-group-id": i + 1,
                    "flags": {"installed": {}, "selected": {}}}}})
            } else {
                json!({"protocol": {proto: {"entry-index": {"1": {"via": via}}}}})
            };
            let routes = m.entry(vrf).or_insert_with(|| json!({"router": {}}));
            if routes.pointer("/router/rib").is_none() {
                routes["router"]["rib"] = json!({"ipv4": {"route": {}}});
            }
            routes["router"]["rib"]["ipv4"]["route"][prefix] = entry;
        }
        Value::Object(m)
    }

    /// An operational collection as a query asks for it: from 5.15 the
    /// `include` parameter keeps only the paths it names (NVUE-API.md of
    /// 5.15, "Retrieve View Types"); 5.9's NVUE-API.md documents only
    /// `view`, so there the whole collection answers.
    fn restricted(&self, tree: Value, q: &BTreeMap<&str, &str>) -> Value {
        match q.get("include") {
            Some(p) if self.is_515() => included(&tree, p),
            _ => tree,
        }
    }

    /// A delay before answering `req`: slow operational reads, and a
    /// confirm that stalls past the deadline.
    fn delay(&mut self, req: &Req) -> Option<Duration> {
        if req.delayed {
            return None;
        }
        if req.uri.starts_with("/nvue_v1/interface") && !self.observe_delay.is_zero() {
            return Some(self.observe_delay);
        }
        if self.stall_confirm
            && req.method == "GET"
            && let Some((rev, deadline, _)) = self.confirm
            && req.uri == format!("/nvue_v1/revision/{rev}")
            && self.revisions.get(&rev).is_some_and(|r| r.reads >= 2)
        {
            return Some(
                deadline.saturating_duration_since(Instant::now()) + Duration::from_millis(200),
            );
        }
        None
    }

    fn valid(&self, tree: &Value) -> Option<String> {
        // 5.15 configures LLDP under `system` (Link-Layer-Discovery-Protocol.md
        // of 5.15); `service lldp` is no longer in its schema.
        if self.is_515() && tree.pointer("/service/lldp").is_some() {
            return Some(
                "Config invalid at service.lldp: unknown property (5.15: system lldp)".to_string(),
            );
        }
        for (name, i) in tree
            .get("interface")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if let Some(mtu) = i.pointer("/link/mtu").and_then(Value::as_u64)
                && mtu > self.max_mtu
            {
                return Some(format!(
                    "interface {name}: link mtu {mtu} is above this platform's {}",
                    self.max_mtu
                ));
            }
        }
        None
    }

    fn rev_id(q: &str) -> Option<u64> {
        q.parse().ok()
    }

    pub fn handle(&mut self, req: &Req) -> Reply {
        if let Some(d) = self.delay(req) {
            return Reply::Later(d);
        }
        self.expire();
        self.publish();
        self.freeze_for(req);
        let reply = self.handle_published(req);
        self.publish();
        Mutator::apply(self.mutate.as_ref(), &req.uri, reply)
    }

    fn handle_published(&mut self, req: &Req) -> Reply {
        let body_note = match &req.body {
            Value::Null => String::new(),
            b if req.uri.starts_with("/nvue_v1/revision") => format!(" {b}"),
            _ => " <tree>".to_string(),
        };
        let access = self.access();
        if access == Access::Dark {
            self.log
                .push(format!("(dark) {} {}{}", req.method, req.uri, body_note));
            return Reply::Drop;
        }
        if let Some(h) = &self.hostile {
            self.log
                .push(format!("(hostile) {} {}", req.method, req.uri));
            return h.reply(req);
        }
        self.log
            .push(format!("{} {}{}", req.method, req.uri, body_note));
        if req.auth != Some((self.user.clone(), self.password.clone())) || access == Access::NoUser
        {
            return Reply::Json(401, json!({"title": "Unauthorized", "status": 401}));
        }
        let (path, query) = req.uri.split_once('?').unwrap_or((&req.uri, ""));
        let q: BTreeMap<&str, &str> = query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .collect();
        let not_found = || {
            Reply::Json(
                404,
                json!({"title": "Not Found", "detail": format!("no {path}")}),
            )
        };
        match (req.method.as_str(), path) {
            ("GET", "/nvue_v1/system") => Reply::Json(
                200,
                json!({"hostname": self.world.hostname, "build": format!("Cumulus Linux {}", self.release)}),
            ),
            ("GET", "/nvue_v1/interface") => {
                Reply::Json(200, self.restricted(self.operational_interfaces(), &q))
            }
            ("GET", "/nvue_v1/vrf") if q.get("rev") == Some(&"applied") => Reply::Json(
                200,
                self.revisions[&self.applied]
                    .tree
                    .get("vrf")
                    .cloned()
                    .unwrap_or(json!({})),
            ),
            ("GET", "/nvue_v1/vrf") => {
                let detail = q.get("view") == Some(&"detail");
                Reply::Json(200, self.restricted(self.operational_vrfs(detail), &q))
            }
            ("GET", p) if p.starts_with("/nvue_v1/vrf/") => {
                // One object of the operational VRFs (`nv show vrf <v>
                // router bgp neighbor`, `... router rib ipv4 route`: the
                // NVUE command reference, since 5.0.0).
                let pointer = p["/nvue_v1/vrf".len()..].to_string();
                let detail = q.get("view") == Some(&"detail");
                match self.operational_vrfs(detail).pointer(&pointer) {
                    Some(v) => Reply::Json(200, v.clone()),
                    None => not_found(),
                }
            }
            ("GET", "/nvue_v1/router/nexthop/rib") if self.is_515() => {
                Reply::Json(200, self.nexthop_groups())
            }
            ("POST", "/nvue_v1/revision") => {
                let id = self.revisions.keys().max().copied().unwrap_or(0) + 1;
                let tree = self.revisions[&self.applied].tree.clone();
                self.revisions.insert(
                    id,
                    Revision {
                        state: "pending".into(),
                        tree,
                        issue: None,
                        reads: 0,
                    },
                );
                Reply::Json(
                    200,
                    json!({id.to_string(): {"state": "pending", "transition": {"issue": {}, "progress": ""}}}),
                )
            }
            ("GET", "/nvue_v1/revision") => {
                let m: Map<String, Value> = self
                    .revisions
                    .iter()
                    .map(|(k, r)| (k.to_string(), json!({"state": r.state})))
                    .collect();
                Reply::Json(200, Value::Object(m))
            }
            ("DELETE", "/nvue_v1/") => {
                let Some(id) = q.get("rev").and_then(|r| Self::rev_id(r)) else {
                    return not_found();
                };
                match self.revisions.get_mut(&id) {
                    Some(r) if r.state == "pending" => {
                        r.tree = json!({});
                        Reply::Json(200, json!({}))
                    }
                    _ => Reply::Json(
                        400,
                        json!({"title": "Bad Request", "detail": format!("revision {id} is not pending")}),
                    ),
                }
            }
            ("PATCH", "/nvue_v1/") => {
                let Some(id) = q.get("rev").and_then(|r| Self::rev_id(r)) else {
                    return not_found();
                };
                match self.revisions.get_mut(&id) {
                    Some(r) if r.state == "pending" => {
                        merge(&mut r.tree, &req.body);
                        Reply::Json(200, r.tree.clone())
                    }
                    _ => Reply::Json(
                        400,
                        json!({"title": "Bad Request", "detail": format!("revision {id} is not pending")}),
                    ),
                }
            }
            ("GET", "/nvue_v1/") => {
                let applied = self.revisions[&self.applied].tree.clone();
                let tree_of = |r: &str| -> Option<Value> {
                    if r == "applied" {
                        Some(applied.clone())
                    } else {
                        Self::rev_id(r)
                            .and_then(|id| self.revisions.get(&id))
                            .map(|x| x.tree.clone())
                    }
                };
                let (Some(a), d) = (q.get("rev").and_then(|r| tree_of(r)), q.get("diff")) else {
                    return not_found();
                };
                match d {
                    Some(d) => match tree_of(d) {
                        Some(b) => Reply::Json(200, tree_minus(&a, &b)),
                        None => not_found(),
                    },
                    None => Reply::Json(200, a),
                }
            }
            ("PATCH", "/nvue_v1/revision/applied") => {
                self.saved = Some(self.revisions[&self.applied].tree.clone());
                Reply::Json(200, json!({"state": "saved"}))
            }
            ("GET", p) if p.starts_with("/nvue_v1/revision/") => {
                let Some(id) = Self::rev_id(&p["/nvue_v1/revision/".len()..]) else {
                    return not_found();
                };
                let Some(r) = self.revisions.get_mut(&id) else {
                    return not_found();
                };
                r.reads += 1;
                let state = if r.reads == 1
                    && matches!(
                        r.state.as_str(),
                        "confirm" | "ays" | "applied" | "applied_and_saved" | "invalid"
                    ) {
                    "checking".to_string()
                } else {
                    r.state.clone()
                };
                let issue = match &r.issue {
                    Some(m) => json!({"0": {"message": m, "severity": "error"}}),
                    None => json!({}),
                };
                Reply::Json(
                    200,
                    json!({"state": state, "transition": {"issue": issue, "progress": ""}}),
                )
            }
            ("DELETE", p) if p.starts_with("/nvue_v1/revision/") => {
                let Some(id) = Self::rev_id(&p["/nvue_v1/revision/".len()..]) else {
                    return not_found();
                };
                match self.revisions.get(&id).map(|r| r.state.clone()) {
                    Some(s) if s == "pending" => {
                        self.revisions.remove(&id);
                        Reply::Json(200, json!({}))
                    }
                    Some(s) => Reply::Json(
                        400,
                        json!({"title": "Bad Request", "detail": format!("revision {id} is {s}")}),
                    ),
                    None => not_found(),
                }
            }
            ("PATCH", p) if p.starts_with("/nvue_v1/revision/") => {
                let Some(id) = Self::rev_id(&p["/nvue_v1/revision/".len()..]) else {
                    return not_found();
                };
                self.apply(id, &req.body)
            }
            _ => not_found(),
        }
    }

    /// Ends the wait of revision `id` for its confirm: kept (`yes`) or
    /// back to the revision before (its state `failed`); then an apply
    /// queued behind it goes ahead.
    fn answer(&mut self, id: u64, yes: bool, failed: &str) -> Reply {
        let back = self.confirm.take().map(|(_, _, b)| b);
        let done = if self.auto_save {
            "applied_and_saved"
        } else {
            "applied"
        };
        let r = self.revisions.get_mut(&id).expect("revision");
        r.reads = 0;
        if yes {
            r.state = done.into();
        } else {
            r.state = failed.into();
            if let Some(b) = back {
                self.applied = b;
            }
        }
        self.run_queued();
        Reply::Json(
            200,
            json!({"state": if yes { "confirm_yes" } else { "confirm_no" }}),
        )
    }

    fn apply(&mut self, id: u64, body: &Value) -> Reply {
        let want = body.get("state").and_then(Value::as_str).unwrap_or("");
        let Some(state) = self.revisions.get(&id).map(|r| r.state.clone()) else {
            return Reply::Json(
                404,
                json!({"title": "Not Found", "detail": format!("no revision {id}")}),
            );
        };
        let waits = state == self.waiting_state();
        let ays = body.pointer("/auto-prompt/ays").and_then(Value::as_str);
        match (self.reading, want) {
            // gpncfg: the answer is the state itself.
            (ConfirmReading::ConfirmState, "confirm_yes" | "confirm_no") => {
                if !waits {
                    return Reply::Json(
                        400,
                        json!({"title": "Bad Request", "detail": format!("revision {id} is {state}, it does not wait for a confirm")}),
                    );
                }
                return self.answer(id, want == "confirm_yes", "confirm_fail");
            }
            (ConfirmReading::ConfirmState, "apply") if waits => {
                return Reply::Json(
                    400,
                    json!({"title": "Bad Request", "detail": format!("revision {id} waits for its confirm: answer confirm_yes or confirm_no")}),
                );
            }
            // nv-config-manager: a second apply answers the prompt.
            (ConfirmReading::AysPrompt, "apply") if waits => {
                return match ays {
                    Some("ays_yes") => self.answer(id, true, ""),
                    Some("ays_no") => self.answer(id, false, "ays_fail"),
                    _ => Reply::Json(
                        400,
                        json!({"title": "Bad Request", "detail": "auto-prompt ays must be ays_yes or ays_no"}),
                    ),
                };
            }
            (_, "apply") => {}
            (_, other) => {
                return Reply::Json(
                    400,
                    json!({"title": "Bad Request", "detail": format!("'{other}' is not a state a client sets here")}),
                );
            }
        }
        let queued_here = self.queued.as_ref().is_some_and(|(q, _)| *q == id);
        if let Some((other, _, _)) = self.confirm
            && other != id
            && (state == "pending" || queued_here)
        {
            return match self.reading {
                ConfirmReading::ConfirmState => {
                    self.revisions.get_mut(&id).expect("revision").state = "apply".into();
                    self.queued = Some((id, body.clone()));
                    Reply::Json(200, json!({"state": "apply"}))
                }
                ConfirmReading::AysPrompt => Reply::Json(
                    409,
                    json!({"title": "Conflict", "detail": format!("revision {other} applied by admin waits for its confirm")}),
                ),
            };
        }
        let was_applied = matches!(state.as_str(), "applied" | "applied_and_saved" | "saved");
        if state != "pending" && !was_applied && !(state == "apply" && queued_here) {
            return Reply::Json(
                400,
                json!({"title": "Bad Request", "detail": format!("revision {id} is {state}")}),
            );
        }
        let done = if self.auto_save {
            "applied_and_saved"
        } else {
            "applied"
        };
        let tree = self.revisions[&id].tree.clone();
        if let Some(issue) = self.valid(&tree) {
            let r = self.revisions.get_mut(&id).expect("revision");
            r.state = "invalid".into();
            r.issue = Some(issue);
            r.reads = 0;
            return Reply::Json(200, json!({"state": "apply"}));
        }
        let back = self.applied;
        self.applied = id;
        let seconds = body
            .pointer("/state-controls/confirm")
            .and_then(Value::as_u64);
        let waiting = self.waiting_state();
        let r = self.revisions.get_mut(&id).expect("revision");
        r.reads = 0;
        match seconds {
            Some(s) => {
                r.state = waiting.into();
                self.confirm = Some((id, Instant::now() + Duration::from_secs(s), back));
                if let Some(port) = self.fail_on_commit.take()
                    && let Some(i) = self.world.interfaces.get_mut(&port)
                {
                    i.0 = false;
                }
                if self.drop_on_commit {
                    return Reply::Drop;
                }
            }
            None => r.state = done.into(),
        }
        Reply::Json(200, json!({"state": "apply"}))
    }
}

/// The Ethernet ports an EOS running configuration configures (an
/// `interface Ethernet...` section).
pub fn eos_ports(lines: &[String]) -> std::collections::BTreeSet<String> {
    eos_sections(lines)
        .into_iter()
        .filter_map(|(h, _)| h.strip_prefix("interface ").map(str::to_string))
        .filter(|p| p.starts_with("Ethernet"))
        .collect()
}

/// What an EOS running configuration says about BGP: `ip address A/L`
/// under `interface P`; `router bgp N` with, at its top (VRF default) or
/// under `vrf V`, `local-as L` (replaces N), `neighbor X remote-as R`,
/// `neighbor X bfd`, `network P`, `maximum-paths N ecmp N` and `bgp
/// bestpath as-path multipath-relax` (the lines arista AVD's
/// eos_cli_config_gen writes for EOS 4.31/4.32). Without
/// `maximum-paths` one path is installed (EOS's default, `maximum-paths
/// 1`).
pub fn eos_bgp(lines: &[String]) -> BgpConf {
    let mut addresses = Vec::new();
    let mut speakers: Vec<Speaker> = Vec::new();
    for (head, body) in eos_sections(lines) {
        let h: Vec<&str> = head.split_whitespace().collect();
        match h.as_slice() {
            ["interface", port] => {
                for l in &body {
                    if let ["ip", "address", a] = l.split_whitespace().collect::<Vec<_>>()[..]
                        && let Some((ip, len)) = a.split_once('/')
                        && let (Ok(ip), Ok(len)) = (ip.parse(), len.parse())
                    {
                        addresses.push((port.to_string(), ip, len));
                    }
                }
            }
            ["router", "bgp", asn] => {
                let Ok(asn) = asn.parse::<u64>() else {
                    continue;
                };
                let speaker = |vrf: &str| Speaker {
                    vrf: vrf.to_string(),
                    asn,
                    max_paths: 1,
                    ..Speaker::default()
                };
                speakers.push(speaker("default"));
                let mut at = speakers.len() - 1;
                for l in &body {
                    let s = &mut speakers[at];
                    match l.split_whitespace().collect::<Vec<_>>()[..] {
                        ["vrf", v] => {
                            speakers.push(speaker(v));
                            at = speakers.len() - 1;
                        }
                        ["local-as", a] => s.asn = a.parse().unwrap_or(s.asn),
                        ["neighbor", x, "remote-as", r] => {
                            if let Ok(r) = r.parse() {
                                s.neighbours.insert(x.to_string(), r);
                            }
                        }
                        ["neighbor", x, "bfd"] => {
                            s.bfd.insert(x.to_string());
                        }
                        ["network", p] => s.networks.push(p.to_string()),
                        ["maximum-paths", n, ..] => s.max_paths = n.parse().unwrap_or(1),
                        ["bgp", "bestpath", "as-path", "multipath-relax"] => s.relax = true,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    speakers.retain(|s| !s.neighbours.is_empty());
    BgpConf {
        addresses,
        speakers,
    }
}

/// A number leaf of an NVUE tree (a JSON number, or a string of one).
fn number(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The IPv4 addresses of an NVUE tree's interfaces (`interface <p> ip
/// address <a>/<len>`): (port, address, prefix length).
pub fn nvue_addresses(tree: &Value) -> Vec<(String, std::net::Ipv4Addr, u32)> {
    let mut out = Vec::new();
    for (port, i) in tree
        .get("interface")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        for a in i
            .pointer("/ip/address")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.keys())
        {
            if let Some((ip, len)) = a.split_once('/')
                && let (Ok(ip), Ok(len)) = (ip.parse(), len.parse())
            {
                out.push((port.clone(), ip, len));
            }
        }
    }
    out
}

/// The BGP speakers of an NVUE tree, from the commands of the NVUE
/// command reference (BGP.md; all "Introduced in Cumulus Linux 5.0.0"):
/// `nv set vrf <v> router bgp autonomous-system` (else the global
/// `router bgp autonomous-system`), `... neighbor <addr> remote-as
/// <asn>`, `... neighbor <addr> bfd enable on`, `... address-family
/// ipv4-unicast network <prefix>`, `... address-family ipv4-unicast
/// multipaths ebgp <n>` and `... path-selection multipath aspath-ignore
/// on`. Without `multipaths` one path is installed (the plan always sets
/// it; the device's default is not modelled).
pub fn nvue_bgp(tree: &Value) -> Vec<Speaker> {
    let global = number(tree.pointer("/router/bgp/autonomous-system"));
    let mut out = Vec::new();
    for (vrf, v) in tree
        .get("vrf")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let Some(b) = v.pointer("/router/bgp") else {
            continue;
        };
        let Some(asn) = number(b.get("autonomous-system")).or(global) else {
            continue;
        };
        let all = || {
            b.get("neighbor")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
        };
        let on = |v: Option<&Value>| v.and_then(Value::as_str) == Some("on");
        let af = b.pointer("/address-family/ipv4-unicast");
        out.push(Speaker {
            vrf: vrf.clone(),
            asn,
            neighbours: all()
                .filter_map(|(a, n)| Some((a.clone(), number(n.get("remote-as"))?)))
                .collect(),
            bfd: all()
                .filter(|(_, n)| on(n.pointer("/bfd/enable")))
                .map(|(a, _)| a.clone())
                .collect(),
            networks: af
                .and_then(|f| f.get("network"))
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|m| m.keys().cloned())
                .collect(),
            max_paths: number(af.and_then(|f| f.pointer("/multipaths/ebgp"))).unwrap_or(1) as usize,
            relax: on(b.pointer("/path-selection/multipath/aspath-ignore")),
        });
    }
    out
}

/// The parts of `tree` that NVUE's `include` query keeps: each pattern a
/// path of keys from the collection's root, `*` for every key
/// (NVUE-API.md of 5.15, "Retrieve View Types":
/// `?include=/*/route-entry/*/protocol,...`).
pub fn included(tree: &Value, patterns: &str) -> Value {
    fn project(v: &Value, segs: &[&str]) -> Option<Value> {
        let Some((first, rest)) = segs.split_first() else {
            return Some(v.clone());
        };
        let m = v.as_object()?;
        let mut out = Map::new();
        for (k, child) in m {
            if (*first == "*" || first == k)
                && let Some(p) = project(child, rest)
            {
                out.insert(k.clone(), p);
            }
        }
        (!out.is_empty()).then_some(Value::Object(out))
    }
    let mut out = json!({});
    for p in patterns.split(',') {
        let segs: Vec<&str> = p.split('/').filter(|x| !x.is_empty()).collect();
        if let Some(v) = project(tree, &segs) {
            merge(&mut out, &v);
        }
    }
    out
}

/// Starts an NVUE server; the state stays with the test.
pub async fn nvue(tls: &Tls, state: NvueState) -> (SocketAddr, Arc<Mutex<NvueState>>) {
    let st = Arc::new(Mutex::new(state));
    let s2 = st.clone();
    let addr = serve(
        tls,
        Arc::new(move |req| s2.lock().expect("state").handle(req)),
    )
    .await;
    (addr, st)
}

// ----------------------------------------------------------------------
// eAPI

#[derive(Clone, Debug)]
pub struct Session {
    pub lines: Vec<String>,
    /// `pending`, `pendingCommitTimer` or `completed`.
    pub state: String,
    pub deadline: Option<Instant>,
    pub before: Vec<String>,
}

/// The eAPI state machine.
#[derive(Debug)]
pub struct EosState {
    pub user: String,
    pub password: String,
    pub world: World,
    pub running: Vec<String>,
    pub startup: Vec<String>,
    pub flash: BTreeMap<String, Vec<String>>,
    pub sessions: BTreeMap<String, Session>,
    /// Lines containing this are refused (`invalid command`).
    pub refuse: Option<String>,
    /// Drop the connection of the `commit timer` request (after doing it).
    pub drop_on_commit: bool,
    /// Answer a commit (`commit timer` or plain) this late, after doing it.
    pub commit_reply_delay: Duration,
    /// Commits so far.
    pub commits: u32,
    pub observe_delay: Duration,
    /// Hold `show configuration sessions detail` until a commit timer has
    /// run out.
    pub stall_confirm: bool,
    /// The release `show version` reports; from 4.32 `show configuration
    /// sessions detail` has the other shape (napalm issue #2166).
    pub version: String,
    /// The address eAPI is reached at (Management1's, 127.0.0.1 here).
    pub api_address: String,
    /// Boot time (`show version` uptime).
    pub booted: Instant,
    /// What every switch of the fabric says about BGP (fabric_bgp.rs),
    /// for sessions, BFD and learned routes: with `None` a configured
    /// neighbour never comes up.
    pub bgp: Option<SharedBgp>,
    /// Answers sent instead of the honest ones (fuzzing).
    pub mutate: Option<Mutator>,
    /// A fabric whose cables are dark until both ends are configured
    /// (hostname -> the `interface Ethernet...` sections each switch's
    /// running configuration has), shared by the servers of one fabric.
    /// A test world, not EOS's default (an EOS Ethernet port is enabled
    /// until `shutdown`): it stands for cables patched or optics lit
    /// only as the switches are configured, the first-install case
    /// issue #30 asks the EOS client to handle like NVUE's.
    pub fabric: Option<SharedPorts>,
    /// A cable of this port fails when a candidate is committed (a world
    /// event during a push into a running fabric).
    pub fail_on_commit: Option<String>,
    /// The other switches as one request found them (BGP, configured
    /// ports): every command of one eAPI request answers from the same
    /// moment, so that a peer committing in the middle of a request
    /// cannot show a route through a session the same request called
    /// down. The tests run with `--settle 0s`, where a mismatch is final.
    frozen: Option<Frozen>,
    /// Every request: its commands joined with ` | ` (candidate lines
    /// counted as `<N lines>`).
    pub log: Vec<String>,
}

impl EosState {
    pub fn new(world: World, user: &str, password: &str, running: Vec<String>) -> EosState {
        EosState {
            user: user.into(),
            password: password.into(),
            world,
            startup: running.clone(),
            running,
            flash: BTreeMap::new(),
            sessions: BTreeMap::new(),
            refuse: None,
            drop_on_commit: false,
            commit_reply_delay: Duration::ZERO,
            commits: 0,
            observe_delay: Duration::ZERO,
            stall_confirm: false,
            version: "4.31.2F".into(),
            api_address: "127.0.0.1".into(),
            booted: Instant::now(),
            bgp: None,
            mutate: None,
            fabric: None,
            fail_on_commit: None,
            frozen: None,
            log: Vec::new(),
        }
    }

    /// Tells the fabric what this switch runs now.
    pub fn publish(&mut self) {
        let running = self.running_config();
        if let Some(f) = &self.fabric {
            f.lock()
                .expect("fabric")
                .insert(self.world.hostname.clone(), eos_ports(&running));
        }
        if self.bgp.is_some() {
            let me = self.speaking();
            if let Some(b) = &self.bgp {
                b.lock()
                    .expect("fabric")
                    .insert(self.world.hostname.clone(), me);
            }
        }
    }

    /// What this switch tells the fabric about BGP.
    fn speaking(&mut self) -> Speaking {
        let running = self.running_config();
        Speaking {
            conf: eos_bgp(&running),
            world: self.world.clone(),
            configured: self.fabric.as_ref().map(|_| eos_ports(&running)),
        }
    }

    /// `f` of the fabric as published, with this switch as it is now.
    fn with_fabric<R>(&mut self, f: impl FnOnce(&Fabric) -> R) -> Option<R> {
        let me = self.speaking();
        let shared = self.bgp.as_ref()?;
        let mut all = match self.frozen.as_ref().and_then(|(b, _)| b.clone()) {
            Some(b) => b,
            None => shared.lock().expect("fabric").clone(),
        };
        all.insert(self.world.hostname.clone(), me);
        Some(f(&Fabric(&all)))
    }

    /// Each port of the world and whether its link is up: cabled up and,
    /// in a dark fabric, configured at both ends.
    pub fn links(&mut self) -> BTreeMap<String, bool> {
        let mine = eos_ports(&self.running_config());
        let fabric = match self.frozen.as_ref().and_then(|(_, p)| p.clone()) {
            Some(p) => Some(p),
            None => self
                .fabric
                .as_ref()
                .map(|f| f.lock().expect("fabric").clone()),
        };
        self.world
            .interfaces
            .iter()
            .map(|(p, (cabled, _))| {
                let up = match &fabric {
                    None => *cabled,
                    Some(f) => {
                        *cabled
                            && mine.contains(p)
                            && self.world.lldp.get(p).is_none_or(|(peer, peer_port)| {
                                f.get(peer).is_some_and(|ports| ports.contains(peer_port))
                            })
                    }
                };
                (p.clone(), up)
            })
            .collect()
    }

    /// `show ip bgp summary vrf all` of the running configuration, in the
    /// shape napalm's EOS driver documents for it (`get_bgp_neighbors`,
    /// napalm/eos/eos.py: `vrfs.<vrf>.{routerId, asn, peers.<address>.
    /// {peerState, asn, ...}}`, the ASNs as strings): a peer is
    /// `Established` when both ends accept each other
    /// ([`Fabric::established`]), `Idle` over a link that is down and
    /// `Active` (trying to connect, RFC 4271 section 8) otherwise. The
    /// reason for an idle session is not modelled (EOS's JSON for it is
    /// not published in what we found).
    pub fn bgp_summary(&mut self) -> Value {
        let me = self.world.hostname.clone();
        let speakers = eos_bgp(&self.running_config()).speakers;
        let states = self.with_fabric(|f| {
            speakers
                .iter()
                .map(|s| {
                    s.neighbours
                        .keys()
                        .map(|peer| match f.session(&me, s, peer) {
                            Ok(()) if f.established(&me, s, peer) => "Established",
                            Err((_, 25)) => "Idle",
                            _ => "Active",
                        })
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        });
        let mut vrfs = Map::new();
        for (k, s) in speakers.iter().enumerate() {
            let mut peers = Map::new();
            for (j, (peer, remote)) in s.neighbours.iter().enumerate() {
                let state = states.as_ref().map_or("Active", |st| st[k][j]);
                peers.insert(
                    peer.clone(),
                    json!({"peerState": state, "asn": remote.to_string(), "prefixReceived": 0, "underMaintenance": false}),
                );
            }
            vrfs.insert(
                s.vrf.clone(),
                json!({"asn": s.asn.to_string(), "peers": peers}),
            );
        }
        json!({"vrfs": vrfs})
    }

    /// `show ip bgp neighbors <peer> vrf <vrf>` as text (eAPI's `text`
    /// format answers `{"output": ...}`), in the shape of EOS's own
    /// output as recorded on real switches: napalm's EOS test data
    /// (test/eos/mocked_data/test_get_bgp_neighbors_detail/normal) and
    /// the EANTC 2025 interop captures of a DCS-7280SR3E on EOS
    /// 4.33.1.1F (github.com/krikoon73/cc_eantc_2025, Spine3-Q2A-30), one
    /// of whose neighbours was refused for its AS:
    ///
    /// ```text
    /// BGP neighbor is 10.0.0.53, remote AS 64512, internal link
    ///   BGP version 4, remote router ID 0.0.0.0, VRF default
    ///   BGP state is Active
    ///   Peering failure hint: Open Message Error/bad AS number
    ///   Last sent notification:Open Message Error/bad AS number, Last time 00:00:04, First time 00:41:18, Repeats 495
    /// ```
    ///
    /// This switch sends that NOTIFICATION when the peer's OPEN carries
    /// an AS it does not expect (RFC 4271 6.2) and receives it when the
    /// peer refuses this switch's AS: `Last rcvd notification:` (the
    /// spelling of the same captures, there for a Cease). The hint line
    /// is printed for the side that sent, as recorded; the captures show
    /// none for a received OPEN error, so none is printed. Lines the
    /// client has no use for (timers, capabilities, statistics) are left
    /// out. `None` for a neighbour the running configuration lacks.
    pub fn neighbor_text(&mut self, peer: &str, vrf: &str) -> Option<String> {
        let me = self.world.hostname.clone();
        let speakers = eos_bgp(&self.running_config()).speakers;
        let s = speakers.iter().find(|s| s.vrf == vrf)?;
        let remote = *s.neighbours.get(peer)?;
        let outcome = self
            .with_fabric(|f| match f.session(&me, s, peer) {
                Ok(()) if f.established(&me, s, peer) => (Ok(()), true),
                r => (r, false),
            })
            .unwrap_or((Err(("", 0)), false));
        let state = match outcome {
            (_, true) => "Established, up for 00:01:02",
            (Err((_, 25)), _) => "Idle",
            _ => "Active",
        };
        let link = if remote == s.asn {
            "internal"
        } else {
            "external"
        };
        let mut out = format!(
            "BGP neighbor is {peer}, remote AS {remote}, {link} link\n  BGP version 4, remote router ID 0.0.0.0, VRF {vrf}\n  Hold time is 180, keepalive interval is 60 seconds\n  BGP state is {state}\n"
        );
        let refused = "Open Message Error/bad AS number";
        match outcome.0 {
            Err((_, 14)) => {
                out += &format!(
                    "  Peering failure hint: {refused}\n  Number of transitions to established: 0\n  Last state was Idle\n  Last event was Start\n  Last sent notification:{refused}, Last time 00:00:04, First time 00:00:40, Repeats 9\n"
                );
            }
            Err((_, 13)) => {
                out += &format!(
                    "  Number of transitions to established: 0\n  Last state was OpenSent\n  Last event was RecvNotification\n  Last rcvd notification:{refused}, Last time 00:00:04, First time 00:00:40, Repeats 9\n"
                );
            }
            _ => out += "  Number of transitions to established: 0\n",
        }
        out += &format!("Local AS is {}, local router ID 0.0.0.0\nTTL is 1\n", s.asn);
        Some(out)
    }

    /// `show bfd peers` in the shape arista anta reads it
    /// (anta/tests/bfd.py, `VerifyBFDPeersHealth` and
    /// `VerifyBFDPeersRegProtocols`: `vrfs.<vrf>.ipv4Neighbors.<peer>.
    /// peerStats.<"">.{status, remoteDisc, lastDown}`, `status` `up` or
    /// `down`): one peer per neighbour configured with `neighbor X bfd`,
    /// up when [`Fabric::bfd_up`] says so.
    fn bfd_peers(&mut self) -> Value {
        let me = self.world.hostname.clone();
        let speakers = eos_bgp(&self.running_config()).speakers;
        let up = self.with_fabric(|f| {
            speakers
                .iter()
                .flat_map(|s| {
                    s.bfd
                        .iter()
                        .map(|p| f.bfd_up(&me, s, p))
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        });
        let mut vrfs = Map::new();
        let mut k = 0;
        for s in &speakers {
            let mut ns = Map::new();
            for peer in &s.bfd {
                let on = up.as_ref().is_some_and(|u| u[k]);
                k += 1;
                ns.insert(
                    peer.clone(),
                    json!({"peerStats": {"": {"status": if on { "up" } else { "down" },
                        "remoteDisc": if on { 1 } else { 0 }, "lastDown": 0.0}}}),
                );
            }
            vrfs.insert(s.vrf.clone(), json!({"ipv4Neighbors": ns}));
        }
        json!({"vrfs": vrfs})
    }

    /// `show ip route vrf all`: the running static routes (`ip route [vrf
    /// V] P NH`, `routeType` `static`) and the routes BGP learned from the
    /// fabric ([`Fabric::rib`], `routeType` `eBGP`), in the shape anta's
    /// recorded EOS answers have (anta's unit tests of
    /// `VerifyRoutingTableEntry`: `vrfs.<vrf>.routes.<prefix>.{routeType,
    /// vias: [{nexthopAddr, interface}]}`).
    ///
    /// A static route's next hop resolves over the connected subnet that
    /// holds it, which exists only while its port is up: a next hop over a
    /// dark port is left out, and a route with none is not shown. EOS
    /// resolves a static route's next hop over the routes of its FIB and
    /// installs the route only when it resolves (Arista TOI "Resolution
    /// RIB profile for static routes", EOS 4.30.2F); a plan's link subnets
    /// are routed nowhere else, so only the port's connected route can.
    fn routes(&mut self) -> Value {
        let mut vrfs: BTreeMap<String, BTreeMap<String, (&str, Vec<Value>)>> = BTreeMap::new();
        let links = self.links();
        let connected = eos_bgp(&self.running_config()).addresses;
        let reachable = |hop: &str| {
            hop.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| {
                connected.iter().any(|(port, a, len)| {
                    fabric_bgp::same_subnet(*a, ip, *len) && links.get(port) == Some(&true)
                })
            })
        };
        for l in &self.running {
            let w: Vec<&str> = l.split_whitespace().collect();
            let (vrf, rest) = match w.as_slice() {
                ["ip", "route", "vrf", v, rest @ ..] => (v.to_string(), rest),
                ["ip", "route", rest @ ..] => ("default".to_string(), rest),
                _ => continue,
            };
            if let [prefix, hop, ..] = rest
                && reachable(hop)
            {
                vrfs.entry(vrf)
                    .or_default()
                    .entry(prefix.to_string())
                    .or_insert(("static", Vec::new()))
                    .1
                    .push(json!({"nexthopAddr": hop}));
            }
        }
        let me = self.world.hostname.clone();
        let addresses = eos_bgp(&self.running_config()).addresses;
        for ((vrf, prefix), hops) in self.with_fabric(|f| f.rib(&me)).unwrap_or_default() {
            let vias = hops
                .iter()
                .map(|h| {
                    let port = h.parse().ok().and_then(|ip| {
                        addresses
                            .iter()
                            .find(|(_, a, len)| fabric_bgp::same_subnet(*a, ip, *len))
                    });
                    json!({"nexthopAddr": h, "interface": port.map_or("", |p| p.0.as_str())})
                })
                .collect();
            vrfs.entry(vrf).or_default().insert(prefix, ("eBGP", vias));
        }
        let m: Map<String, Value> = vrfs
            .into_iter()
            .map(|(v, routes)| {
                let r: Map<String, Value> = routes
                    .into_iter()
                    .map(|(p, (kind, vias))| (p, json!({"vias": vias, "routeType": kind})))
                    .collect();
                (v, json!({"routes": r}))
            })
            .collect();
        json!({"vrfs": m})
    }

    /// What the running configuration lets push do. eAPI is off unless
    /// `management api http-commands` has `no shutdown`, and a VRF that
    /// carries the management address needs its own `vrf V` / `no
    /// shutdown` there (pyeapi's README, "eAPI must be enabled"; arista
    /// AVD's eos_cli_config_gen `management api http-commands` output,
    /// EOS 4.31 and 4.32); the address is Management1's (`ip address`
    /// under the interface, in `vrf MGMT` with `ip route vrf MGMT
    /// 0.0.0.0/0 ...` for clients off its subnet); a user whose `username`
    /// line is gone cannot log in.
    pub fn access(&self) -> Access {
        let secs = eos_sections(&self.running);
        let carrier = secs.iter().find(|(h, body)| {
            h.starts_with("interface ")
                && body.iter().any(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    matches!(w.as_slice(), ["ip", "address", a] if a.split('/').next() == Some(self.api_address.as_str()))
                })
        });
        let Some((_, body)) = carrier else {
            return Access::Dark;
        };
        let vrf = body
            .iter()
            .find_map(|l| l.trim().strip_prefix("vrf ").map(str::to_string));
        let Some((_, api)) = secs
            .iter()
            .find(|(h, _)| h == "management api http-commands")
        else {
            return Access::Dark;
        };
        if !api.iter().any(|l| l == "   no shutdown") {
            return Access::Dark;
        }
        if let Some(v) = &vrf {
            let at = api.iter().position(|l| l == &format!("   vrf {v}"));
            let on =
                at.is_some_and(|i| api.get(i + 1).map(String::as_str) == Some("      no shutdown"));
            let route = format!("ip route vrf {v} 0.0.0.0/0 ");
            if !on || !secs.iter().any(|(h, _)| h.starts_with(&route)) {
                return Access::Dark;
            }
        }
        let mine = format!("username {} ", self.user);
        let had = self.startup.iter().any(|l| l.starts_with(&mine));
        if had && !self.running.iter().any(|l| l.starts_with(&mine)) {
            return Access::NoUser;
        }
        Access::Open
    }

    /// `show running-config` as text: sections apart with `!` lines.
    fn running_text(&self) -> String {
        let mut out = format!(
            "! Command: show running-config\n! device: {} (cEOSLab, EOS-{})\n!\n",
            self.world.hostname, self.version
        );
        for (head, body) in eos_sections(&self.running) {
            out += &head;
            out.push('\n');
            for l in body {
                out += &l;
                out.push('\n');
            }
            out += "!\n";
        }
        out += "end\n";
        out
    }

    /// `show configuration sessions detail` in the shape of this release:
    /// before 4.32 a session waiting on its timer has the state
    /// `pendingCommitTimer` and `commitBy`; from 4.32 every committed
    /// session reads `committed` and the waiting one is named by the
    /// top-level `commitTimerSessionName` / `commitTimerExpireTime`, which
    /// are absent otherwise (napalm issue #2166, recorded 4.31 and 4.32
    /// output; cnaas-nms issue #395).
    fn sessions_detail(&self) -> Value {
        let new_shape = {
            let mut v = self.version.split('.').map(|x| {
                x.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
                    .parse::<u32>()
                    .unwrap_or(0)
            });
            (v.next().unwrap_or(0), v.next().unwrap_or(0)) >= (4, 32)
        };
        let uptime = |d: Instant| d.saturating_duration_since(self.booted).as_secs_f64() + 1000.0;
        let mut m = Map::new();
        let mut top = Map::new();
        for (k, sess) in &self.sessions {
            let waiting = sess.state == "pendingCommitTimer";
            let mut e = json!({"state": sess.state, "description": "", "instances": {}});
            if waiting && new_shape {
                e["state"] = json!("committed");
                top.insert("commitTimerSessionName".into(), json!(k));
                top.insert(
                    "commitTimerExpireTime".into(),
                    json!(sess.deadline.map_or(-1.0, uptime)),
                );
            } else if waiting {
                e["commitBy"] = json!(sess.deadline.map_or(-1.0, uptime));
            }
            m.insert(k.clone(), e);
        }
        let mut v = json!({"sessions": m, "maxSavedSessions": 1, "maxOpenSessions": 5,
            "mergeOnCommit": false, "saveToStartupConfigOnCommit": false});
        for (k, x) in top {
            v[k] = x;
        }
        v
    }

    pub fn expire(&mut self) {
        let now = Instant::now();
        let expired: Vec<String> = self
            .sessions
            .iter()
            .filter(|(_, s)| {
                s.state == "pendingCommitTimer" && s.deadline.is_some_and(|d| now >= d)
            })
            .map(|(n, _)| n.clone())
            .collect();
        for n in expired {
            let s = self.sessions.remove(&n).expect("session");
            self.running = s.before;
        }
    }

    pub fn running_config(&mut self) -> Vec<String> {
        self.expire();
        self.running.clone()
    }

    fn error(&self, i: usize, n: usize, cmd: &str, msg: &str, id: &Value) -> Reply {
        let mut data: Vec<Value> = (0..i).map(|_| json!({})).collect();
        data.push(json!({"errors": [msg]}));
        Reply::Json(
            200,
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": 1002,
                "message": format!("CLI command {} of {n} '{cmd}' failed: invalid command", i + 1), "data": data}}),
        )
    }

    pub fn handle(&mut self, req: &Req) -> Reply {
        self.publish();
        self.frozen = Some((
            self.bgp.as_ref().map(|b| b.lock().expect("fabric").clone()),
            self.fabric
                .as_ref()
                .map(|f| f.lock().expect("fabric").clone()),
        ));
        let reply = self.handle_published(req);
        self.frozen = None;
        self.publish();
        let what = req
            .body
            .pointer("/params/cmds")
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .map(|x| x.as_str().unwrap_or("<input>"))
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .unwrap_or_default();
        Mutator::apply(self.mutate.as_ref(), &what, reply)
    }

    fn handle_published(&mut self, req: &Req) -> Reply {
        if !req.delayed {
            let slow = |c: &str| {
                req.body
                    .pointer("/params/cmds")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|x| x == c))
            };
            // Slow reads once something is committed (verification; the
            // reads before the commit answer at once).
            if slow("show interfaces status") && !self.observe_delay.is_zero() && self.commits > 0 {
                return Reply::Later(self.observe_delay);
            }
            if self.stall_confirm && slow("show configuration sessions detail") {
                let wait = self
                    .sessions
                    .values()
                    .filter(|s| s.state == "pendingCommitTimer")
                    .filter_map(|s| s.deadline)
                    .map(|d| {
                        d.saturating_duration_since(Instant::now()) + Duration::from_millis(200)
                    })
                    .max();
                if let Some(w) = wait {
                    return Reply::Later(w);
                }
            }
        }
        self.expire();
        let cmds: Vec<String> = req
            .body
            .pointer("/params/cmds")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let format = req
            .body
            .pointer("/params/format")
            .and_then(Value::as_str)
            .unwrap_or("json")
            .to_string();
        let id = req.body.get("id").cloned().unwrap_or(Value::Null);
        // The log: candidate lines between `rollback clean-config` and
        // `end` counted.
        let mut shown = Vec::new();
        let mut counting: Option<usize> = None;
        for c in &cmds {
            match counting {
                Some(k) if c == "end" => {
                    shown.push(format!("<{k} lines>"));
                    shown.push(c.clone());
                    counting = None;
                }
                Some(k) => counting = Some(k + 1),
                None => {
                    shown.push(c.clone());
                    if c == "rollback clean-config" {
                        counting = Some(0);
                    }
                }
            }
        }
        let access = self.access();
        self.log.push(format!(
            "{}{} {} [{format}] {}",
            if access == Access::Dark {
                "(dark) "
            } else {
                ""
            },
            req.method,
            req.uri,
            shown.join(" | ")
        ));
        if access == Access::Dark {
            return Reply::Drop;
        }
        if req.auth != Some((self.user.clone(), self.password.clone())) || access == Access::NoUser
        {
            return Reply::Json(401, json!({"error": "Unauthorized"}));
        }
        if req.method != "POST" || req.uri != "/command-api" {
            return Reply::Json(404, json!({}));
        }
        let n = cmds.len();
        let mut results = Vec::new();
        let mut session: Option<String> = None;
        for (i, cmd) in cmds.iter().enumerate() {
            if let Some(s) = &session {
                let c = cmd.trim();
                if c == "end" {
                    session = None;
                    results.push(json!({}));
                } else if c == "rollback clean-config" {
                    self.sessions.get_mut(s).expect("session").lines.clear();
                    results.push(json!({}));
                } else if self.refuse.as_deref().is_some_and(|r| c.contains(r)) {
                    return self.error(
                        i,
                        n,
                        cmd,
                        &format!(
                            "Invalid input (at token 1: '{}')",
                            c.split_whitespace().nth(1).unwrap_or("")
                        ),
                        &id,
                    );
                } else {
                    self.sessions
                        .get_mut(s)
                        .expect("session")
                        .lines
                        .push(cmd.clone());
                    results.push(json!({}));
                }
                continue;
            }
            let words: Vec<&str> = cmd.split_whitespace().collect();
            let r = match words.as_slice() {
                ["enable"] => json!({}),
                ["show", "hostname"] => {
                    json!({"hostname": self.world.hostname, "fqdn": self.world.hostname})
                }
                ["show", "version"] => {
                    json!({"serialNumber": "JPE00000001", "version": self.version,
                    "modelName": "cEOSLab", "uptime": self.booted.elapsed().as_secs_f64() + 1000.0})
                }
                ["show", "configuration", "sessions", "detail"] => self.sessions_detail(),
                ["show", "running-config"] if format == "text" => {
                    json!({"output": self.running_text()})
                }
                ["configure", "session", name] => {
                    let running = self.running.clone();
                    self.sessions.entry(name.to_string()).or_insert(Session {
                        lines: running,
                        state: "pending".into(),
                        deadline: None,
                        before: Vec::new(),
                    });
                    session = Some(name.to_string());
                    json!({})
                }
                ["show", "session-config", "named", name, "diffs"] => {
                    let Some(s) = self.sessions.get(*name) else {
                        return self.error(i, n, cmd, "no such session", &id);
                    };
                    let mut out =
                        format!("--- system:/running-config\n+++ session:/{name}-session-config\n");
                    out += &section_diff(&self.running, &s.lines);
                    if format == "text" {
                        json!({"output": out})
                    } else {
                        json!({})
                    }
                }
                ["configure", "session", name, "commit", "timer", t] => {
                    self.commits += 1;
                    if let Some(port) = self.fail_on_commit.take()
                        && let Some(i) = self.world.interfaces.get_mut(&port)
                    {
                        i.0 = false;
                    }
                    let secs: Vec<u64> = t.split(':').filter_map(|x| x.parse().ok()).collect();
                    let [h, m, s] = secs.as_slice() else {
                        return self.error(i, n, cmd, "bad timer", &id);
                    };
                    let before = self.running.clone();
                    let Some(sess) = self.sessions.get_mut(*name) else {
                        return self.error(i, n, cmd, "no such session", &id);
                    };
                    sess.state = "pendingCommitTimer".into();
                    sess.deadline =
                        Some(Instant::now() + Duration::from_secs(h * 3600 + m * 60 + s));
                    sess.before = before;
                    self.running = sess.lines.clone();
                    if self.drop_on_commit {
                        return Reply::Drop;
                    }
                    json!({})
                }
                ["configure", "session", name, "commit"] => {
                    self.commits += 1;
                    let Some(sess) = self.sessions.get_mut(*name) else {
                        return self.error(
                            i,
                            n,
                            cmd,
                            &format!("Session {name} does not exist"),
                            &id,
                        );
                    };
                    if sess.state == "pending" {
                        self.running = sess.lines.clone();
                    }
                    self.sessions.remove(*name);
                    json!({})
                }
                ["configure", "session", name, "abort"] => {
                    if let Some(sess) = self.sessions.remove(*name)
                        && sess.state == "pendingCommitTimer"
                    {
                        self.running = sess.before;
                    }
                    json!({})
                }
                ["copy", "running-config", file] => {
                    self.flash.insert(file.to_string(), self.running.clone());
                    json!({})
                }
                ["configure", "replace", file] => match self.flash.get(*file) {
                    Some(lines) => {
                        self.running = lines.clone();
                        json!({})
                    }
                    None => return self.error(i, n, cmd, &format!("{file}: no such file"), &id),
                },
                ["write", "memory"] => {
                    self.startup = self.running.clone();
                    json!({})
                }
                ["show", "lldp", "neighbors"] => {
                    let links = self.links();
                    let ns: Vec<Value> = self
                        .world
                        .lldp
                        .iter()
                        .filter(|(p, _)| links.get(*p).copied().unwrap_or(true))
                        .map(|(p, (s, np))| json!({"port": p, "neighborDevice": s, "neighborPort": np, "ttl": 120}))
                        .collect();
                    json!({"lldpNeighbors": ns})
                }
                ["show", "interfaces", "status"] => {
                    let links = self.links();
                    let m: Map<String, Value> = self
                        .world
                        .interfaces
                        .iter()
                        .map(|(k, (_, speed))| {
                            let up = links.get(k).copied().unwrap_or(false);
                            (k.clone(), json!({"linkStatus": if up { "connected" } else { "notconnect" }, "bandwidth": speed * 1_000_000}))
                        })
                        .collect();
                    json!({"interfaceStatuses": m})
                }
                // A switch that runs no BGP refuses the summary with
                // "BGP inactive" (the answer issue #30 reports for a
                // static plan; not checked against a device).
                ["show", "ip", "bgp", "summary", "vrf", "all"]
                    if !self
                        .running_config()
                        .iter()
                        .any(|l| l.starts_with("router bgp")) =>
                {
                    let mut data: Vec<Value> = (0..i).map(|_| json!({})).collect();
                    data.push(json!({"errors": ["BGP inactive"]}));
                    return Reply::Json(
                        200,
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": 1000,
                            "message": format!("CLI command {} of {n} '{cmd}' failed: could not run command", i + 1), "data": data}}),
                    );
                }
                ["show", "ip", "bgp", "summary", "vrf", "all"] => self.bgp_summary(),
                ["show", "ip", "bgp", "neighbors", peer, "vrf", vrf] if format == "text" => {
                    match self.neighbor_text(peer, vrf) {
                        Some(out) => json!({"output": out}),
                        // EOS prints nothing for an address that is no
                        // neighbour (no recorded answer says otherwise).
                        None => json!({"output": ""}),
                    }
                }
                ["show", "bfd", "peers"] => self.bfd_peers(),
                ["show", "ip", "route", "vrf", "all"] => self.routes(),
                _ => return self.error(i, n, cmd, "Invalid input", &id),
            };
            results.push(r);
        }
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": results});
        let committed = cmds
            .iter()
            .any(|c| c.starts_with("configure session ") && c.contains(" commit"));
        if committed && !self.commit_reply_delay.is_zero() {
            return Reply::Slow(self.commit_reply_delay, answer);
        }
        Reply::Json(200, answer)
    }
}

/// An EOS configuration's top-level sections: each line at the left
/// margin with the indented lines under it (`!` separators and comments
/// left out). Written here from the configuration's layout, apart from
/// the client's reading. A section entered twice (`interface X` with its
/// address, later `interface X` again with its BFD timers) is one
/// section of the running configuration, its lines in the order given
/// (`show running-config` prints one section per interface:
/// arista AVD's eos_cli_config_gen output for 4.31/4.32).
pub fn eos_sections(lines: &[String]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut at: Option<usize> = None;
    for l in lines {
        let t = l.trim();
        if t.is_empty() || t.starts_with('!') {
            continue;
        }
        if l.starts_with(' ') {
            if let Some(i) = at {
                out[i].1.push(l.clone());
            }
        } else if let Some(i) = out.iter().position(|(h, _)| h == l) {
            at = Some(i);
        } else {
            out.push((l.clone(), Vec::new()));
            at = Some(out.len() - 1);
        }
    }
    out
}

/// A diff of two configurations by section: a section only in `a` all
/// `-`, only in `b` all `+`, in both its head as context and its changed
/// lines (EOS's `show session-config diffs` is a unified diff of the two
/// texts).
fn section_diff(a: &[String], b: &[String]) -> String {
    let sa = eos_sections(a);
    let sb = eos_sections(b);
    let find = |s: &[(String, Vec<String>)], h: &str| {
        s.iter().find(|(x, _)| x == h).map(|(_, b)| b.clone())
    };
    let mut out = String::new();
    for (h, body) in &sa {
        match find(&sb, h) {
            None => {
                out += &format!("-{h}\n");
                for l in body {
                    out += &format!("-{l}\n");
                }
            }
            Some(other) => {
                let gone: Vec<&String> = body.iter().filter(|l| !other.contains(l)).collect();
                let new: Vec<&String> = other.iter().filter(|l| !body.contains(l)).collect();
                if !gone.is_empty() || !new.is_empty() {
                    out += &format!(" {h}\n");
                    for l in gone {
                        out += &format!("-{l}\n");
                    }
                    for l in new {
                        out += &format!("+{l}\n");
                    }
                }
            }
        }
    }
    for (h, body) in &sb {
        if find(&sa, h).is_none() {
            out += &format!("+{h}\n");
            for l in body {
                out += &format!("+{l}\n");
            }
        }
    }
    out
}

/// An EOS switch's management configuration (the running configuration
/// before any push): push's user, Management1 in `vrf MGMT` with its
/// default route, NTP and syslog in that VRF, and eAPI over HTTPS enabled
/// in it. The lines as arista AVD's eos_cli_config_gen writes them for
/// EOS 4.31/4.32 (`management api http-commands`, `protocol https`, `no
/// shutdown`, `vrf MGMT` / `no shutdown`; `interface Management1` / `vrf
/// MGMT` / `ip address`; `ip route vrf MGMT 0.0.0.0/0 <gw>`).
pub fn eos_management(hostname: &str, user: &str, address: &str) -> Vec<String> {
    [
        "no aaa root".to_string(),
        format!(
            "username {user} privilege 15 role network-admin secret sha512 $6$efl$0123456789abcdef"
        ),
        format!("hostname {hostname}"),
        "service routing protocols model multi-agent".to_string(),
        "vrf instance MGMT".to_string(),
        "interface Management1".to_string(),
        "   vrf MGMT".to_string(),
        format!("   ip address {address}/8"),
        "ip route vrf MGMT 0.0.0.0/0 127.0.0.254".to_string(),
        "ntp server vrf MGMT 192.0.2.123".to_string(),
        "logging vrf MGMT host 192.0.2.50".to_string(),
        "management api http-commands".to_string(),
        "   protocol https".to_string(),
        "   no shutdown".to_string(),
        "   vrf MGMT".to_string(),
        "      no shutdown".to_string(),
    ]
    .to_vec()
}

/// Starts an eAPI server; the state stays with the test.
pub async fn eos(tls: &Tls, state: EosState) -> (SocketAddr, Arc<Mutex<EosState>>) {
    let st = Arc::new(Mutex::new(state));
    let s2 = st.clone();
    let addr = serve(
        tls,
        Arc::new(move |req| s2.lock().expect("state").handle(req)),
    )
    .await;
    (addr, st)
}
