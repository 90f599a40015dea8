//! `provisioner controller`: the admission controller's loop.

use planner::checked::CheckedPlan;
use provisioner::cluster;
use provisioner::jobs::admission;
use provisioner::nodes;

use anyhow::Context as _;

use super::{Failure, Format, Result, print, to_value};

/// `provisioner controller`: a pass now, then one after every change of
/// a Workload or of a gang's rank Pod (kube-runtime's watchers), each
/// decision on stdout. A pass that failed (a list, or one object's
/// request, after its own tries) is logged naming the object and run
/// again after a jittered back-off of 1 s doubling to 60 s; the other
/// jobs are served meanwhile. With `--once`, a failure is the exit code.
pub(super) async fn controller(
    client: &kube::Client,
    plan: &CheckedPlan,
    bound: &[nodes::Node],
    gpu_resource: &str,
    once: bool,
    progress: bool,
    format: Format,
) -> Result<()> {
    use futures::{FutureExt as _, StreamExt as _};
    use kube::runtime::{WatchStreamExt as _, watcher};
    // One line per event: JSON objects with an `event` field, or text
    // (errors on stderr, whatever --quiet says).
    let emit = |event: &str, value: &serde_json::Value, text: String| -> Result<()> {
        match format {
            Format::Json => {
                let mut v = value.clone();
                v["event"] = serde_json::json!(event);
                print(&format!(
                    "{}\n",
                    serde_json::to_string(&v).context("serialising JSON")?
                ))
            }
            Format::Table if event == "error" => {
                eprintln!("{text}");
                Ok(())
            }
            Format::Table => print(&format!("{text}\n")),
        }
    };
    // A request that failed, named by its object.
    let failed = |f: &cluster::retry::ObjectFailure| -> Result<()> {
        emit(
            "error",
            &to_value(f)?,
            format!("{}: {}; trying again", f.object, f.message),
        )
    };
    // A pass that ended early: its list failed after its tries.
    let ended = |what: &str, e: &cluster::Error| -> Result<()> {
        failed(&cluster::retry::ObjectFailure {
            object: what.to_string(),
            message: format!("{e:#}"),
        })
    };
    // Ok(true) when every request of the pass succeeded.
    let pass = || async {
        let now = k8s_openapi::chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string();
        let mut clean = true;
        match cluster::admit_pending(client, plan, bound, gpu_resource, &now).await {
            Ok(done) => {
                for a in &done.admitted {
                    emit(
                        "admission",
                        &to_value(a)?,
                        format!(
                            "{}/{} ({}): {}: {}",
                            a.namespace,
                            a.workload,
                            a.job,
                            a.state.as_str(),
                            a.message
                        ),
                    )?;
                }
                for f in &done.failed {
                    clean = false;
                    failed(f)?;
                }
                for d in &done.dropped {
                    if progress {
                        eprintln!("{d} was deleted meanwhile: dropped");
                    }
                }
            }
            Err(e) => {
                clean = false;
                ended("the Kueue admission pass", &e)?;
            }
        }
        match cluster::stop_failed_gangs(client, &now).await {
            Ok(done) => {
                for g in &done.stopped {
                    emit(
                        "gang-stopped",
                        &to_value(g)?,
                        format!(
                            "{}/{}: {} failed first on Node {} ({}); deleted {}",
                            g.namespace,
                            g.job,
                            g.rank
                                .map_or_else(|| format!("pod {}", g.pod), |r| format!("rank {r}")),
                            g.node.as_deref().unwrap_or("-"),
                            g.reason,
                            if g.deleted.is_empty() {
                                "no other rank".to_string()
                            } else {
                                g.deleted.join(", ")
                            }
                        ),
                    )?;
                }
                for f in &done.failed {
                    clean = false;
                    failed(f)?;
                }
            }
            Err(e) => {
                clean = false;
                ended("the gang pass", &e)?;
            }
        }
        Ok::<bool, Failure>(clean)
    };
    let clean = pass().await?;
    if once {
        return if clean {
            Ok(())
        } else {
            Err(anyhow::anyhow!("a request of the pass failed (named above)").into())
        };
    }
    let resource = kube::api::ApiResource::from_gvk_with_plural(
        &kube::api::GroupVersionKind::gvk("kueue.x-k8s.io", "v1beta2", "Workload"),
        "workloads",
    );
    let workloads = kube::Api::<kube::api::DynamicObject>::all_with(client.clone(), &resource);
    let gang_pods = kube::Api::<k8s_openapi::api::core::v1::Pod>::all(client.clone());
    let gang_selector = format!(
        "app.kubernetes.io/managed-by=eflops-provisioner,{}gang=controller",
        planner::export::labels::DEFAULT_PREFIX
    );
    // The watchers back off by themselves after a failure
    // (`default_backoff`); each failure is said once.
    let wl_events = watcher(workloads, watcher::Config::default())
        .default_backoff()
        .map(|e| {
            e.map(|_| ())
                .map_err(|e| format!("watching Kueue Workloads: {e}"))
        });
    let pod_events = watcher(gang_pods, watcher::Config::default().labels(&gang_selector))
        .default_backoff()
        .map(|e| {
            e.map(|_| ())
                .map_err(|e| format!("watching the gangs' rank Pods: {e}"))
        });
    let mut events = std::pin::pin!(futures::stream::select(wl_events, pod_events));
    if progress {
        eprintln!(
            "watching Kueue v1beta2 Workloads for checks of {}, and rank Pods labelled {gang_selector}",
            admission::CONTROLLER_NAME
        );
    }
    let mut failures: u32 = u32::from(!clean);
    loop {
        let next = if failures > 0 {
            // A failed pass runs again after its back-off, or sooner on a
            // change.
            let wait = cluster::retry::pass_backoff(failures, cluster::retry::noise());
            if progress {
                eprintln!("next pass in {:.1} s", wait.as_secs_f64());
            }
            match tokio::time::timeout(wait, events.next()).await {
                Ok(e) => e,
                Err(_) => Some(Ok(())),
            }
        } else {
            events.next().await
        };
        match next {
            None => return Ok(()),
            Some(Err(e)) => {
                emit(
                    "error",
                    &serde_json::json!({ "object": "watch", "message": e }),
                    format!("{e}; the watch backs off and tries again"),
                )?;
                continue;
            }
            Some(Ok(())) => {}
        }
        // Events that came meanwhile are served by the same pass.
        while let Some(Some(_)) = events.next().now_or_never() {}
        failures = if pass().await? {
            0
        } else {
            failures.saturating_add(1)
        };
    }
}
