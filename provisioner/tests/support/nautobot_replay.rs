//! Nautobot's own answers, recorded and replayed (issue #31).
//!
//! [`record`] is a proxy in front of a real Nautobot (3.2.7, started by
//! `.ci/nautobot up`): it forwards each request of our client as it came
//! (method, path, query, body, `Authorization`, `Accept`, `If-Match`) and
//! keeps the request and the server's answer. The recording is written as
//! JSON lines (`provisioner/tests/data/nautobot-3.2.7/`), the server's own
//! URL replaced by [`BASE`] (the token is never kept: it travels only in
//! headers, which are not recorded).
//!
//! [`replay`] serves a recording without Nautobot: each request is
//! answered with the next recorded answer to the same method, path and
//! body (JSON, compared as values), the last one again once they run out
//! (a read after the recorded ones sees the last state), and anything not
//! recorded with a 400 naming it (as Nautobot refuses a write whose ids it
//! does not know). A `spoil` hook may replace any answer, as the NetBox
//! test server's does.
//!
//! The steps given as `stateful` (a push, and a push again) are replayed
//! as a server with a state: each recorded write is applied when it comes
//! (the spoil hook changes only its answer), and a read of those steps
//! is answered with the recorded answer given when exactly the same
//! writes had been applied. So a push that stopped at a phase (a
//! spoiled read refused) and a second push after it see what Nautobot
//! showed at that point, and a write sent again (an object made twice)
//! is noted ([`Replay::again`]). A read in a state the recording never
//! was in (a push stopped half-way through a phase) is answered 400,
//! naming it, and noted ([`Replay::unrecorded_state`]). Requests may
//! overlap: each write is answered after a short pause (the client's
//! reads go one at a time), and [`Replay::log`] notes how many were in
//! flight.
//!
//! [`spoiling`] is the recording proxy's twin for the cases a replay
//! cannot answer: in front of the real Nautobot, it spoils the answer to
//! one write of a phase, either not forwarding it ([`Spoiled::NotSent`])
//! or forwarding it and losing its answer (the others), so that the push
//! after it runs against what Nautobot really made
//! (`sot_nautobot::sot_push_nautobot_spoiled_write_*`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Response, StatusCode};

use crate::http_server::Received;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What stands for the server's own URL in a recording.
pub const BASE: &str = "http://nautobot.recorded";

/// One request and its answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Exchange {
    /// The step of the recording (`import`, `push`, `push again`, ...).
    pub step: String,
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The request's JSON body (`null` for none).
    pub body: Value,
    pub status: u16,
    /// The answer's JSON (`null` for an empty body).
    pub answer: Value,
}

/// The recording proxy's state: the upstream server, the step being
/// recorded, and every exchange so far.
pub struct Recorder {
    pub upstream: String,
    pub step: String,
    pub exchanges: Vec<Exchange>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Serves `handle` over plain HTTP on a loopback port (in the current
/// tokio runtime); returns the base URL. `handle` gets the method, path
/// with query, headers and body bytes, and gives the status and body, or
/// `None` to close the connection without an answer (an answer lost).
async fn serve<F, Fut>(handle: F) -> String
where
    F: Fn(String, String, hyper::HeaderMap, Bytes) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Option<(u16, Bytes)>> + Send + 'static,
{
    let addr = crate::http_server::serve(None, move |req: Received| {
        let handle = handle.clone();
        async move {
            let (status, body) = handle(req.method, req.uri, req.headers, req.body)
                .await
                .ok_or_else(|| std::io::Error::other("the answer is dropped"))?;
            let mut r = Response::new(Full::new(body));
            *r.status_mut() =
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            r.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("application/json"),
            );
            Ok::<_, std::io::Error>(r)
        }
    })
    .await;
    format!("http://{addr}")
}

fn json_or_null(bytes: &[u8]) -> Value {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        serde_json::from_slice(bytes)
            .unwrap_or_else(|_| json!(String::from_utf8_lossy(bytes).into_owned()))
    }
}

/// The proxies' client to the upstream server: no redirect followed, a
/// long timeout (Nautobot's own writes may take minutes).
fn proxy_client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(900))
        .build()
        .expect("a client")
}

/// A request of our client as it came (method, path, query, body,
/// `Authorization`, `Accept`, `Content-Type`, `If-Match`), to `upstream`.
fn forward(
    http: &reqwest::Client,
    upstream: &str,
    method: &str,
    uri: &str,
    headers: &hyper::HeaderMap,
    bytes: &Bytes,
) -> reqwest::RequestBuilder {
    let m = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
    let mut req = http.request(m, format!("{upstream}{uri}"));
    for h in ["authorization", "accept", "content-type", "if-match"] {
        if let Some(v) = headers.get(h) {
            req = req.header(h, v.as_bytes());
        }
    }
    req.body(bytes.to_vec())
}

/// A recording proxy in front of `rec`'s upstream; returns its base URL.
pub async fn record(rec: Arc<Mutex<Recorder>>) -> String {
    let http = proxy_client();
    serve(move |method: String, uri: String, headers, bytes: Bytes| {
        let rec = rec.clone();
        let http = http.clone();
        async move {
            let (upstream, step) = {
                let r = lock(&rec);
                (r.upstream.clone(), r.step.clone())
            };
            let req = forward(&http, &upstream, &method, &uri, &headers, &bytes);
            let resp = req.send().await.expect("upstream");
            let status = resp.status().as_u16();
            let answer = resp.bytes().await.expect("upstream body");
            lock(&rec).exchanges.push(Exchange {
                step,
                method,
                path: uri,
                body: json_or_null(&bytes),
                status,
                answer: json_or_null(&answer),
            });
            Some((status, answer))
        }
    })
    .await
}

/// Writes `exchanges` as JSON lines, `upstream` replaced by [`BASE`].
pub fn save(path: &std::path::Path, exchanges: &[Exchange], upstream: &str) {
    let mut out = String::new();
    for x in exchanges {
        out.push_str(
            &serde_json::to_string(x)
                .expect("JSON")
                .replace(upstream, BASE),
        );
        out.push('\n');
    }
    std::fs::write(path, out).expect("write the recording");
}

/// Reads a recording written by [`save`].
pub fn load(path: &std::path::Path) -> Vec<Exchange> {
    let text = std::fs::read_to_string(path).expect("read the recording");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a recorded exchange"))
        .collect()
}

/// Replaces each answer of a replay (given the method, the absolute URL,
/// the recorded status and answer), or not.
pub type Spoil = dyn Fn(&str, &str, u16, &Value) -> Option<(u16, Vec<u8>)> + Send + Sync;

/// What a replay answered: (method, path with query, status sent,
/// spoiled, recorded, the request's body, requests in flight when it was
/// answered, itself included). `recorded` is false for a request the
/// recording holds no answer to.
pub type Served = (String, String, u16, bool, bool, Value, usize);

/// A request as the recording knows it: (method, path, body).
type Key = (String, String, String);

/// Recorded answers by (method, path, body), in order, and how many
/// were served.
type Queues = BTreeMap<Key, (Vec<(u16, &'static Value)>, usize)>;

/// The recorded answers to each read of the stateful steps, with the
/// writes applied before each.
type States = BTreeMap<Key, Vec<(BTreeSet<usize>, u16, &'static Value)>>;

/// Whether a request writes: anything but a GET and a GraphQL query.
pub fn writes(method: &str, path: &str) -> bool {
    method != "GET" && !path.ends_with("/api/graphql/")
}

/// A replay's state.
pub struct Replay {
    queues: Queues,
    /// The recorded writes of the stateful steps, numbered.
    recorded_writes: BTreeMap<Key, usize>,
    /// The reads of the stateful steps: the writes applied before each
    /// recorded answer.
    states: States,
    /// The recorded writes applied so far.
    pub applied: BTreeSet<usize>,
    /// Recorded writes sent again after they were applied: `METHOD path`.
    pub again: Vec<String>,
    /// Reads answered in a state the recording never was in.
    pub unrecorded_state: usize,
    pub log: Vec<Served>,
    pub spoil: Option<Arc<Spoil>>,
    /// Requests being answered now.
    in_flight: usize,
    base: String,
}

impl Replay {
    /// A replay of `exchanges` (those of the given steps, or all), those
    /// of the `stateful` steps with a state. The answers are borrowed, not
    /// copied: a campaign makes a replay per case.
    pub fn new(exchanges: &'static [Exchange], steps: &[&str], stateful: &[&str]) -> Replay {
        let mut queues = Queues::new();
        let mut recorded_writes = BTreeMap::new();
        let mut states = States::new();
        let mut before = BTreeSet::new();
        for x in exchanges
            .iter()
            .filter(|x| steps.is_empty() || steps.contains(&x.step.as_str()))
        {
            let key = (x.method.clone(), x.path.clone(), x.body.to_string());
            if stateful.contains(&x.step.as_str()) {
                if writes(&x.method, &x.path) {
                    let n = recorded_writes.len();
                    recorded_writes.entry(key.clone()).or_insert(n);
                    before.insert(recorded_writes[&key]);
                } else {
                    (states.entry(key.clone()).or_default()).push((
                        before.clone(),
                        x.status,
                        &x.answer,
                    ));
                }
            }
            (queues.entry(key).or_default().0).push((x.status, &x.answer));
        }
        Replay {
            queues,
            recorded_writes,
            states,
            applied: BTreeSet::new(),
            again: Vec::new(),
            unrecorded_state: 0,
            log: Vec::new(),
            spoil: None,
            in_flight: 0,
            base: String::new(),
        }
    }

    /// How many writes the stateful steps recorded.
    pub fn recorded_writes(&self) -> usize {
        self.recorded_writes.len()
    }

    /// Forgets the spoil hook: the answers from now on are honest.
    pub fn honest(&mut self) {
        self.spoil = None;
    }

    fn answer(&mut self, method: &str, uri: &str, body: &Value) -> (u16, Value, bool) {
        let key = (method.to_string(), uri.to_string(), body.to_string());
        if let Some(&n) = self.recorded_writes.get(&key)
            && !self.applied.insert(n)
        {
            self.again.push(format!("{method} {uri}"));
        }
        if let Some(answers) = self.states.get(&key) {
            let Some((_, status, v)) = answers.iter().find(|(b, _, _)| *b == self.applied) else {
                self.unrecorded_state += 1;
                return (
                    400,
                    json!({"detail": format!(
                        "the recording holds no answer to {method} {uri} with these {} of its {} writes applied",
                        self.applied.len(),
                        self.recorded_writes.len()
                    )}),
                    false,
                );
            };
            let text = v.to_string().replace(BASE, &self.base);
            return (
                *status,
                serde_json::from_str(&text).unwrap_or_else(|_| (*v).clone()),
                true,
            );
        }
        match self.queues.get_mut(&key) {
            Some((answers, next)) if !answers.is_empty() => {
                let (status, v) = answers[(*next).min(answers.len() - 1)];
                *next += 1;
                let text = v.to_string().replace(BASE, &self.base);
                (
                    status,
                    serde_json::from_str(&text).unwrap_or_else(|_| v.clone()),
                    true,
                )
            }
            _ => (
                400,
                json!({"detail": format!("the recording holds no answer to {method} {uri} with this body")}),
                false,
            ),
        }
    }
}

/// Serves `replay` on a loopback port; returns its base URL.
pub async fn replay(replay: Arc<Mutex<Replay>>) -> String {
    let r = replay.clone();
    let base = serve(move |method: String, uri: String, _, bytes: Bytes| {
        let replay = r.clone();
        async move {
            let body = json_or_null(&bytes);
            lock(&replay).in_flight += 1;
            // A pause before a write's answer, so that the client's
            // concurrent writes overlap. Its reads go one at a time (a
            // phase's state, then its read-back), so they are answered at
            // once.
            if writes(&method, &uri) {
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
            let mut rp = lock(&replay);
            let (status, v, recorded) = rp.answer(&method, &uri, &body);
            let url = format!("{}{uri}", rp.base);
            let out = rp.spoil.clone().and_then(|f| f(&method, &url, status, &v));
            let spoiled = out.is_some();
            let (sent, bytes) = match out {
                Some((s, b)) => (s, Bytes::from(b)),
                None if v.is_null() => (status, Bytes::new()),
                None => (status, Bytes::from(v.to_string())),
            };
            let in_flight = rp.in_flight;
            rp.in_flight -= 1;
            rp.log
                .push((method, uri, sent, spoiled, recorded, body, in_flight));
            Some((sent, bytes))
        }
    })
    .await;
    lock(&replay).base = base.clone();
    base
}

/// How [`spoiling`] spoils the one write it is told to, in the two ways a
/// real network can: the write never reaches Nautobot and some other
/// answer comes back, or Nautobot makes it and its answer is lost.
#[derive(Debug, Clone)]
pub enum Spoiled {
    /// (a) Not forwarded: Nautobot never sees the write, and this status
    /// and body (an error page, a refusal, a forged success) come back.
    NotSent(u16, &'static str),
    /// (b) Forwarded and made by Nautobot; its answer is replaced by this
    /// status and body.
    Replaced(u16, &'static str),
    /// (b) Forwarded and made; the connection is closed without an answer.
    Dropped,
    /// (b) Forwarded and made; the answer is held this long (longer than
    /// the client's timeout), then sent.
    Held(std::time::Duration),
}

/// The state of a spoiling proxy in front of a real Nautobot: it forwards
/// every request as [`record`] does, and numbers the writes by phase: a
/// phase is a run of writes with no read between them, as the push
/// client writes a phase's objects and then reads again. The `target`
/// write, counted as the writes arrive, is spoiled once, as `how` says.
pub struct Spoiler {
    pub upstream: String,
    /// The write to spoil: (phase, its index among the phase's writes),
    /// both from 0, phases counted from the proxy's start.
    pub target: Option<(usize, usize)>,
    pub how: Spoiled,
    /// Every write forwarded or spoiled, by phase: `METHOD path`.
    pub phases: Vec<Vec<String>>,
    /// The write spoiled and how, once it is.
    pub spoiled: Option<String>,
    /// Requests forwarded to Nautobot whose answer has not come yet
    /// (a write the client gave up on is still made whole).
    pub upstream_in_flight: usize,
    /// Whether the last request was a write.
    in_writes: bool,
}

impl Spoiler {
    pub fn new(upstream: &str) -> Spoiler {
        Spoiler {
            upstream: upstream.to_string(),
            target: None,
            how: Spoiled::Dropped,
            phases: Vec::new(),
            spoiled: None,
            upstream_in_flight: 0,
            in_writes: false,
        }
    }

    /// Notes a request; whether (and how) to spoil it.
    fn note(&mut self, method: &str, uri: &str) -> Option<Spoiled> {
        if !writes(method, uri) {
            self.in_writes = false;
            return None;
        }
        if !self.in_writes {
            self.phases.push(Vec::new());
            self.in_writes = true;
        }
        let phase = self.phases.len() - 1;
        let k = self.phases[phase].len();
        self.phases[phase].push(format!("{method} {uri}"));
        if self.spoiled.is_some() || self.target != Some((phase, k)) {
            return None;
        }
        self.spoiled = Some(format!(
            "{method} {uri}, write {} of phase {phase}: {:?}",
            k + 1,
            self.how
        ));
        Some(self.how.clone())
    }
}

/// A spoiling proxy in front of `sp`'s upstream; returns its base URL.
pub async fn spoiling(sp: Arc<Mutex<Spoiler>>) -> String {
    let http = proxy_client();
    serve(move |method: String, uri: String, headers, bytes: Bytes| {
        let sp = sp.clone();
        let http = http.clone();
        async move {
            let (upstream, how) = {
                let mut s = lock(&sp);
                let how = s.note(&method, &uri);
                (s.upstream.clone(), how)
            };
            if let Some(Spoiled::NotSent(status, body)) = how {
                return Some((status, Bytes::from_static(body.as_bytes())));
            }
            let req = forward(&http, &upstream, &method, &uri, &headers, &bytes);
            // Forwarded from a task of its own: the client closing its
            // connection does not break the write off half-way.
            lock(&sp).upstream_in_flight += 1;
            let s2 = sp.clone();
            let answer = tokio::spawn(async move {
                let out = async {
                    let resp = req.send().await.ok()?;
                    let status = resp.status().as_u16();
                    Some((status, resp.bytes().await.ok()?))
                }
                .await;
                lock(&s2).upstream_in_flight -= 1;
                out
            })
            .await
            .ok()
            .flatten();
            let (status, answer) = answer?;
            match how {
                Some(Spoiled::Replaced(s, body)) => Some((s, Bytes::from_static(body.as_bytes()))),
                Some(Spoiled::Dropped) => None,
                Some(Spoiled::Held(d)) => {
                    tokio::time::sleep(d).await;
                    Some((status, answer))
                }
                Some(Spoiled::NotSent(..)) | None => Some((status, answer)),
            }
        }
    })
    .await
}
