//! `provisioner submit`'s helpers: the manifests as text, the job's Secret
//! file, the wait for the job and what was applied.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;

use planner::text::Table;
use provisioner::cluster::{self, JobPhase, JobStatus, WaitOptions};
use provisioner::jobs::job::JobSpec;
use provisioner::jobs::submit;
use provisioner::probe;

use super::{BadInput, ManifestFormat, Result, json};

/// The objects of a submission as YAML documents or one JSON `v1` `List`.
pub(super) fn manifest_text(sub: &submit::Submission, format: ManifestFormat) -> Result<String> {
    match format {
        ManifestFormat::Yaml => Ok(sub.to_yaml().context("serialising YAML")?),
        ManifestFormat::Json => json(&serde_json::json!({
            "apiVersion": "v1",
            "kind": "List",
            "items": sub.documents(),
        })),
    }
}

/// The job's Secret into `out`, created readable by its owner only (mode
/// 0600, then renamed over `out`), with a note on stderr; without `out`, a
/// note that says how to make the Secret the printed pods need.
pub(super) fn write_secret(
    sub: &submit::Submission,
    spec: &JobSpec,
    out: Option<&Path>,
) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let name = provisioner::jobs::manifests::token_secret_name(&spec.name);
    let Some(out) = out else {
        eprintln!(
            "note: the rank pods read {} from the Secret {name}, which the printed objects leave out (it holds the job secret): give --secret-out FILE to write it, or create it first with `kubectl create secret generic {name} -n {} --from-literal={}=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n')`",
            probe::auth::ENV,
            spec.namespace,
            provisioner::jobs::manifests::TOKEN_KEY,
        );
        return Ok(());
    };
    let yaml = sub
        .secret_yaml()
        .context("the submission has no Secret")?
        .context("serialising the Secret")?;
    let file = out.display();
    let mut tmp = out.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(yaml.as_bytes()).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, out));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(BadInput(format!(
            "cannot write the job's Secret to {file}: {e}; give --secret-out a path in a directory you can write"
        ))
        .into());
    }
    eprintln!(
        "note: the job's Secret {name} is in {file} (mode 0600): apply it before the other objects (`kubectl apply -f {file}`) and keep it out of version control"
    );
    Ok(())
}

/// Watches the job until it runs, succeeds or fails (at most `timeout`
/// seconds), with a progress line on stderr at each change.
pub(super) async fn wait_for(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    timeout: u64,
) -> Result<JobStatus> {
    let options = WaitOptions::with_timeout(Duration::from_secs(timeout));
    Ok(
        cluster::wait(client, namespace, name, &options, &mut |s: &JobStatus| {
            eprintln!("{}", s.summary());
        })
        .await?,
    )
}

/// An error (exit code 1) when the job failed.
pub(super) fn fail_if_failed(s: &JobStatus) -> Result<()> {
    if s.phase == JobPhase::Failed {
        return Err(anyhow::anyhow!("{} {}/{} failed", s.kind, s.namespace, s.name).into());
    }
    Ok(())
}

/// What `submit` created, for people.
pub(super) fn applied_text(a: &cluster::Applied, job: &str, status: Option<&JobStatus>) -> String {
    let mut t = Table::new(["kind", "name", "uid", "owner"]);
    t.row([
        a.workload.kind.clone(),
        a.workload.name.clone(),
        a.workload.uid.clone(),
        "-".to_string(),
    ]);
    for o in &a.owned {
        t.row([
            o.kind.clone(),
            o.name.clone(),
            o.uid.clone(),
            format!("{} {}", a.workload.kind, a.workload.name),
        ]);
    }
    let mut out = format!(
        "applied in namespace {} (server-side apply, field manager {}):\n\n{}",
        a.namespace,
        cluster::FIELD_MANAGER,
        t.render()
    );
    for w in &a.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    match status {
        Some(s) => out.push_str(&format!("\n{}", s.table())),
        None => out.push_str(&format!(
            "\nfollow it with: provisioner status {} -n {} --wait\n",
            job, a.namespace
        )),
    }
    out
}

/// True, after saying so on stderr, when `submit --dry-run` finds no
/// kubeconfig and so places offline.
pub(super) fn no_kubeconfig_for_dry_run() -> bool {
    if cluster::kubeconfig_available() {
        return false;
    }
    let named = std::env::var("KUBECONFIG")
        .ok()
        .filter(|k| !k.is_empty())
        .map(|k| format!("; KUBECONFIG={k} names no file"))
        .unwrap_or_default();
    eprintln!(
        "provisioner: no kubeconfig found (KUBECONFIG, ~/.kube/config, in-cluster){named}: placing offline against the plan, every Node free"
    );
    true
}
