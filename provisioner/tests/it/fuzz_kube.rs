//! Issue 31's campaign over the Kubernetes API server's answers: the
//! cluster client (`nodes`' and `submit`'s reads, `status`, the DRA view,
//! the controller's gang pass) against an API server that answers the
//! honest scripts of mock_api.rs (written from the Kubernetes API
//! reference) but spoils one answer in two: mutated JSON (keys dropped,
//! repeated or reordered, values of the wrong type, huge numbers), bodies
//! that are not JSON, terminal escapes. The server answers by path, in any
//! order and as often as asked (a spoiled `continue` token is followed
//! for as long as the client asks), and 404 for anything the script does
//! not hold. Each case asserts: no panic, an answer within
//! [`CALL_LIMIT`], at most [`REQUEST_LIMIT`] requests (pagination
//! bounded), and an error, when there is one, that says something and
//! carries no control character of the server's. `FUZZ_CASES` sets the
//! cases (64 by default), `FUZZ_SEED` the first seed.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::{Request, Response};
use kube::client::Body;
use proptest::prelude::*;
use serde_json::json;
use testkit::mutate::{self, Rng};

use crate::fuzz::{config, hostile_answer};
use crate::mock_api::{
    Exchange, failed_gang_script, mpijob_status_script, read_dra_script, read_view_script,
};
use provisioner::cluster;

/// Longest a client call may take, however the server answers.
const CALL_LIMIT: Duration = Duration::from_secs(10);

/// Most requests one call may send: a spoiled `continue` token must not
/// page forever.
const REQUEST_LIMIT: usize = 200;

/// The client calls of the campaign, each with the honest script its
/// server answers from.
const SCENARIOS: &[&str] = &["read_view", "status", "read_dra", "gang_pass"];

fn script(scenario: &str) -> Vec<Exchange> {
    match scenario {
        "read_view" => read_view_script(),
        "status" => mpijob_status_script(),
        "read_dra" => read_dra_script(),
        "gang_pass" => failed_gang_script(),
        other => unreachable!("no scenario {other}"),
    }
}

/// Runs `scenario` against its script, spoiling answers with `rng` when
/// given: `Err` when the run broke a rule, else the call's own error, if
/// any.
fn run_case(scenario: &'static str, mut rng: Option<Rng>) -> Result<Option<String>, String> {
    let exchanges = script(scenario);
    let endless = rng.as_mut().is_some_and(|rng| rng.chance(1, 8));
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&requests);
    let run = move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
            let client = kube::Client::new(service, "default");
            let server = tokio::spawn(async move {
                let mut handle = std::pin::pin!(handle);
                while let Some((req, send)) = handle.next_request().await {
                    counted.fetch_add(1, Ordering::Relaxed);
                    let (parts, _) = req.into_parts();
                    let uri = parts.uri.to_string();
                    let found = exchanges
                        .iter()
                        .find(|e| e.method == parts.method.as_str() && e.uri == uri)
                        .or_else(|| {
                            // A page after a spoiled `continue`: the
                            // list's own answer again.
                            let path = uri.split('?').next().unwrap_or_default();
                            exchanges.iter().find(|e| {
                                e.method == parts.method.as_str()
                                    && e.uri.split('?').next() == Some(path)
                            })
                        });
                    let (status, reply) = match found {
                        Some(e) => (e.status, e.reply.clone()),
                        None => (
                            404,
                            json!({ "kind": "Status", "apiVersion": "v1", "status": "Failure",
                                    "reason": "NotFound", "code": 404, "message": "not in the script" }),
                        ),
                    };
                    let (mut reply, n) = (reply, counted.load(Ordering::Relaxed));
                    // A list that never ends: every page names another.
                    if endless && reply.get("items").is_some() {
                        reply["metadata"]["continue"] = json!(format!("endless-{n}"));
                    }
                    let bytes = rng
                        .as_mut()
                        .and_then(|rng| hostile_answer(&reply, rng))
                        .unwrap_or_else(|| serde_json::to_vec(&reply).unwrap());
                    send.send_response(
                        Response::builder()
                            .status(status)
                            .header(http::header::CONTENT_TYPE, "application/json")
                            .body(Body::from(bytes))
                            .unwrap(),
                    );
                }
            });
            // What the command prints of a successful call.
            let mut printed = Vec::new();
            let call = async {
                match scenario {
                    "read_view" => cluster::read_view(&client, cluster::DEFAULT_GPU_RESOURCE)
                        .await
                        .map(drop),
                    "status" => cluster::status(&client, "ml", "train").await.map(|s| {
                        // What `status` prints: the server's words escaped.
                        printed.push(s.table());
                        printed.push(s.summary());
                    }),
                    "read_dra" => cluster::read_dra(&client).await.map(drop),
                    _ => cluster::stop_failed_gangs(&client, "2026-11-28T20:30:00Z")
                        .await
                        .map(drop),
                }
            };
            let out = tokio::time::timeout(CALL_LIMIT, call).await;
            server.abort();
            (out, printed)
        })
    };
    let (outcome, printed) = catch_unwind(AssertUnwindSafe(run))
        .map_err(|p| format!("{scenario} panicked: {}", mutate::panic_message(&*p)))?;
    let sent = requests.load(Ordering::Relaxed);
    if sent > REQUEST_LIMIT {
        return Err(format!(
            "{scenario} sent {sent} requests (limit {REQUEST_LIMIT})"
        ));
    }
    // Line breaks are the text's own (tables, lists); any other control
    // character came from the server unescaped.
    let clean = |what: &str, text: &str| match text.chars().find(|c| c.is_control() && *c != '\n') {
        Some(c) => Err(format!(
            "{scenario}: control character {c:?} in the {what}: {text:?}"
        )),
        None => Ok(()),
    };
    match outcome {
        Err(_) => Err(format!("{scenario} took more than {CALL_LIMIT:?}")),
        Ok(Ok(())) => {
            for text in &printed {
                clean("output", text)?;
            }
            Ok(None)
        }
        Ok(Err(e)) => {
            let shown = e.to_string();
            if shown.trim().is_empty() {
                return Err(format!("{scenario}: an empty error"));
            }
            clean("error", &shown)?;
            Ok(Some(shown))
        }
    }
}

/// One case of the campaign: a scenario picked and spoiled by `seed`.
fn kube_case(seed: u64) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    let scenario = *rng.pick(SCENARIOS);
    run_case(scenario, Some(rng))
        .map(drop)
        .map_err(|e| format!("seed {seed}: {e}"))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fuzz_kube_answers(seed in any::<u64>()) {
        if let Err(e) = kube_case(seed) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// The lenient server answers the honest scripts as mock_api.rs's strict
/// one does: with nothing spoiled every scenario succeeds, so the
/// campaign's errors come from the spoiled answers.
#[test]
fn the_honest_answers_pass() {
    for scenario in SCENARIOS {
        assert_eq!(run_case(scenario, None), Ok(None), "{scenario}");
    }
}
