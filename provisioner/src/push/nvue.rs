//! NVIDIA Cumulus Linux 5 over the NVUE REST API (HTTPS, `/nvue_v1`,
//! basic auth), with revisions.
//!
//! - load: `POST /nvue_v1/revision` makes a revision; `DELETE
//!   /nvue_v1/?rev=R` empties it and `PATCH /nvue_v1/?rev=R` with the whole
//!   tree fills it (replace semantics); the diff is the two `GET`s NVIDIA's
//!   nv-config-manager uses (`?rev=R&diff=applied` for what the candidate
//!   adds, `?rev=applied&diff=R` for what it removes).
//! - commit: the applied revision before ours is the rollback point, and
//!   no other revision may be on its way to being applied (`GET
//!   /nvue_v1/revision`); `PATCH /nvue_v1/revision/R` with
//!   `{"state":"apply", "auto-prompt":{"ays":"ays_yes","confirm":"confirm_yes"},
//!   "state-controls":{"confirm":<seconds>}}`, then the revision is polled
//!   once a second until it waits for its confirm.
//! - confirm: the answer to the waiting revision, then `PATCH
//!   /nvue_v1/revision/applied` `{"state":"save"}` unless the device saved
//!   by itself (`applied_and_saved`, 5.9 and later).
//! - rollback: every revision still waiting for its confirm is answered
//!   "no" first (the device goes back at once instead of when its timer
//!   runs out, and nothing is left to block the next apply); then, unless
//!   that already brought the rollback point back, the earlier revision is
//!   applied without a timer (`PATCH /nvue_v1/revision/P`
//!   `{"state":"apply"}`), and saved.
//!
//! **The confirm exchange.** NVIDIA documents the CLI (`nv config apply
//! --confirm <time>`, `--confirm-status`, the nvue-reference
//! Config-Commands.md since 5.0.0; the revision states in `nv config
//! revision` since 5.5.0) but not its REST form, and two public clients
//! read it differently (docs/switch-push.md, "The NVUE confirm
//! exchange"): NVIDIA's nv-config-manager sees the revision wait in `ays`
//! and confirms with a second apply (`"auto-prompt":{"ays":"ays_yes"}`);
//! the GPN NOC's gpncfg sees it wait in `confirm` and answers
//! `{"state":"confirm_yes"}` (or `confirm_no`). The client accepts either
//! waiting state and answers in that state's form first, the other form
//! when the device refuses it (400).
//!
//! **Assumptions** (not in NVIDIA's public REST documentation): the
//! confirm timer is `state-controls.confirm` in seconds; an expired timer
//! leaves the revision in `confirm_fail` with the earlier configuration
//! applied; a rollback is the apply of an earlier revision id; `DELETE
//! /nvue_v1/revision/R` drops a pending revision; the operational state
//! has `interface.<name>.link.{state,speed}`, `interface.<name>.lldp.
//! neighbor.<id>.{chassis.system-name,port.name}`. docs/switch-push.md
//! lists what to check on a real switch first.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::device::{
    Candidate, Commit, Connect, Device, Identity, Observed, Opening, Target, Transport,
};
use super::error::{PushError, Result};
use super::http::Http;
use super::keep;
use super::nvue_answers::{obj, observed, routes, uses_groups};
use super::nvue_tree;

/// States in which an applied revision waits for its confirm: `confirm`
/// (gpncfg's reading), `ays` (nv-config-manager's).
const WAITING: &[&str] = &["confirm", "ays"];

/// States of an applied revision (`applied_and_saved`: 5.9 and later save
/// by themselves, Config-Commands.md).
const APPLIED: &[&str] = &["applied", "applied_and_saved"];

/// States of a revision on its way to being applied or waiting for an
/// answer, which hold back every other apply (gpncfg's `NT_BLOCKING`:
/// `apply` is "waiting on other revisions").
const BUSY: &[&str] = &[
    "apply",
    "ays",
    "ays_yes",
    "ays_no",
    "confirm",
    "confirm_yes",
    "confirm_no",
    "ignore_fail",
    "ignore_fail_yes",
    "ignore_fail_no",
    "readying",
    "ready",
    "reloading",
    "reloaded",
    "verifying",
];

/// States in which an apply has failed.
const FAILED: &[&str] = &[
    "invalid",
    "apply_fail",
    "apply_error",
    "ignore_fail",
    "ays_fail",
    "confirm_fail",
];

/// An NVUE switch.
#[derive(Debug)]
pub struct Nvue {
    http: Http,
    native: bool,
    /// The revision of the loaded candidate.
    revision: Option<String>,
    /// The rollback point named by `prepare`.
    prepared: Option<String>,
    /// The release `GET /nvue_v1/system` reports (`build`: `Cumulus Linux
    /// 5.15.0` is `(5, 15)`), once read.
    release: Option<(u32, u32)>,
    /// How often an apply is polled, and for how long: the push's confirm
    /// timer (an apply still running when the timer would run out has
    /// failed either way).
    poll: Duration,
    apply_timeout: Duration,
    /// The VRFs the loaded candidate configures (the per-VRF reads of
    /// `observe`), once loaded.
    vrfs: Option<Vec<String>>,
}

impl Connect for Nvue {
    const TRANSPORTS: &'static [Transport] = &[Transport::Https];
    const CANDIDATE: Candidate = Candidate::NvueTree;
    fn connect(target: &Target, opening: &Opening<'_>) -> Result<Nvue> {
        Nvue::new(target, opening.native_timer, opening.timer)
    }
}

impl Nvue {
    /// The client of `target`; `native` false runs the commit without the
    /// device's confirm timer (the push's watchdog keeps the time); `timer`
    /// is the push's confirm timer, the limit of every wait on an apply.
    pub fn new(target: &Target, native: bool, timer: Duration) -> Result<Nvue> {
        Ok(Nvue {
            http: Http::new(target)?,
            native,
            revision: None,
            prepared: None,
            release: None,
            // NVIDIA's own examples poll a revision once a second
            // (NVUE-API.md, 5.9 and 5.15: POLL_APPLIED = 1).
            poll: Duration::from_secs(1),
            apply_timeout: timer.max(Duration::from_secs(10)),
            vrfs: None,
        })
    }

    /// Polls less often (tests use a shorter interval).
    pub fn with_poll(mut self, every: Duration) -> Nvue {
        self.poll = every;
        self
    }

    async fn call(
        &self,
        m: Method,
        path: &str,
        body: Option<&Value>,
        action: &str,
    ) -> Result<Value> {
        let (status, v) = self.http.send(m, path, body, action).await?;
        if status.is_success() {
            return Ok(v);
        }
        let detail = problem(&v);
        Err(match status {
            StatusCode::CONFLICT | StatusCode::LOCKED => PushError::Locked { by: detail },
            StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY => {
                PushError::Rejected { message: detail }
            }
            s => PushError::Protocol {
                action: action.to_string(),
                message: format!("HTTP {s}: {detail}"),
            },
        })
    }

    fn rev(&self) -> Result<&str> {
        self.revision.as_deref().ok_or_else(|| PushError::Protocol {
            action: "using the candidate".to_string(),
            message: "no candidate is loaded".to_string(),
        })
    }

    /// The state of revision `id` (and its issues).
    async fn state(&self, id: &str) -> Result<(String, String)> {
        let v = self
            .call(
                Method::GET,
                &format!("/nvue_v1/revision/{}", enc(id)),
                None,
                "reading the revision's state",
            )
            .await?;
        let state = v
            .get("state")
            .and_then(Value::as_str)
            .ok_or_else(|| PushError::Protocol {
                action: "reading the revision's state".to_string(),
                message: format!("no `state` in {v}"),
            })?;
        Ok((state.to_string(), issues(&v)))
    }

    /// Polls revision `id` until its state is one of `done` (returned) or
    /// a failure.
    async fn wait(&self, id: &str, done: &[&str], action: &str) -> Result<String> {
        let start = std::time::Instant::now();
        loop {
            let (state, issues) = self.state(id).await?;
            if done.contains(&state.as_str()) {
                return Ok(state);
            }
            if state == "confirm_fail" {
                return Err(PushError::TimerExpired {
                    point: "the revision applied before".to_string(),
                });
            }
            if FAILED.contains(&state.as_str()) {
                return Err(PushError::Rejected {
                    message: if issues.is_empty() {
                        format!("revision {id} is {state}")
                    } else {
                        format!("revision {id} is {state}: {issues}")
                    },
                });
            }
            if start.elapsed() > self.apply_timeout {
                return Err(PushError::Timeout {
                    action: action.to_string(),
                    seconds: self.apply_timeout.as_secs(),
                });
            }
            tokio::time::sleep(self.poll).await;
        }
    }

    async fn apply(&self, id: &str, body: Value, done: &[&str], action: &str) -> Result<String> {
        self.call(
            Method::PATCH,
            &format!("/nvue_v1/revision/{}", enc(id)),
            Some(&body),
            action,
        )
        .await?;
        self.wait(id, done, action).await
    }

    /// Saves the applied revision (`PATCH /nvue_v1/revision/applied`
    /// `{"state":"save"}`, NVUE-API.md "Save a Configuration") unless the
    /// apply ended `applied_and_saved` (5.9 and later save by themselves).
    async fn save_unless_saved(&self, state: &str, action: &str) -> Result<()> {
        if state != "applied_and_saved" {
            let body = json!({"state": "save", "auto-prompt": {"ays": "ays_yes"}});
            self.call(
                Method::PATCH,
                "/nvue_v1/revision/applied",
                Some(&body),
                action,
            )
            .await?;
        }
        Ok(())
    }

    /// Every revision and its state (`GET /nvue_v1/revision`).
    async fn revisions(&self) -> Result<Vec<(String, String)>> {
        let v = self
            .call(Method::GET, "/nvue_v1/revision", None, "listing revisions")
            .await?;
        let Value::Object(m) = v else {
            return Err(PushError::Protocol {
                action: "listing revisions".to_string(),
                message: "not an object of revisions".to_string(),
            });
        };
        let mut out: Vec<(String, String)> = m
            .iter()
            .map(|(k, r)| {
                let state = r.get("state").and_then(Value::as_str).unwrap_or("");
                (k.clone(), state.to_string())
            })
            .collect();
        // Oldest first: numeric ids by number, `changeset/...` ids by text.
        out.sort_by_key(|(k, _)| (k.parse::<u64>().ok(), k.clone()));
        Ok(out)
    }

    /// The revision that waits for its confirm (`push confirm` from
    /// another process).
    async fn waiting_revision(&self) -> Result<String> {
        let all = self.revisions().await?;
        all.into_iter()
            .rev()
            .find(|(_, st)| WAITING.contains(&st.as_str()))
            .map(|(k, _)| k)
            .ok_or_else(|| PushError::TimerExpired {
                point: "the revision applied before".to_string(),
            })
    }

    /// The applied revision (the newest applied one): the rollback point.
    /// A revision of someone else's on its way to being applied, or
    /// waiting for its confirm, is a lock: an apply now would queue behind
    /// it (or be refused) and our confirm timer would run meanwhile.
    async fn applied_revision(&self) -> Result<String> {
        let all = self.revisions().await?;
        if let Some((id, st)) = all
            .iter()
            .find(|(id, st)| BUSY.contains(&st.as_str()) && Some(id) != self.revision.as_ref())
        {
            return Err(PushError::Locked {
                by: format!(
                    "revision {id} (someone else's, {} in state {st}): answer it on the switch (`nv config apply --confirm-yes`, or let its timer run out)",
                    if WAITING.contains(&st.as_str()) {
                        "waiting for its confirm"
                    } else {
                        "being applied"
                    }
                ),
            });
        }
        applied_of(&all).ok_or_else(|| PushError::Protocol {
            action: "finding the applied revision (the rollback point)".to_string(),
            message: "no revision is applied; apply one once on the switch (nv config apply) before pushing".to_string(),
        })
    }

    /// Answers revision `id`, which waits for its confirm in `state`:
    /// `yes` keeps it, polled until applied (returns that state); no goes
    /// back to the revision before, polled until it no longer waits.
    ///
    /// The form of the answer follows the waiting state: `confirm` is
    /// answered `{"state":"confirm_yes"}` / `confirm_no` (gpncfg), `ays` by
    /// a second apply with `"auto-prompt":{"ays":"ays_yes"}` / `ays_no`
    /// (nv-config-manager); a device that refuses that form (400) gets the
    /// other one.
    async fn answer(&self, id: &str, state: &str, yes: bool) -> Result<String> {
        let own = json!({"state": if yes { "confirm_yes" } else { "confirm_no" }});
        let apply = json!({"state": "apply", "auto-prompt": {"ays": if yes { "ays_yes" } else { "ays_no" }}});
        let (first, second) = if state == "ays" {
            (apply, own)
        } else {
            (own, apply)
        };
        let path = format!("/nvue_v1/revision/{}", enc(id));
        let action = if yes {
            "confirming"
        } else {
            "cancelling the revision that waits for its confirm"
        };
        match self.call(Method::PATCH, &path, Some(&first), action).await {
            Ok(_) => {}
            Err(PushError::Rejected { .. }) => {
                self.call(Method::PATCH, &path, Some(&second), action)
                    .await?;
            }
            Err(e) => return Err(e),
        }
        if yes {
            return self.wait(id, APPLIED, action).await;
        }
        let start = std::time::Instant::now();
        loop {
            let (now, _) = self.state(id).await?;
            if !BUSY.contains(&now.as_str()) && !is_transient(&now) {
                return Ok(now);
            }
            if start.elapsed() > self.apply_timeout {
                return Err(PushError::Timeout {
                    action: format!("{action} (revision {id} is still {now})"),
                    seconds: self.apply_timeout.as_secs(),
                });
            }
            tokio::time::sleep(self.poll).await;
        }
    }
}

/// The newest applied revision of a listing.
fn applied_of(all: &[(String, String)]) -> Option<String> {
    all.iter()
        .rev()
        .find(|(_, st)| matches!(st.as_str(), "applied" | "applied_and_saved" | "saved"))
        .map(|(k, _)| k.clone())
}

/// True for the states an apply passes through on its way (NVUE-API.md,
/// 5.9 and 5.15, "Troubleshoot Configuration Changes"; gpncfg's
/// `NT_PREPROCESS`).
fn is_transient(state: &str) -> bool {
    matches!(
        state,
        "checking"
            | "checked"
            | "readying"
            | "ready"
            | "verifying"
            | "verified"
            | "reloading"
            | "reloaded"
    )
}

impl Device for Nvue {
    async fn identity(&mut self) -> Result<Identity> {
        let v = self
            .call(
                Method::GET,
                "/nvue_v1/system?rev=operational",
                None,
                "reading the hostname",
            )
            .await?;
        let hostname =
            v.get("hostname")
                .and_then(Value::as_str)
                .ok_or_else(|| PushError::Protocol {
                    action: "reading the hostname".to_string(),
                    message: "no `hostname` in /nvue_v1/system".to_string(),
                })?;
        self.release = v.get("build").and_then(Value::as_str).and_then(release_of);
        Ok(Identity {
            hostname: hostname.to_string(),
            serial: None,
        })
    }

    async fn load(&mut self, candidate: &str) -> Result<String> {
        // The candidate is the planner's tree for this switch
        // (`planner::render::nvue_trees`), as JSON text.
        let mut plan: Value = serde_json::from_str(candidate).map_err(|e| PushError::Protocol {
            action: "reading the NVUE candidate".to_string(),
            message: format!("not the planner's NVUE tree: {e}"),
        })?;
        if self.release.is_some_and(|r| r >= (5, 15)) {
            lldp_in_system(&mut plan);
        }
        // The replace below starts from nothing: the candidate carries the
        // device's management and everything else the plan does not own.
        let applied = self
            .call(
                Method::GET,
                "/nvue_v1/?rev=applied&filled=false",
                None,
                "reading the applied configuration",
            )
            .await?;
        self.vrfs = Some(
            obj(plan.get("vrf").unwrap_or(&Value::Null))
                .map(|(k, _)| k.clone())
                .collect(),
        );
        let tree = keep::nvue_candidate(&plan, &applied);
        let cut = keep::nvue_cut(&applied, &tree, self.http.peer(), self.http.user());
        if !cut.is_empty() {
            return Err(PushError::Management {
                address: self.http.address().to_string(),
                user: self.http.user().to_string(),
                lines: cut,
            });
        }
        let v = self
            .call(
                Method::POST,
                "/nvue_v1/revision",
                None,
                "creating a revision",
            )
            .await?;
        let id = match &v {
            Value::Object(m) if m.len() == 1 => m.keys().next().cloned().unwrap_or_default(),
            _ => {
                return Err(PushError::Protocol {
                    action: "creating a revision".to_string(),
                    message: format!("expected {{\"<id>\": {{...}}}}, got {v}"),
                });
            }
        };
        self.revision = Some(id.clone());
        let r = enc(&id);
        self.call(
            Method::DELETE,
            &format!("/nvue_v1/?rev={r}"),
            None,
            "emptying the revision",
        )
        .await?;
        self.call(
            Method::PATCH,
            &format!("/nvue_v1/?rev={r}"),
            Some(&tree),
            "loading the candidate",
        )
        .await?;
        let added = self
            .call(
                Method::GET,
                &format!("/nvue_v1/?rev={r}&diff=applied&filled=false"),
                None,
                "reading the diff (added)",
            )
            .await?;
        let removed = self
            .call(
                Method::GET,
                &format!("/nvue_v1/?rev=applied&diff={r}&filled=false"),
                None,
                "reading the diff (removed)",
            )
            .await?;
        Ok(nvue_tree::diff_text(&added, &removed))
    }

    async fn discard(&mut self) -> Result<()> {
        if let Some(id) = self.revision.take() {
            self.call(
                Method::DELETE,
                &format!("/nvue_v1/revision/{}", enc(&id)),
                None,
                "dropping the revision",
            )
            .await?;
        }
        Ok(())
    }

    async fn prepare(&mut self) -> Result<String> {
        let point = self.applied_revision().await?;
        self.prepared = Some(point.clone());
        Ok(point)
    }

    fn native_timer(&self) -> bool {
        self.native
    }

    async fn commit(&mut self, timer: Duration) -> Result<Commit> {
        // An apply that has not finished when the confirm timer would run
        // out has failed either way: the limit is the timer.
        self.apply_timeout = timer.max(Duration::from_secs(10));
        let id = self.rev()?.to_string();
        let point = match self.prepared.take() {
            Some(p) => p,
            None => self.applied_revision().await?,
        };
        if self.native {
            let body = json!({
                "state": "apply",
                "auto-prompt": {"ays": "ays_yes", "confirm": "confirm_yes"},
                "state-controls": {"confirm": timer.as_secs().max(1)},
            });
            let mut done: Vec<&str> = WAITING.to_vec();
            done.extend_from_slice(APPLIED);
            let state = self
                .apply(&id, body, &done, "applying with a confirm timer")
                .await?;
            if APPLIED.contains(&state.as_str()) {
                // Applied for good at once: the device's timer is not in
                // force, so nothing would take a failed candidate back.
                return Err(PushError::Protocol {
                    action: "applying with a confirm timer".to_string(),
                    message: format!(
                        "the switch applied revision {id} at once ({state}) instead of waiting for its confirm, so its confirm timer is not in force; set native_timer = false for this switch in the devices file (the push then keeps the time itself)"
                    ),
                });
            }
        } else {
            let body = json!({"state": "apply", "auto-prompt": {"ays": "ays_yes"}});
            self.apply(&id, body, APPLIED, "applying").await?;
        }
        Ok(Commit {
            point,
            native_timer: self.native,
        })
    }

    async fn observe(&mut self) -> Result<Observed> {
        // Only the subtrees verification needs (NVIDIA warns that whole
        // interface trees load switches with many ports). From 5.15 the
        // collection reads take `include` (NVUE-API.md of 5.15, "Retrieve
        // View Types"); 5.9's NVUE-API.md documents no such parameter, so
        // before 5.15 (or with the release unknown) the interfaces are
        // read whole and the VRFs object by object (`nv show vrf <v>
        // router bgp neighbor`, `nv show vrf <v> router rib ipv4 route`:
        // the NVUE command reference, since 5.0.0).
        let new = self.release.is_some_and(|r| r >= (5, 15));
        // From 5.12 `nv show vrf <v> router bgp neighbor -o json` is a
        // summary; the detail (remote AS, session state) needs
        // `--view=detail`, REST `?view=detail` (the note on the 5.12 and
        // 5.15 Troubleshooting-BGP pages; NVIDIA publishes no JSON sample
        // of the summary, docs/switch-push.md).
        let detail = if self.release.is_some_and(|r| r >= (5, 12)) {
            "&view=detail"
        } else {
            ""
        };
        let ifs_path = if new {
            "/nvue_v1/interface?rev=operational&include=/*/link/state,/*/link/speed,/*/lldp/neighbor"
        } else {
            "/nvue_v1/interface?rev=operational"
        };
        let ifs = self
            .call(Method::GET, ifs_path, None, "reading interfaces")
            .await?;
        let names = match &self.vrfs {
            Some(v) => v.clone(),
            None => {
                let applied = self
                    .call(
                        Method::GET,
                        "/nvue_v1/vrf?rev=applied&filled=false",
                        None,
                        "listing VRFs",
                    )
                    .await?;
                obj(&applied).map(|(k, _)| k.clone()).collect()
            }
        };
        let mut vrfs = if new {
            self.call(
                Method::GET,
                "/nvue_v1/vrf?rev=operational&include=/*/router/rib/ipv4/route",
                None,
                "reading routes",
            )
            .await?
        } else {
            Value::Object(serde_json::Map::new())
        };
        if !vrfs.is_object() {
            vrfs = Value::Object(serde_json::Map::new());
        }
        for v in names {
            let e = enc(&v);
            let neighbours = self
                .call(
                    Method::GET,
                    &format!("/nvue_v1/vrf/{e}/router/bgp/neighbor?rev=operational{detail}"),
                    None,
                    "reading BGP neighbours",
                )
                .await
                .or_else(absent)?;
            let entry = &mut vrfs[v.as_str()];
            if !entry.is_object() {
                *entry = json!({});
            }
            if !entry["router"].is_object() {
                entry["router"] = json!({});
            }
            entry["router"]["bgp"] = json!({"neighbor": neighbours});
            if !new {
                let routes = self
                    .call(
                        Method::GET,
                        &format!("/nvue_v1/vrf/{e}/router/rib/ipv4/route?rev=operational"),
                        None,
                        "reading routes",
                    )
                    .await
                    .or_else(absent)?;
                entry["router"]["rib"] = json!({"ipv4": {"route": routes}});
            }
        }
        let mut o = observed(&ifs, &vrfs);
        // Routes whose next hops are a next-hop group (the `route-entry`
        // shape): the groups' resolved next hops.
        if o.routes.iter().any(|r| r.next_hops.is_empty()) && uses_groups(&vrfs) {
            let groups = self
                .call(
                    Method::GET,
                    "/nvue_v1/router/nexthop/rib?rev=operational",
                    None,
                    "reading next-hop groups",
                )
                .await?;
            o.routes = routes(&vrfs, Some(&groups));
        }
        Ok(o)
    }

    async fn confirm(&mut self) -> Result<()> {
        let id = match &self.revision {
            Some(id) => id.clone(),
            // A confirm from `push confirm` (another process): the
            // revision that waits for it.
            None if self.native => self.waiting_revision().await?,
            None => String::new(),
        };
        let state = if self.native {
            let mut reached: Vec<&str> = WAITING.to_vec();
            reached.extend_from_slice(APPLIED);
            let now = self
                .wait(&id, &reached, "reading the revision before its confirm")
                .await?;
            if APPLIED.contains(&now.as_str()) {
                // Confirmed already (an earlier confirm whose answer was
                // lost).
                now
            } else {
                self.answer(&id, &now, true).await?
            }
        } else if id.is_empty() {
            String::new()
        } else {
            self.state(&id).await?.0
        };
        self.save_unless_saved(&state, "saving").await?;
        self.revision = None;
        Ok(())
    }

    async fn rollback(&mut self, point: &str) -> Result<()> {
        // A revision waiting for its confirm (ours, or one a killed push
        // left) is answered "no" first: the device goes back now instead
        // of when its timer runs out, and no waiting revision holds the
        // apply below back. The rollback itself runs without a timer, so
        // it never leaves a revision of its own waiting.
        for (id, st) in self.revisions().await? {
            if id != point && WAITING.contains(&st.as_str()) {
                self.answer(&id, &st, false).await?;
            }
        }
        // Our candidate, if it never went out, is dropped.
        if let Some(id) = self.revision.take()
            && self.state(&id).await.is_ok_and(|(st, _)| st == "pending")
        {
            self.call(
                Method::DELETE,
                &format!("/nvue_v1/revision/{}", enc(&id)),
                None,
                "dropping the revision",
            )
            .await?;
        }
        let all = self.revisions().await?;
        let state = if applied_of(&all).as_deref() == Some(point) {
            all.iter()
                .find(|(k, _)| k == point)
                .map(|(_, st)| st.clone())
                .unwrap_or_default()
        } else {
            if let Some((id, st)) = all.iter().find(|(_, st)| BUSY.contains(&st.as_str())) {
                return Err(PushError::Locked {
                    by: format!(
                        "revision {id} is {st}; the rollback to revision {point} would queue behind it"
                    ),
                });
            }
            let body = json!({"state": "apply", "auto-prompt": {"ays": "ays_yes"}});
            self.apply(point, body, APPLIED, "rolling back").await?
        };
        // Saved, so that a reboot does not bring back what was rolled
        // back (releases before 5.9 do not save an apply by themselves).
        self.save_unless_saved(&state, "saving the rollback")
            .await?;
        Ok(())
    }
}

/// An object the switch does not have (404: a VRF without BGP or routes)
/// reads as empty.
fn absent(e: PushError) -> Result<Value> {
    match &e {
        PushError::Protocol { message, .. } if message.starts_with("HTTP 404") => Ok(json!({})),
        _ => Err(e),
    }
}

/// `(major, minor)` of an NVUE `build` (`Cumulus Linux 5.15.0`).
fn release_of(build: &str) -> Option<(u32, u32)> {
    let v = build
        .split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))?;
    let mut it = v.split('.').map(|x| x.parse::<u32>().ok());
    Some((it.next()??, it.next()??))
}

/// Moves the plan's `service lldp` to `system lldp`: Cumulus Linux 5.15
/// configures LLDP as `nv set system lldp` (Link-Layer-Discovery-Protocol.md
/// of 5.15: `nv set system lldp state enabled`, `nv show system lldp`);
/// earlier releases as `nv set service lldp`, which the planner renders.
fn lldp_in_system(plan: &mut Value) {
    let Some(lldp) = plan
        .get_mut("service")
        .and_then(Value::as_object_mut)
        .and_then(|s| s.remove("lldp"))
    else {
        return;
    };
    if plan["service"]
        .as_object()
        .is_some_and(serde_json::Map::is_empty)
        && let Some(m) = plan.as_object_mut()
    {
        m.remove("service");
    }
    let lldp = match lldp {
        Value::Object(m) if m.is_empty() => json!({"state": "enabled"}),
        other => other,
    };
    if let Some(m) = plan.as_object_mut() {
        let system = m.entry("system").or_insert_with(|| json!({}));
        if let Some(s) = system.as_object_mut() {
            s.insert("lldp".to_string(), lldp);
        }
    }
}

/// Percent-encodes a revision id for a path or query (`changeset/a/b`).
fn enc(id: &str) -> String {
    let mut s = String::new();
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// The message of an NVUE error body (`{"title":..,"detail":..}`), with
/// the errors of its `validation.selected_errors` (a schema refusal: "Bad
/// Request: Validation failed" alone names nothing), each with its
/// location when it has one.
fn problem(v: &Value) -> String {
    let title = v.get("title").and_then(Value::as_str);
    let detail = v.get("detail").and_then(Value::as_str);
    let mut out = match (title, detail) {
        (Some(t), Some(d)) => format!("{t}: {d}"),
        (None, Some(d)) | (Some(d), None) => d.to_string(),
        _ if v.is_null() => "no details".to_string(),
        _ if v.get("validation").is_some() => String::new(),
        _ => v.to_string(),
    };
    let errors: Vec<String> = match v.pointer("/validation/selected_errors") {
        Some(Value::Array(a)) => a.iter().map(validation_error).collect(),
        Some(Value::Object(m)) => m.values().map(validation_error).collect(),
        Some(other) if !other.is_null() => vec![validation_error(other)],
        _ => Vec::new(),
    };
    if !errors.is_empty() {
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&errors.join("; "));
    }
    out
}

/// One entry of `validation.selected_errors`: its message (`message`,
/// `detail` or `msg`) after its location (`path`, `location` or `loc`).
fn validation_error(e: &Value) -> String {
    let text = |keys: &[&str]| {
        keys.iter().find_map(|k| match e.get(*k) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Array(a)) if !a.is_empty() => Some(
                a.iter()
                    .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join("."),
            ),
            _ => None,
        })
    };
    match (
        text(&["path", "location", "loc"]),
        text(&["message", "detail", "msg"]),
    ) {
        (Some(at), Some(m)) => format!("{at}: {m}"),
        (None, Some(m)) => m,
        _ => match e {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        },
    }
}

/// The issues NVUE reports on a revision (`transition.issue`).
fn issues(v: &Value) -> String {
    let Some(issue) = v.pointer("/transition/issue") else {
        return String::new();
    };
    let mut out = Vec::new();
    match issue {
        Value::Object(m) => {
            for (k, i) in m {
                let msg = i.get("message").and_then(Value::as_str).unwrap_or(k);
                out.push(msg.to_string());
            }
        }
        Value::String(s) => out.push(s.clone()),
        other => out.push(other.to_string()),
    }
    out.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_ids_are_encoded() {
        assert_eq!(enc("12"), "12");
        assert_eq!(
            enc("changeset/cumulus/2024-01-01_10.00.00_AB12"),
            "changeset%2Fcumulus%2F2024-01-01_10.00.00_AB12"
        );
    }

    #[test]
    fn validation_errors_are_shown() {
        let v = json!({"title": "Bad Request", "detail": "Validation failed", "status": 400,
            "validation": {"selected_errors": [
                {"path": ["interface", "swp1", "link", "mtu"], "message": "99999 is greater than the maximum of 9216"},
                {"message": "'bogus' is not a valid property"}]}});
        assert_eq!(
            problem(&v),
            "Bad Request: Validation failed: interface.swp1.link.mtu: 99999 is greater than the maximum of 9216; 'bogus' is not a valid property"
        );
        let v = json!({"validation": {"selected_errors": {"0": {"location": "vrf.default", "detail": "unknown"}}}});
        assert_eq!(problem(&v), "vrf.default: unknown");
    }

    #[test]
    fn releases_and_lldp_spellings() {
        assert_eq!(release_of("Cumulus Linux 5.15.0"), Some((5, 15)));
        assert_eq!(release_of("Cumulus Linux 5.9.1"), Some((5, 9)));
        let mut t = json!({"service": {"lldp": {}}, "system": {"hostname": "sw1"}});
        lldp_in_system(&mut t);
        assert_eq!(
            t,
            json!({"system": {"hostname": "sw1", "lldp": {"state": "enabled"}}})
        );
    }
}
