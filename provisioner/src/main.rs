//! The `provisioner` command. Exit codes: 0 success, 2 bad input, 1
//! internal failure.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand, ValueEnum};

use planner::plan::Plan;
use planner::text::Table;
use provisioner::nodes::{self, NodeMap};

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
                || err.downcast_ref::<provisioner::Error>().is_some()
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

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Nodes {
            plan,
            node_map,
            format,
        } => {
            let plan_name = plan.display().to_string();
            let p = Plan::parse(&read(&plan)?, &plan_name)?;
            let map = match &node_map {
                Some(path) => Some(NodeMap::from_toml(
                    &read(path)?,
                    &path.display().to_string(),
                )?),
                None => None,
            };
            let bound = nodes::bind(&p, map.as_ref(), &plan_name)?;
            let text = match format {
                Format::Json => {
                    let mut s = serde_json::to_string_pretty(&bound).context("serialising JSON")?;
                    s.push('\n');
                    s
                }
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
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(e).context("writing to stdout")
                }
                _ => Ok(()),
            }
        }
    }
}
