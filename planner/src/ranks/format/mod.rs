//! Rank tables as people and tools read them (a table, JSON, CSV, an Open
//! MPI rankfile and hostfile), and rank tables read back from CSV or JSON
//! for `planner verify-ranks` (`read.rs`), and the report of a checked
//! table (`report.rs`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::{Algorithm, Avoid, Congestion, Engine, Fold, Outcome, RankTable, Request};
use crate::checked::CheckedPlan;
use crate::error::{Problem, Result};
use crate::text::Table;

/// One rank as the JSON and CSV forms show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RankRow {
    /// Rank, from 0.
    pub rank: usize,
    /// Server (host name).
    pub server: String,
    /// Sub-node within the server (`sn0`).
    pub sub_node: String,
    /// GPU of the sub-node (on a NIC shared by several GPUs: its name
    /// when the rank runs on the NIC's first GPU, the one the plan names).
    pub gpu: Option<String>,
    /// On a plan whose NICs carry several GPUs (one rank per GPU): the
    /// rank's GPU by its index among the server's GPUs
    /// (`CUDA_VISIBLE_DEVICES`), absent elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_index: Option<usize>,
    /// NIC of the sub-node (shared by the ranks of its GPUs).
    pub nic: String,
    /// Switch the NIC is cabled to.
    pub switch: String,
    /// `upper` or `lower` on a BiGraph, the tier on a fat-tree.
    pub part: String,
}

/// The rows of a rank table.
pub fn rows(plan: &CheckedPlan, table: &RankTable) -> Vec<RankRow> {
    let shared = plan.shares_nics();
    let gpus = super::rank_gpus(plan, &table.ranks);
    table
        .ranks
        .iter()
        .enumerate()
        .map(|(rank, &i)| {
            let sn = &plan.sub_node_list[i];
            let gpu_index = gpus[rank].filter(|_| shared);
            RankRow {
                rank,
                server: sn.server.to_string(),
                sub_node: format!("sn{}", sn.index),
                gpu: (sn.gpu.as_deref().map(str::to_string))
                    .filter(|_| !shared || gpu_index == sn.gpu_index),
                gpu_index,
                nic: sn.nic.to_string(),
                switch: sn.switch.to_string(),
                part: sn.part_or_tier.as_str().to_string(),
            }
        })
        .collect()
}

/// The JSON document of `planner ranks --format json`. `verify-ranks
/// --ranks-file` reads back `algorithm` and the `rank`, `server`,
/// `sub_node` and `gpu_index` of every rank, and ignores the rest.
#[derive(Debug, Serialize)]
pub struct RankDocument<'a> {
    /// The plan's name.
    pub plan: &'a str,
    /// `hdrm`, `hd` or `ring`.
    pub algorithm: Algorithm,
    /// The engine the table is made for; absent for `probe`.
    #[serde(skip_serializing_if = "Engine::is_probe")]
    pub engine: Engine,
    /// Where the table comes from: `algorithm-1`, `plan-order`,
    /// `heuristic` or `ilp`.
    pub method: &'static str,
    /// The links and switches kept off, as given.
    pub avoid: &'a [Avoid],
    /// The ECMP hash seed the loads were computed with.
    pub seed: u64,
    /// Most flows on one directed inter-switch link over all steps.
    pub worst_load: usize,
    /// A load no table can beat on this fabric.
    pub lower_bound: usize,
    /// True when `worst_load` equals `lower_bound`.
    pub optimal: bool,
    /// Steps where some directed inter-switch link carries more than one
    /// flow.
    pub congested_steps: Vec<Congestion>,
    /// The fold of a rank count that is not a power of two.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fold: Option<&'a Fold>,
    /// What was done and why.
    pub notes: &'a [String],
    /// Every rank.
    pub ranks: Vec<RankRow>,
}

impl<'a> RankDocument<'a> {
    /// The document of `outcome`, computed for `request` on `plan`.
    pub fn new(plan: &'a CheckedPlan, request: &'a Request, outcome: &'a Outcome) -> Self {
        RankDocument {
            plan: &plan.name,
            algorithm: outcome.table.algorithm,
            engine: outcome.engine,
            method: outcome.method,
            avoid: &request.avoid,
            seed: request.seed,
            worst_load: outcome.worst_load,
            lower_bound: outcome.lower_bound,
            optimal: outcome.optimal,
            congested_steps: outcome.congested_steps(),
            fold: outcome.fold.as_ref(),
            notes: &outcome.notes,
            ranks: rows(plan, &outcome.table),
        }
    }
}

/// What `planner ranks` says about a table besides the table: how it was
/// found, its worst load against the lower bound, the congested steps and
/// the cost of a fold. One sentence per line.
pub fn outcome_summary(outcome: &Outcome) -> String {
    let mut out = String::new();
    let verdict = if outcome.worst_load <= 1 {
        "congestion-free: no directed inter-switch link carries two flows in any step".to_string()
    } else if outcome.optimal {
        format!(
            "up to {} flows share a directed inter-switch link, and no table does better on this fabric",
            outcome.worst_load
        )
    } else {
        format!(
            "up to {} flows share a directed inter-switch link; no table can do better than {}, and none between was found",
            outcome.worst_load, outcome.lower_bound
        )
    };
    let _ = writeln!(
        out,
        "Method: {}; worst load {} (lower bound {}): {verdict}",
        outcome.method, outcome.worst_load, outcome.lower_bound
    );
    let congested = outcome.congested_steps();
    if !congested.is_empty() {
        let steps: Vec<String> = congested
            .iter()
            .map(|c| {
                format!(
                    "{} {} ({} flows on {} link{})",
                    c.phase.as_str(),
                    c.step,
                    c.max_load,
                    c.links,
                    if c.links == 1 { "" } else { "s" }
                )
            })
            .collect();
        let _ = writeln!(out, "Congested steps: {}", steps.join(", "));
    }
    if let Some(f) = outcome
        .fold
        .as_ref()
        .filter(|f| !outcome.notes.contains(&f.note))
    {
        let _ = writeln!(out, "Fold: {}", f.note);
    }
    for n in &outcome.notes {
        let _ = writeln!(out, "Note: {n}");
    }
    out
}

/// CSV (RFC 4180) with the header `rank,server,sub_node,gpu,nic,switch,part`;
/// on a plan whose NICs carry several GPUs, `gpu_index` after `gpu`.
pub fn to_csv(plan: &CheckedPlan, table: &RankTable) -> String {
    let shared = plan.shares_nics();
    let mut header: Vec<String> = ["rank", "server", "sub_node", "gpu"]
        .map(String::from)
        .to_vec();
    if shared {
        header.push("gpu_index".to_string());
    }
    header.extend(["nic", "switch", "part"].map(String::from));
    let records = rows(plan, table).into_iter().map(|r| {
        let mut record = vec![
            r.rank.to_string(),
            r.server,
            r.sub_node,
            r.gpu.unwrap_or_default(),
        ];
        if shared {
            record.push(r.gpu_index.map(|g| g.to_string()).unwrap_or_default());
        }
        record.extend([r.nic, r.switch, r.part]);
        record
    });
    crate::text::write_csv(std::iter::once(header).chain(records))
}

/// An Open MPI rankfile: `rank N=host slot=S:*`, binding each rank to the
/// socket its GPU and NIC hang from ([`rankfile_slot`]). A host name the
/// file cannot carry ([`crate::names::check_mpi_host`]) is refused.
pub fn to_rankfile(plan: &CheckedPlan, table: &RankTable) -> Result<String> {
    check_mpi_hosts(plan, table, "rankfile")?;
    let mut out = String::new();
    for (rank, &i) in table.ranks.iter().enumerate() {
        let sn = &plan.sub_node_list[i];
        let _ = writeln!(
            out,
            "rank {rank}={} slot={}",
            sn.server,
            rankfile_slot(sn.socket_index)
        );
    }
    Ok(out)
}

/// The Open MPI rankfile slot of a rank whose GPU and NIC hang off
/// socket `socket` (its logical index among the server's sockets, as the
/// inventory lists them): `S:*`, every core of that socket (mpirun(1) of
/// Open MPI 4.1, "Rankfiles": `slot=S:C-D` names logical socket S, cores
/// C to D; `*` all of them, as Open MPI 4.1.4 binds it). A rankfile's
/// binding holds even against `--bind-to none`, so one core per rank
/// (`S:C`) would leave a training process and its data loaders one core;
/// a socket the server has is never wrong, one the inventory does not
/// list is never named. The one rule of `planner ranks --format rankfile`
/// and the provisioner's rankfile.
pub fn rankfile_slot(socket: usize) -> String {
    format!("{socket}:*")
}

/// Refuses a rank table whose servers have names an Open MPI rankfile or
/// hostfile cannot carry, naming every such server.
fn check_mpi_hosts(plan: &CheckedPlan, table: &RankTable, what: &str) -> Result<()> {
    let hosts: std::collections::BTreeSet<&str> = table
        .ranks
        .iter()
        .filter_map(|&i| plan.sub_node_list.get(i))
        .map(|sn| sn.server.as_str())
        .collect();
    let problems: Vec<Problem> = hosts
        .into_iter()
        .filter_map(|h| {
            crate::names::check_mpi_host(h).err().map(|e| {
                Problem::at(
                    None,
                    format!("server {h}"),
                    format!("an Open MPI {what} cannot carry it: {e}"),
                    "rename the server with letters, digits, `.`, `-` and `_` only, starting with a letter or digit",
                )
            })
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(plan.refusal(problems))
    }
}

/// An Open MPI hostfile: every host of the job with its number of ranks,
/// in the order of its first rank. A host name the file cannot carry is
/// refused, as in [`to_rankfile`].
pub fn to_hostfile(plan: &CheckedPlan, table: &RankTable) -> Result<String> {
    check_mpi_hosts(plan, table, "hostfile")?;
    let mut order: Vec<&str> = Vec::new();
    let mut slots: BTreeMap<&str, usize> = BTreeMap::new();
    for &i in &table.ranks {
        let host = plan.sub_node_list[i].server.as_str();
        let n = slots.entry(host).or_insert(0);
        if *n == 0 {
            order.push(host);
        }
        *n += 1;
    }
    let mut out = String::new();
    for host in order {
        let _ = writeln!(out, "{host} slots={}", slots[host]);
    }
    Ok(out)
}

/// The table for people; on a plan whose NICs carry several GPUs, with
/// the rank's GPU index (`CUDA_VISIBLE_DEVICES`) after the GPU.
pub fn to_table(plan: &CheckedPlan, table: &RankTable) -> String {
    let shared = plan.shares_nics();
    let mut headers = vec!["rank", "server", "sub-node", "GPU"];
    if shared {
        headers.push("GPU index");
    }
    headers.extend(["NIC", "switch", "part"]);
    let mut t = Table::new(headers).right(&[0]);
    for r in rows(plan, table) {
        let mut row = vec![
            r.rank.to_string(),
            r.server,
            r.sub_node,
            r.gpu.unwrap_or_else(|| "-".to_string()),
        ];
        if shared {
            row.push(r.gpu_index.map_or("-".to_string(), |g| g.to_string()));
        }
        row.extend([r.nic, r.switch, r.part]);
        t.row(row);
    }
    t.render()
}

mod read;
mod report;
#[cfg(test)]
mod tests;

pub use read::{RankFile, read_rank_file, read_rank_table};
pub use report::{
    Checked, Known, OrderLoads, StepGroup, VerifyReport, VerifyRequest, group_steps, render_verify,
    verify_report,
};
