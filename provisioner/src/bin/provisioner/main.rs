//! The `provisioner` command. Exit codes: 0 success, 2 bad input, 1
//! internal failure: every library error reaches `main` through the
//! library's one error tree ([`provisioner::Error`]), whose
//! `is_bad_input` decides (see [`Failure`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};

use planner::checked::CheckedPlan;
use planner::export::labels::DEFAULT_PREFIX;
use planner::text::Table;
use provisioner::cluster::{self, LabelOptions};
use provisioner::jobs::dra::DraView;
use provisioner::jobs::job::{JobSpec, PlacementMode};
use provisioner::jobs::manifests::workload;
use provisioner::jobs::view::{ClusterView, WorkloadApi};
use provisioner::jobs::{admission, rank_check, submit};
use provisioner::nodes::{self, NodeMap};
use provisioner::push::PushError;
use provisioner::{lab, probe};

mod controller_cli;
mod lab_cli;
mod probe_cli;
mod push_cli;
mod sot_cli;
mod submit_cli;

use controller_cli::controller;
use submit_cli::{
    applied_text, fail_if_failed, manifest_text, no_kubeconfig_for_dry_run, wait_for, write_secret,
};

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
    /// ResourceClaimTemplate per rank that claims exactly the rank's GPU
    /// and NIC, and a JobSet with one Job per rank that stops and restarts
    /// every rank when one fails (bare Pods with `[failure] gang =
    /// "none"`). --dry-run only reads the
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
        /// With --dry-run or --offline: write the job's Secret (the probe's
        /// job secret, which every rank pod reads as PROBE_TOKEN) to FILE,
        /// readable by its owner only; the printed objects never hold it.
        /// Apply FILE before them.
        #[arg(long, value_name = "FILE")]
        secret_out: Option<PathBuf>,
        /// Output: the objects (with --dry-run or --offline), or what was
        /// created.
        #[arg(long, value_enum, default_value_t = ManifestFormat::Yaml)]
        format: ManifestFormat,
    },
    /// Kueue AdmissionCheck controller: writes the rank table of a job
    /// submitted with `[kueue]` for the Nodes Kueue's topology-aware
    /// scheduling assigned, then marks the check Ready.
    ///
    /// Watches Kueue v1beta2 Workloads; for each whose check of ours
    /// (an AdmissionCheck with controllerName
    /// topology.eflops.io/rank-table) is Pending, reads the topology
    /// assignment, places the ranks on exactly those Nodes as submit does,
    /// writes the job's ConfigMap, then sets the check Ready (with the
    /// worst link load), Retry (a stale assignment: a Node gone or taken)
    /// or Rejected (a Node outside the plan), naming the Node. A job whose
    /// table submit made (an MPIJob, a DRA JobSet or pod group, a
    /// whole-Node Job without `[kueue]`) is Ready as it is.
    ///
    /// Also stops DRA jobs of bare Pods submitted with `[failure] gang =
    /// "controller"`: when one rank fails, it records the first failed
    /// rank, its Node and reason on the job's ConfigMap (`provisioner
    /// status` shows them) and deletes the job's other rank Pods.
    ///
    /// A failed request is tried again (jittered back-off) and reported
    /// naming its object; the other jobs are served meanwhile.
    Controller {
        /// Plan JSON (or TOML) from `planner design --out`.
        #[arg(long)]
        plan: PathBuf,
        /// TOML with one `server = "node-name"` line per server whose Node
        /// is not named after its host.
        #[arg(long)]
        node_map: Option<PathBuf>,
        /// The GPU resource of the Nodes.
        #[arg(long, default_value = cluster::DEFAULT_GPU_RESOURCE)]
        gpu_resource: String,
        /// One pass over the pending Workloads, then exit.
        #[arg(long)]
        once: bool,
        /// Print the AdmissionCheck (named NAME) to apply, and exit.
        #[arg(long, value_name = "NAME")]
        print_admission_check: Option<String>,
        /// No progress lines on stderr.
        #[arg(long)]
        quiet: bool,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
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
    /// Show a submitted job (Job, MPIJob, JobSet or DRA rank Pods): phase,
    /// counts, restarts, conditions, and its pods with their Nodes.
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
    /// Delete a submitted job (Job, MPIJob, JobSet or DRA rank Pods) that
    /// this provisioner made, by its labels; its pods, ConfigMap, Service
    /// and claim templates go with it (foreground propagation).
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

/// Why a command failed, with its exit code decided where the error came
/// in: the library's errors through its one tree ([`provisioner::Error`]
/// and its `is_bad_input`), the binary's own input mistakes as
/// [`BadInput`] (2), anything else (a job that failed, writing to stdout)
/// as a failure (1). A library error type without a `From` impl here does
/// not compile with `?`, so no error reaches `main` around the tree.
#[derive(Debug)]
struct Failure {
    error: anyhow::Error,
    bad_input: bool,
}

/// The binary's result: [`Failure`] on error.
type Result<T, E = Failure> = std::result::Result<T, E>;

impl Failure {
    /// The exit code: 2 for bad input, 1 for a failure.
    fn exit_code(&self) -> u8 {
        if self.bad_input { 2 } else { 1 }
    }

    /// The same failure with `context` in front of its message.
    fn context(self, context: String) -> Failure {
        Failure {
            error: self.error.context(context),
            bad_input: self.bad_input,
        }
    }
}

impl From<provisioner::Error> for Failure {
    fn from(e: provisioner::Error) -> Self {
        let bad_input = e.is_bad_input();
        let error = match e {
            // The planner's error as itself, so that display_chain finds
            // its parameter errors and names their flags.
            provisioner::Error::Plan(p) => anyhow::Error::new(p),
            e => anyhow::Error::new(e),
        };
        Failure { error, bad_input }
    }
}

/// The planner's and the subsystems' errors join the tree first.
macro_rules! through_the_tree {
    ($($error:ty),*) => {$(
        impl From<$error> for Failure {
            fn from(e: $error) -> Self {
                provisioner::Error::from(e).into()
            }
        }
    )*};
}
through_the_tree!(
    planner::Error,
    probe::Error,
    lab::Error,
    PushError,
    provisioner::sot::SotError
);

impl From<BadInput> for Failure {
    fn from(e: BadInput) -> Self {
        Failure {
            error: e.into(),
            bad_input: true,
        }
    }
}

/// Errors of other libraries, and the binary's own: failures (exit 1).
macro_rules! failure {
    ($($error:ty),*) => {$(
        impl From<$error> for Failure {
            fn from(e: $error) -> Self {
                Failure {
                    error: e.into(),
                    bad_input: false,
                }
            }
        }
    )*};
}
failure!(anyhow::Error, std::io::Error, serde_json::Error);

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            // Input text in the chain (file names, values) never reaches
            // the terminal raw; the chain's own line breaks stay.
            eprintln!(
                "error: {}",
                planner::error::report(
                    failure.error.as_ref(),
                    &<Cli as clap::CommandFactory>::command()
                )
            );
            ExitCode::from(failure.exit_code())
        }
    }
}

/// Reads an input file: a regular file of at most
/// `planner::input::MAX_INPUT_BYTES` ([`planner::input::read`]).
fn read(path: &Path) -> Result<String> {
    planner::input::read(path).map_err(|m| BadInput(m).into())
}

/// Reads and checks the plan `path`, compact or JSON, with the file as
/// read (what push's journal digests).
fn load_plan_file(path: &Path) -> Result<(CheckedPlan, planner::plan_compact::PlanFile)> {
    let name = path.display().to_string();
    let contents = planner::plan_compact::read(path).map_err(BadInput)?;
    let plan = planner::plan::Plan::from_file(&contents, &name)?.check(&name)?;
    Ok((plan, contents))
}

/// Reads and checks the plan `path`, compact or JSON.
fn load_plan(path: &Path) -> Result<CheckedPlan> {
    Ok(load_plan_file(path)?.0)
}

/// The plan, its name for messages, and the node map if one is given.
fn read_plan(
    plan: &Path,
    node_map: Option<&Path>,
) -> Result<(CheckedPlan, String, Option<NodeMap>)> {
    let plan_name = plan.display().to_string();
    let p = load_plan(plan)?;
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
            secret_out,
            format,
        } => {
            if secret_out.is_some() && !(dry_run || offline || !described.is_empty()) {
                return Err(BadInput(
                    "--secret-out writes the Secret of --dry-run or --offline output; a submission to the cluster creates the Secret itself".to_string(),
                )
                .into());
            }
            // Every submission its own job secret, from the kernel's
            // generator; it goes into the Secret and nowhere else.
            let secret = probe::Secret::generate().context("making the job secret")?;
            let (p, plan_name, map) = read_plan(&plan, node_map.as_deref())?;
            let text = read(&job)?;
            let spec = JobSpec::from_toml(&text, &job.display().to_string())?;
            let bound = nodes::bind(&p, map.as_ref(), &plan_name)?;
            // With [kueue] Kueue chooses the Nodes: the objects wait for
            // the table the controller writes at admission.
            let prepare = |view: &ClusterView| -> Result<submit::Submission> {
                Ok(match spec.kueue {
                    Some(_) => admission::pending(&p, &bound, &spec, &text)?,
                    None => submit::prepare(&p, &bound, &spec, view)?,
                })
            };
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
                let mut sub = prepare(&view)?.with_secret(&spec, &secret);
                sub.schedule(&p, &spec, &WorkloadApi::Unknown, &view)?;
                eprint!("{}", sub.summary());
                write_secret(&sub, &spec, secret_out.as_deref())?;
                return print(&manifest_text(&sub, format)?);
            }
            let rt = runtime()?;
            let client = rt.block_on(cluster::connect())?;
            let mut view = rt.block_on(cluster::read_view(&client, &spec.resources.gpu))?;
            if dra {
                view.dra = rt.block_on(cluster::read_dra(&client))?;
            }
            let served = if workload::asks_cluster(&spec) {
                rt.block_on(cluster::workload_api(&client))?
            } else {
                WorkloadApi::Unknown
            };
            let mut sub = prepare(&view)?.with_secret(&spec, &secret);
            sub.schedule(&p, &spec, &served, &view)?;
            eprint!("{}", sub.summary());
            if dry_run {
                write_secret(&sub, &spec, secret_out.as_deref())?;
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
        Command::Controller {
            plan,
            node_map,
            gpu_resource,
            once,
            print_admission_check,
            quiet,
            format,
        } => {
            if let Some(name) = print_admission_check {
                let ac = admission::admission_check(&name).map_err(BadInput)?;
                return print(&match format {
                    Format::Json => json(&ac)?,
                    Format::Table => format!(
                        "---\n{}",
                        planner::yaml::to_string(&ac).context("writing the AdmissionCheck")?
                    ),
                });
            }
            let (p, plan_name, map) = read_plan(&plan, node_map.as_deref())?;
            let bound = nodes::bind(&p, map.as_ref(), &plan_name)?;
            let rt = runtime()?;
            let client = rt.block_on(cluster::connect())?;
            let progress = !quiet && format == Format::Table;
            rt.block_on(controller(
                &client,
                &p,
                &bound,
                &gpu_resource,
                once,
                progress,
                format,
            ))
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
            let text = planner::input::read(&table).map_err(|e| {
                BadInput(format!(
                    "the rank table: {e}; mount the job's ConfigMap <job>-ranks there, or pass --table FILE"
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
                Format::Table => report.table(),
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
                Format::Table => status.table(),
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
                    "deleted {} {}/{}{}; its pods, ConfigMap, Service and Secret are deleted first ({} propagation){}\n",
                    deleted.kind,
                    deleted.namespace,
                    deleted.name,
                    deleted
                        .uid
                        .as_deref()
                        .map(|u| format!(" (uid {u})"))
                        .unwrap_or_default(),
                    deleted.propagation,
                    deleted
                        .secret
                        .as_deref()
                        .map(|s| format!("; deleted Secret {s}"))
                        .unwrap_or_default()
                ),
            })
        }
    }
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

fn to_value<T: serde::Serialize>(value: &T) -> Result<serde_json::Value> {
    Ok(serde_json::to_value(value).context("serialising JSON")?)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
        .map_err(Failure::from)
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
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("writing to stdout").into())
        }
        _ => Ok(()),
    }
}
