//! The `provisioner` command. Exit codes: 0 success, 2 bad input, 1
//! internal failure.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand, ValueEnum};

use planner::checked::CheckedPlan;
use planner::export::labels::DEFAULT_PREFIX;
use planner::text::Table;
use provisioner::cluster::{self, JobPhase, JobStatus, LabelOptions, LabelReport, WaitOptions};
use provisioner::dra::DraView;
use provisioner::job::{JobSpec, PlacementMode};
use provisioner::nodes::{self, NodeMap};
use provisioner::view::ClusterView;
use provisioner::{probe, rank_check, submit};

mod lab_cli;
mod probe_cli;
mod push_cli;
mod sot_cli;

/// Bind a planned GPU-cluster topology to Kubernetes.
#[derive(Debug, Parser)]
#[command(name = "provisioner", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Map the plan's servers to Kubernetes Node names (host names, or a
    /// node map) and list the GPU-NIC sub-nodes, switch and part of each.
    Nodes {
        /// Plan JSON (or TOML) from `planner design --out`.
        plan: PathBuf,
        /// TOML with one `server = "node-name"` line per server whose Node
        /// is not named after its host.
        #[arg(long)]
        node_map: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Place a job on free sub-nodes in HDRM rank order and create (or,
    /// with --dry-run, print) its objects.
    ///
    /// Reads Nodes and Pods to find free sub-nodes, then applies the
    /// ConfigMap (rank table, rankfile, scripts), headless Service and
    /// Indexed Job or MPIJob with server-side apply; nothing is created
    /// unless the whole job can be placed. With `[placement] mode = "dra"`
    /// it also reads ResourceSlices and ResourceClaims, and creates one
    /// ResourceClaimTemplate and one Pod per rank that claim exactly the
    /// rank's GPU and NIC. --dry-run only reads the
    /// cluster; --offline (or --dry-run with no kubeconfig) places against
    /// the plan alone, every Node free.
    Submit {
        /// Job file (TOML): name, image, command, ranks, launcher, ...
        job: PathBuf,
        /// Plan JSON (or TOML) from `planner design --out`.
        #[arg(long)]
        plan: PathBuf,
        /// TOML with one `server = "node-name"` line per server whose Node
        /// is not named after its host.
        #[arg(long)]
        node_map: Option<PathBuf>,
        /// Print the objects instead of creating them.
        #[arg(long)]
        dry_run: bool,
        /// Place against the plan alone, every Node free and idle (implies
        /// --dry-run); for review or GitOps without a cluster. With
        /// `[placement] mode = "dra"` every sub-node's GPU and NIC are
        /// assumed published as the plan names them, unless --cluster
        /// describes the devices.
        #[arg(long)]
        offline: bool,
        /// A described cluster for DRA placement (implies --offline): YAML
        /// or JSON with ResourceSlices, ResourceClaims and the claim
        /// templates of earlier submissions, e.g. `kubectl get
        /// resourceslices,resourceclaims -A -o yaml` and the --dry-run
        /// output of jobs submitted before. Repeat it to read several.
        /// Without ResourceSlices, the devices are the plan's.
        #[arg(long, value_name = "FILE")]
        cluster: Vec<PathBuf>,
        /// After creating the objects, poll until the job runs, succeeds or
        /// fails, with progress lines on stderr; exit code 1 when it failed.
        #[arg(long, conflicts_with_all = ["dry_run", "offline", "cluster"])]
        wait: bool,
        /// With --wait: give up after this many seconds (exit code 1).
        #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
        timeout: u64,
        /// Output: the objects (with --dry-run or --offline), or what was
        /// created.
        #[arg(long, value_enum, default_value_t = ManifestFormat::Yaml)]
        format: ManifestFormat,
    },
    /// Check that this pod (or MPI rank) runs where the rank table says.
    ///
    /// Exits 2 naming the expected and actual Node when it does not. Runs
    /// as the init container of every rank pod.
    RankCheck {
        /// The job's ranks.csv (mounted from its ConfigMap).
        #[arg(long, default_value = "/etc/eflops/ranks.csv")]
        table: PathBuf,
        /// This pod's Node [default: $NODE_NAME].
        #[arg(long)]
        node: Option<String>,
        /// Read the Node name from this file instead (first line).
        #[arg(long, conflicts_with = "node")]
        node_file: Option<PathBuf>,
        /// The rank to check [default: $OMPI_COMM_WORLD_RANK when set];
        /// without one, the Node must carry ranks of the table.
        #[arg(long)]
        rank: Option<usize>,
        /// The completion index, reported with the result [default:
        /// $JOB_COMPLETION_INDEX when set].
        #[arg(long)]
        index: Option<usize>,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Apply the plan's topology labels to the Nodes of the cluster the
    /// kubeconfig points at (server-side apply, field manager
    /// `eflops-provisioner`). Nodes already labelled are left untouched.
    LabelNodes {
        /// Plan JSON (or TOML) from `planner design --out`.
        plan: PathBuf,
        /// TOML with one `server = "node-name"` line per server whose Node
        /// is not named after its host.
        #[arg(long)]
        node_map: Option<PathBuf>,
        /// Label prefix (a DNS subdomain, with or without the final `/`).
        #[arg(long, default_value = DEFAULT_PREFIX)]
        prefix: String,
        /// Send every write with dryRun=All: the API server checks it and
        /// stores nothing.
        #[arg(long)]
        dry_run: bool,
        /// Label the Nodes that exist when some plan servers have none
        /// (without it, nothing is written and the exit code is 2).
        #[arg(long)]
        allow_missing: bool,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Show a submitted job (Job, MPIJob or DRA rank Pods): phase, counts, conditions, and
    /// its pods with their Nodes.
    Status {
        /// The job's name.
        name: String,
        /// Namespace (default: the kubeconfig context's).
        #[arg(short, long)]
        namespace: Option<String>,
        /// Poll until the job runs, succeeds or fails, with progress lines
        /// on stderr; exit code 1 when it failed.
        #[arg(long)]
        wait: bool,
        /// With --wait: give up after this many seconds (exit code 1).
        #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
        timeout: u64,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Run one rank of an allreduce over TCP (ring, hd or hdrm, as the
    /// planner's schedules say) and report like nccl-tests.
    ///
    /// Finds the other ranks from RANK, WORLD_SIZE, MASTER_ADDR and
    /// MASTER_PORT (torchrun), from --hosts (each rank's address) or from
    /// --ranks-file with --plan (the plan's sub-node addresses). Only rank
    /// 0 prints unless --all-ranks. Exit code 2 for input mistakes (also
    /// peers started with other settings), 1 when the network or a peer
    /// fails; see docs/probe.md.
    Probe(Box<probe_cli::ProbeArgs>),
    /// Build the plan's fabric in network namespaces on this machine and
    /// run the collective engine across it, counting flows per link and
    /// step (needs root); see docs/lab.md.
    Lab {
        #[command(subcommand)]
        command: lab_cli::LabCommand,
    },
    /// Push the plan's rendered switch configurations to the switches:
    /// identity check, load, diff (--dry-run stops there), commit with a
    /// confirm timer, verify against the plan, confirm and save, or roll
    /// back; a canary first, then batches. `push status|confirm|rollback`
    /// read the journal. See docs/switch-push.md.
    Push(Box<push_cli::PushArgs>),
    /// The operator's source of truth (Nautobot, NetBox): import an
    /// inventory, push the plan, check the cables; see
    /// docs/source-of-truth.md.
    Sot {
        #[command(subcommand)]
        command: sot_cli::SotCommand,
    },
    /// Delete a submitted job (Job or MPIJob); its pods, ConfigMap and
    /// Service go with it (foreground propagation).
    Delete {
        /// The job's name.
        name: String,
        /// Namespace (default: the kubeconfig context's).
        #[arg(short, long)]
        namespace: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ManifestFormat {
    /// Multi-document YAML.
    Yaml,
    /// One JSON `v1` `List` of the objects.
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// Aligned text for people.
    Table,
    /// JSON for programs.
    Json,
}

/// An error caused by the user's input (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BadInput(String);

/// The flag that sets a library parameter (`ranks` is `--ranks`), when
/// some subcommand has it.
fn flag_for(parameter: &str) -> Option<String> {
    fn has(cmd: &clap::Command, long: &str) -> bool {
        cmd.get_arguments().any(|a| a.get_long() == Some(long))
            || cmd.get_subcommands().any(|c| has(c, long))
    }
    has(&<Cli as clap::CommandFactory>::command(), parameter).then(|| format!("--{parameter}"))
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // Input text in the chain (file names, values) never reaches
            // the terminal raw; the chain's own line breaks stay.
            eprintln!(
                "error: {}",
                planner::names::escape_lines(&planner::error::display_chain(
                    err.as_ref(),
                    &flag_for
                ))
            );
            let bad = err.downcast_ref::<BadInput>().is_some()
                || err
                    .downcast_ref::<provisioner::Error>()
                    .is_some_and(provisioner::Error::is_bad_input)
                || err
                    .downcast_ref::<planner::Error>()
                    .is_some_and(planner::Error::is_bad_input)
                || err
                    .downcast_ref::<probe::Error>()
                    .is_some_and(probe::Error::is_bad_input)
                || err
                    .downcast_ref::<provisioner::lab::Error>()
                    .is_some_and(provisioner::lab::Error::is_bad_input);
            ExitCode::from(if bad { 2 } else { 1 })
        }
    }
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| BadInput(format!("cannot read {}: {e}", path.display())).into())
}

/// The plan, its name for messages, and the node map if one is given.
fn read_plan(
    plan: &Path,
    node_map: Option<&Path>,
) -> Result<(CheckedPlan, String, Option<NodeMap>)> {
    let plan_name = plan.display().to_string();
    let p = CheckedPlan::load(&read(plan)?, &plan_name)?;
    let map = match node_map {
        Some(path) => Some(NodeMap::from_toml(
            &read(path)?,
            &path.display().to_string(),
        )?),
        None => None,
    };
    Ok((p, plan_name, map))
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Submit {
            job,
            plan,
            node_map,
            dry_run,
            offline,
            cluster: described,
            wait,
            timeout,
            format,
        } => {
            let (p, plan_name, map) = read_plan(&plan, node_map.as_deref())?;
            let spec = JobSpec::from_toml(&read(&job)?, &job.display().to_string())?;
            let bound = nodes::bind(&p, map.as_ref(), &plan_name)?;
            let dra = spec.placement.mode == PlacementMode::Dra;
            if !described.is_empty() && !dra {
                return Err(BadInput(format!(
                    "--cluster describes DRA devices, and {} places whole Nodes; set [placement] mode = \"dra\" or leave --cluster out",
                    job.display()
                ))
                .into());
            }
            let offline =
                offline || !described.is_empty() || (dry_run && no_kubeconfig_for_dry_run());
            if offline {
                let mut view = ClusterView::all_free(&bound);
                for file in &described {
                    view.dra.extend(DraView::from_described(
                        &read(file)?,
                        &file.display().to_string(),
                    )?);
                }
                if dra && view.dra.devices.is_empty() {
                    // No ResourceSlices described: the devices as the plan
                    // names them.
                    view.dra
                        .extend(DraView::from_plan(&p, &bound, &spec.placement.profile));
                }
                let sub = submit::prepare(&p, &bound, &spec, &view)?;
                eprint!("{}", sub.summary());
                return print(&manifest_text(&sub, format)?);
            }
            let rt = runtime()?;
            let client = rt.block_on(cluster::connect())?;
            let mut view = rt.block_on(cluster::read_view(&client, &spec.resources.gpu))?;
            if dra {
                view.dra = rt.block_on(cluster::read_dra(&client))?;
            }
            let sub = submit::prepare(&p, &bound, &spec, &view)?;
            eprint!("{}", sub.summary());
            if dry_run {
                return print(&manifest_text(&sub, format)?);
            }
            let applied = rt.block_on(cluster::apply(&client, &spec.namespace, &sub.manifests))?;
            let status = if wait {
                Some(rt.block_on(wait_for(&client, &spec.namespace, &spec.name, timeout))?)
            } else {
                None
            };
            print(&match format {
                ManifestFormat::Json => json(&serde_json::json!({
                    "applied": applied,
                    "status": status,
                }))?,
                ManifestFormat::Yaml => applied_text(&applied, &spec.name, status.as_ref()),
            })?;
            status.as_ref().map_or(Ok(()), fail_if_failed)
        }
        Command::RankCheck {
            table,
            node,
            node_file,
            rank,
            index,
            format,
        } => {
            let name = table.display().to_string();
            let text = std::fs::read_to_string(&table).map_err(|e| {
                BadInput(format!(
                    "cannot read the rank table {name}: {e}; mount the job's ConfigMap <job>-ranks there, or pass --table FILE"
                ))
            })?;
            let rows = rank_check::read_table(&text, &name)?;
            let node = match (node, node_file) {
                (Some(n), _) => n,
                (None, Some(f)) => read(&f)?.lines().next().unwrap_or("").trim().to_string(),
                (None, None) => std::env::var("NODE_NAME").map_err(|_| {
                    BadInput(
                        "no Node name: set NODE_NAME from the Downward API (fieldRef spec.nodeName), or pass --node".to_string(),
                    )
                })?,
            };
            let rank = match rank {
                Some(r) => Some(r),
                None => env_number("OMPI_COMM_WORLD_RANK")?,
            };
            let index = match index {
                Some(i) => Some(i),
                None => env_number("JOB_COMPLETION_INDEX")?,
            };
            let verdict = rank_check::check(&rows, &name, &node, rank, index)?;
            let text = match format {
                Format::Json => json(&verdict)?,
                Format::Table => format!("{}\n", verdict.message),
            };
            print(&text)
        }
        Command::Nodes {
            plan,
            node_map,
            format,
        } => {
            let (p, plan_name, map) = read_plan(&plan, node_map.as_deref())?;
            let bound = nodes::bind(&p, map.as_ref(), &plan_name)?;
            let text = match format {
                Format::Json => json(&bound)?,
                Format::Table => {
                    let mut t = Table::new([
                        "node",
                        "server",
                        "sub-node",
                        "GPU",
                        "NIC",
                        "switch",
                        "part/tier",
                    ]);
                    for n in &bound {
                        for (i, sn) in n.sub_nodes.iter().enumerate() {
                            let (node, server) = if i == 0 {
                                (n.node.clone(), n.server.clone())
                            } else {
                                (String::new(), String::new())
                            };
                            t.row([
                                node,
                                server,
                                sn.id.rsplit('/').next().unwrap_or("").to_string(),
                                sn.gpu.clone().unwrap_or_else(|| "-".to_string()),
                                sn.nic.clone(),
                                sn.switch.clone(),
                                sn.part_or_tier.clone(),
                            ]);
                        }
                    }
                    let renamed = bound.iter().filter(|n| n.named_by == "node-map").count();
                    format!(
                        "{} nodes for {} ({} named by the node map, {} by host name)\n\n{}",
                        bound.len(),
                        p.name,
                        renamed,
                        bound.len() - renamed,
                        t.render()
                    )
                }
            };
            print(&text)
        }
        Command::LabelNodes {
            plan,
            node_map,
            prefix,
            dry_run,
            allow_missing,
            format,
        } => {
            let (p, plan_name, map) = read_plan(&plan, node_map.as_deref())?;
            // Check every input before contacting the cluster.
            planner::export::labels::check_prefix(&prefix)?;
            nodes::bind(&p, map.as_ref(), &plan_name)?;
            let options = LabelOptions {
                prefix,
                dry_run,
                allow_missing,
            };
            let report = runtime()?.block_on(async {
                let client = cluster::connect().await?;
                cluster::label_nodes(&client, &p, &plan_name, map.as_ref(), &options).await
            })?;
            print(&match format {
                Format::Json => json(&report)?,
                Format::Table => label_table(&report),
            })
        }
        Command::Status {
            name,
            namespace,
            wait,
            timeout,
            format,
        } => {
            let status = runtime()?.block_on(async {
                let client = cluster::connect().await?;
                let ns = namespace.unwrap_or_else(|| client.default_namespace().to_string());
                if wait {
                    wait_for(&client, &ns, &name, timeout).await
                } else {
                    Ok(cluster::status(&client, &ns, &name).await?)
                }
            })?;
            print(&match format {
                Format::Json => json(&status)?,
                Format::Table => status_table(&status),
            })?;
            if wait {
                fail_if_failed(&status)?;
            }
            Ok(())
        }
        Command::Probe(args) => probe_cli::run(*args),
        Command::Lab { command } => lab_cli::run(command),
        Command::Push(args) => push_cli::run(*args),
        Command::Sot { command } => sot_cli::run(command),
        Command::Delete {
            name,
            namespace,
            format,
        } => {
            let deleted = runtime()?.block_on(async {
                let client = cluster::connect().await?;
                let ns = namespace.unwrap_or_else(|| client.default_namespace().to_string());
                cluster::delete(&client, &ns, &name).await
            })?;
            print(&match format {
                Format::Json => json(&deleted)?,
                Format::Table => format!(
                    "deleted {} {}/{}{}; its pods, ConfigMap and Service are deleted first ({} propagation)\n",
                    deleted.kind,
                    deleted.namespace,
                    deleted.name,
                    deleted
                        .uid
                        .as_deref()
                        .map(|u| format!(" (uid {u})"))
                        .unwrap_or_default(),
                    deleted.propagation
                ),
            })
        }
    }
}

/// The objects of a submission as YAML documents or one JSON `v1` `List`.
fn manifest_text(sub: &submit::Submission, format: ManifestFormat) -> Result<String> {
    match format {
        ManifestFormat::Yaml => Ok(sub.to_yaml().context("serialising YAML")?),
        ManifestFormat::Json => json(&serde_json::json!({
            "apiVersion": "v1",
            "kind": "List",
            "items": sub.documents(),
        })),
    }
}

/// Watches the job until it runs, succeeds or fails (at most `timeout`
/// seconds), with a progress line on stderr at each change.
async fn wait_for(
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
fn fail_if_failed(s: &JobStatus) -> Result<()> {
    if s.phase == JobPhase::Failed {
        anyhow::bail!("{} {}/{} failed", s.kind, s.namespace, s.name);
    }
    Ok(())
}

/// What `submit` created, for people.
fn applied_text(a: &cluster::Applied, job: &str, status: Option<&JobStatus>) -> String {
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
    match status {
        Some(s) => out.push_str(&format!("\n{}", status_table(s))),
        None => out.push_str(&format!(
            "\nfollow it with: provisioner status {} -n {} --wait\n",
            job, a.namespace
        )),
    }
    out
}

/// True, after saying so on stderr, when `submit --dry-run` finds no
/// kubeconfig and so places offline.
fn no_kubeconfig_for_dry_run() -> bool {
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

/// An environment variable as a number, for defaults of options.
fn env_number(name: &str) -> Result<Option<usize>> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| BadInput(format!("{name}={v} is not a number")).into()),
        _ => Ok(None),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

fn json<T: serde::Serialize>(value: &T) -> Result<String> {
    let mut s = serde_json::to_string_pretty(value).context("serialising JSON")?;
    s.push('\n');
    Ok(s)
}

/// Prints `value` as JSON, or as the text `table` makes of it.
fn show<T: serde::Serialize>(
    format: Format,
    value: &T,
    table: impl FnOnce(&T) -> String,
) -> Result<()> {
    let text = match format {
        Format::Json => json(value)?,
        Format::Table => table(value),
    };
    print(&text)
}

fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e).context("writing to stdout"),
        _ => Ok(()),
    }
}

fn label_table(r: &LabelReport) -> String {
    use cluster::NodeChange;
    let mut t = Table::new(["node", "server", "change", "added", "updated", "removed"]);
    for n in &r.nodes {
        let change = match (n.change, r.dry_run) {
            (NodeChange::Changed, true) => "would change",
            (c, _) => c.as_str(),
        };
        t.row([
            n.node.clone(),
            n.server.clone(),
            change.to_string(),
            n.added.len().to_string(),
            n.updated.len().to_string(),
            n.removed.len().to_string(),
        ]);
    }
    let mut s = format!(
        "{}: {} {}, {} unchanged, {} missing from the cluster; labels under {}{}\n\n{}",
        r.plan,
        nodes_word(r.count(NodeChange::Changed)),
        if r.dry_run {
            "would change"
        } else {
            "labelled"
        },
        r.count(NodeChange::Unchanged),
        r.count(NodeChange::Missing),
        r.prefix,
        if r.dry_run {
            " (dry run: the API server stored nothing)"
        } else {
            ""
        },
        t.render()
    );
    if !r.not_in_plan.is_empty() {
        s.push_str(&format!(
            "\n{} of the cluster not in the plan (left alone): {}\n",
            nodes_word(r.not_in_plan.len()),
            r.not_in_plan.join(", ")
        ));
    }
    s
}

/// `1 Node`, `2 Nodes`.
fn nodes_word(n: usize) -> String {
    format!("{n} Node{}", if n == 1 { "" } else { "s" })
}

fn status_table(s: &JobStatus) -> String {
    let mut out = format!("{}\n", s.summary());
    if !s.conditions.is_empty() {
        let mut t = Table::new(["condition", "status", "reason", "message"]);
        for c in &s.conditions {
            t.row([
                c.type_.clone(),
                c.status.clone(),
                c.reason.clone().unwrap_or_default(),
                c.message.clone().unwrap_or_default(),
            ]);
        }
        out.push('\n');
        out.push_str(&t.render());
    }
    if !s.pods.is_empty() {
        let mut t = Table::new(["pod", "node", "phase", "restarts", "reason"]);
        for p in &s.pods {
            t.row([
                p.name.clone(),
                p.node.clone().unwrap_or_else(|| "-".to_string()),
                p.phase.clone(),
                p.restarts.to_string(),
                p.reason.clone().unwrap_or_default(),
            ]);
        }
        out.push('\n');
        out.push_str(&t.render());
    }
    for f in &s.failures {
        out.push_str(&format!(
            "\npod {} container {} failed: {}{}{}\n",
            f.pod,
            f.container,
            f.reason.as_deref().unwrap_or("no reason"),
            f.exit_code
                .map(|c| format!(", exit code {c}"))
                .unwrap_or_default(),
            f.message
                .as_deref()
                .map(|m| format!(", {}", m.trim()))
                .unwrap_or_default(),
        ));
        if !f.log.is_empty() {
            out.push_str(&format!("  last {} log lines:\n", f.log.len()));
            for line in &f.log {
                out.push_str("    ");
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use provisioner::cluster::{JobPod, NodeChange, NodeLabelState};

    use super::*;

    #[test]
    fn label_table_says_what_changed() {
        let state = |node: &str, change, added: usize| NodeLabelState {
            node: node.to_string(),
            server: node.to_string(),
            change,
            added: (0..added).map(|i| format!("k{i}")).collect(),
            updated: Vec::new(),
            removed: Vec::new(),
        };
        let mut report = LabelReport {
            plan: "eflops-4x16".to_string(),
            prefix: DEFAULT_PREFIX.to_string(),
            dry_run: true,
            nodes: vec![
                state("node01", NodeChange::Changed, 3),
                state("node02", NodeChange::Unchanged, 0),
                state("node03", NodeChange::Missing, 0),
            ],
            not_in_plan: vec!["login1".to_string()],
        };
        assert_eq!(
            label_table(&report),
            "eflops-4x16: 1 Node would change, 1 unchanged, 1 missing from the cluster; labels under topology.eflops.io/ (dry run: the API server stored nothing)

node    server  change        added  updated  removed
node01  node01  would change  3      0        0
node02  node02  unchanged     0      0        0
node03  node03  missing       0      0        0

1 Node of the cluster not in the plan (left alone): login1
"
        );
        report.dry_run = false;
        report.not_in_plan.clear();
        let text = label_table(&report);
        assert!(
            text.starts_with("eflops-4x16: 1 Node labelled, 1 unchanged"),
            "{text}"
        );
        assert!(
            text.ends_with("node03  node03  missing    0      0        0\n"),
            "{text}"
        );
    }

    #[test]
    fn status_table_lists_conditions_and_pods() {
        let s = JobStatus {
            kind: "Job".to_string(),
            name: "train".to_string(),
            namespace: "ml".to_string(),
            phase: JobPhase::Pending,
            active: 1,
            succeeded: 0,
            failed: 0,
            conditions: vec![cluster::JobCondition {
                type_: "Suspended".to_string(),
                status: "False".to_string(),
                reason: Some("JobResumed".to_string()),
                message: None,
            }],
            failures: Vec::new(),
            pods: vec![JobPod {
                name: "train-0".to_string(),
                phase: "Pending".to_string(),
                node: None,
                restarts: 0,
                reason: Some("Unschedulable".to_string()),
            }],
        };
        assert_eq!(
            status_table(&s),
            "Job ml/train: Pending; 1 active, 0 succeeded, 0 failed; pods: 1 Pending (Unschedulable)

condition  status  reason      message
Suspended  False   JobResumed

pod      node  phase    restarts  reason
train-0  -     Pending  0         Unschedulable
"
        );
    }
}
