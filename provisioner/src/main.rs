//! The `provisioner` command. Exit codes: 0 success, 2 bad input, 1
//! internal failure.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand, ValueEnum};

use planner::plan::Plan;
use planner::text::Table;
use provisioner::job::JobSpec;
use provisioner::nodes::{self, NodeMap};
use provisioner::view::ClusterView;
use provisioner::{rank_check, submit};

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
    /// Place a job on free sub-nodes in HDRM rank order and print its
    /// objects.
    ///
    /// Prints the ConfigMap (rank table, rankfile, scripts), headless
    /// Service and Indexed Job or MPIJob. This build has no cluster
    /// access: only `--dry-run` without a kubeconfig, or `--offline`, work;
    /// both place against the plan with every Node free.
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
        /// --dry-run); for review or GitOps without a cluster.
        #[arg(long)]
        offline: bool,
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

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            let bad = err.downcast_ref::<BadInput>().is_some()
                || err
                    .downcast_ref::<provisioner::Error>()
                    .is_some_and(provisioner::Error::is_bad_input)
                || err
                    .downcast_ref::<planner::Error>()
                    .is_some_and(planner::Error::is_bad_input);
            ExitCode::from(if bad { 2 } else { 1 })
        }
    }
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| BadInput(format!("cannot read {}: {e}", path.display())).into())
}

/// The plan (with the name errors give it) and the node map, read.
fn plan_and_map(plan: &Path, node_map: Option<&Path>) -> Result<(String, Plan, Option<NodeMap>)> {
    let plan_name = plan.display().to_string();
    let p = Plan::parse(&read(plan)?, &plan_name)?;
    let map = match node_map {
        Some(path) => Some(NodeMap::from_toml(
            &read(path)?,
            &path.display().to_string(),
        )?),
        None => None,
    };
    Ok((plan_name, p, map))
}

/// Pretty JSON with a final newline.
fn json_text<T: serde::Serialize>(value: &T) -> Result<String> {
    let mut s = serde_json::to_string_pretty(value).context("serialising JSON")?;
    s.push('\n');
    Ok(s)
}

fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e).context("writing to stdout"),
        _ => Ok(()),
    }
}

/// Where a kubeconfig would come from, if any: `KUBECONFIG`,
/// `~/.kube/config`, or the in-cluster service account.
fn kubeconfig_source() -> Option<String> {
    if let Some(k) = std::env::var_os("KUBECONFIG").filter(|k| !k.is_empty()) {
        return Some(format!("KUBECONFIG={}", k.to_string_lossy()));
    }
    if let Some(home) = std::env::var_os("HOME") {
        let p = Path::new(&home).join(".kube").join("config");
        if p.is_file() {
            return Some(p.display().to_string());
        }
    }
    std::env::var_os("KUBERNETES_SERVICE_HOST").map(|h| {
        format!(
            "in-cluster (KUBERNETES_SERVICE_HOST={})",
            h.to_string_lossy()
        )
    })
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

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Submit {
            job,
            plan,
            node_map,
            dry_run,
            offline,
            format,
        } => {
            if !offline {
                match (dry_run, kubeconfig_source()) {
                    (true, None) => eprintln!(
                        "provisioner: no kubeconfig found (KUBECONFIG, ~/.kube/config, in-cluster): placing offline against the plan, every Node free"
                    ),
                    (_, found) => {
                        let from = found.map_or(String::new(), |f| format!(" (kubeconfig: {f})"));
                        return Err(BadInput(format!(
                            "{} the cluster needs the cluster module, which this build of provisioner lacks{from}; use --dry-run --offline to place against the plan alone and print the objects",
                            if dry_run { "reading" } else { "submitting to" }
                        ))
                        .into());
                    }
                }
            }
            let (plan_name, p, map) = plan_and_map(&plan, node_map.as_deref())?;
            let spec = JobSpec::from_toml(&read(&job)?, &job.display().to_string())?;
            let bound = nodes::bind(&p, map.as_ref(), &plan_name)?;
            let view = ClusterView::all_free(&bound);
            let sub = submit::prepare(&p, &plan_name, map.as_ref(), &spec, &view)?;
            let text = match format {
                ManifestFormat::Yaml => sub.to_yaml().context("serialising YAML")?,
                ManifestFormat::Json => json_text(&serde_json::json!({
                    "apiVersion": "v1",
                    "kind": "List",
                    "items": sub.documents(),
                }))?,
            };
            eprint!("{}", sub.summary());
            write_stdout(&text)
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
            let rows = rank_check::read_table(&read(&table)?, &name)?;
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
            let verdict = rank_check::check(&rows, &node, rank, index)?;
            let text = match format {
                Format::Json => json_text(&verdict)?,
                Format::Table => format!("{}\n", verdict.message),
            };
            write_stdout(&text)
        }
        Command::Nodes {
            plan,
            node_map,
            format,
        } => {
            let (plan_name, p, map) = plan_and_map(&plan, node_map.as_deref())?;
            let bound = nodes::bind(&p, map.as_ref(), &plan_name)?;
            let text = match format {
                Format::Json => json_text(&bound)?,
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
            write_stdout(&text)
        }
    }
}
