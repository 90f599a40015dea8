//! Rank tables as people and tools read them (a table, JSON, CSV, an Open
//! MPI rankfile and hostfile), and rank tables read back from CSV or JSON
//! for `planner verify-ranks`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::{
    Algorithm, Avoid, Congestion, Engine, Fold, Outcome, Policy, RankTable, Request, StepLoad,
};
use crate::algorithm::{Command, RankSchedule};
use crate::checked::CheckedPlan;
use crate::error::{Error, Problem, Result};
use crate::plan::Plan;
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
                server: sn.server.clone(),
                sub_node: format!("sn{}", sn.index),
                gpu: sn
                    .gpu
                    .clone()
                    .filter(|_| !shared || gpu_index == sn.gpu_index),
                gpu_index,
                nic: sn.nic.clone(),
                switch: sn.switch.clone(),
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

/// A rank table read back from a file ([`read_rank_table`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankFile {
    /// The algorithm a JSON table names, if any.
    pub algorithm: Option<Algorithm>,
    /// The engine a JSON table is made for, if it names one (`planner
    /// ranks --engine` writes it for every engine but `probe`).
    pub engine: Option<Engine>,
    /// Rank -> index into `plan.sub_node_list`.
    pub ranks: Vec<usize>,
    /// Rank -> its GPU (`gpu_index` numbering): the file's `gpu_index`,
    /// else the sub-node's one GPU; `None` where the plan names no GPU.
    pub gpus: Vec<Option<usize>>,
}

/// Reads a rank table written by `planner ranks` as CSV (header
/// `rank,server,sub_node,...`; `rank`, `server`, `sub_node` and
/// `gpu_index` are read) or JSON (`{"algorithm": .., "ranks": [{"rank",
/// "server", "sub_node", "gpu_index"?, ..}]}`), and returns the algorithm
/// the JSON names, if any, and the table as sub-node indices. See
/// [`read_rank_table`] for the checks; this drops the GPUs.
pub fn read_rank_file(
    text: &str,
    file: &str,
    plan: &Plan,
) -> Result<(Option<Algorithm>, Vec<usize>)> {
    read_rank_table(text, file, plan).map(|t| (t.algorithm, t.ranks))
}

/// Reads a rank table as [`read_rank_file`] does, with every rank's GPU.
/// Every problem is reported: unknown servers or sub-nodes, ranks given
/// twice or missing, a sub-node given twice (on a NIC shared by several
/// GPUs: more often than it has GPUs), a `gpu_index` that is not one of
/// the NIC's GPUs or that two ranks share, and a rank on a NIC shared by
/// several GPUs without a `gpu_index` (which GPU runs it is the file's to
/// say: `planner ranks` writes the column on such plans).
pub fn read_rank_table(text: &str, file: &str, plan: &Plan) -> Result<RankFile> {
    let entries = if text.trim_start().starts_with('{') {
        read_json(text, file)?
    } else {
        read_csv(text, file)?
    };
    // (server, "snK") -> sub-node index.
    let mut index: BTreeMap<(&str, String), usize> = BTreeMap::new();
    for (i, sn) in plan.sub_node_list.iter().enumerate() {
        index.insert((sn.server.as_str(), format!("sn{}", sn.index)), i);
    }
    let mut problems = Vec::new();
    let n = entries.rows.len();
    let mut table = vec![usize::MAX; n];
    let mut gpus = vec![None; n];
    let mut taken: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    // (sub-node, GPU) -> the rank on it.
    let mut on_gpu: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut column_missing = false;
    for e in &entries.rows {
        let object = format!("rank {}", e.rank);
        if e.rank >= n {
            problems.push(Problem::at(
                e.line,
                object,
                format!(
                    "the file has {n} ranks, numbered 0 to {}",
                    n.saturating_sub(1)
                ),
                "number the ranks from 0 without gaps",
            ));
            continue;
        }
        if table[e.rank] != usize::MAX {
            problems.push(Problem::at(
                e.line,
                object,
                "the rank is given twice",
                "give every rank once",
            ));
            continue;
        }
        let Some(&sn) = index.get(&(e.server.as_str(), e.sub_node.clone())) else {
            problems.push(Problem::at(
                e.line,
                object,
                format!(
                    "{} {} is not a sub-node of the plan {}",
                    e.server, e.sub_node, plan.name
                ),
                "use the server and sub-node names of `planner ranks` output for this plan",
            ));
            continue;
        };
        let here_gpus = plan.sub_node_list[sn].gpus();
        let count = here_gpus.len();
        let here = taken.entry(sn).or_default();
        if here.len() == count {
            let (what, fix) = if count == 1 {
                (
                    format!("{} {} already runs rank {}", e.server, e.sub_node, here[0]),
                    "give every rank its own sub-node (the table must be a permutation)"
                        .to_string(),
                )
            } else {
                let list: Vec<String> = here.iter().map(ToString::to_string).collect();
                (
                    format!(
                        "{} {} carries {count} GPUs and already runs ranks {}",
                        e.server,
                        e.sub_node,
                        list.join(", ")
                    ),
                    format!("give the sub-node at most {count} ranks, one per GPU behind its NIC"),
                )
            };
            problems.push(Problem::at(e.line, object, what, fix));
            continue;
        }
        here.push(e.rank);
        table[e.rank] = sn;
        let listed = || {
            here_gpus
                .iter()
                .flatten()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let gpu = match e.gpu_index {
            Some(g) if here_gpus.contains(&Some(g)) => g,
            Some(g) => {
                let (what, fix) = if here_gpus == [None] {
                    (
                        format!(
                            "gpu_index {g}: the plan names no GPU behind {} {}",
                            e.server, e.sub_node
                        ),
                        "leave gpu_index empty for this rank".to_string(),
                    )
                } else {
                    (
                        format!(
                            "gpu_index {g} is not behind the NIC of {} {}, which carries GPU{} {}",
                            e.server,
                            e.sub_node,
                            if count == 1 { "" } else { "s" },
                            listed()
                        ),
                        format!("give one of {}", listed()),
                    )
                };
                problems.push(Problem::at(e.line, object, what, fix));
                continue;
            }
            None if count == 1 => {
                gpus[e.rank] = here_gpus[0];
                continue;
            }
            None if !entries.gpu_column => {
                column_missing = true;
                continue;
            }
            None => {
                problems.push(Problem::at(
                    e.line,
                    object,
                    format!(
                        "no gpu_index, and the NIC of {} {} carries GPUs {}",
                        e.server,
                        e.sub_node,
                        listed()
                    ),
                    format!("give the rank's GPU, one of {}", listed()),
                ));
                continue;
            }
        };
        if let Some(other) = on_gpu.insert((sn, gpu), e.rank) {
            problems.push(Problem::at(
                e.line,
                object,
                format!(
                    "GPU {gpu} of {} {} already runs rank {other}",
                    e.server, e.sub_node
                ),
                "give every rank of a NIC its own GPU (gpu_index)",
            ));
            continue;
        }
        gpus[e.rank] = Some(gpu);
    }
    if column_missing {
        problems.insert(
            0,
            Problem::at(
                entries.header_line,
                "gpu_index",
                "the table has no gpu_index, and it puts ranks on NICs shared by several GPUs: which GPU runs which rank is not said",
                "add the gpu_index of every rank (`planner ranks --format csv` or `--format json` writes it on this plan)",
            ),
        );
    }
    if problems.is_empty() && n == 0 {
        problems.push(Problem::at(
            None,
            "rank table",
            "it has no ranks",
            "give at least one rank",
        ));
    }
    if problems.is_empty() {
        Ok(RankFile {
            algorithm: entries.algorithm,
            engine: entries.engine,
            ranks: table,
            gpus,
        })
    } else {
        Err(Error::Invalid {
            file: file.to_string(),
            what: "rank table",
            problems,
        })
    }
}

/// The rows of a rank file as written, before they are checked.
struct Entries {
    algorithm: Option<Algorithm>,
    engine: Option<Engine>,
    /// True when the file gives `gpu_index` (a CSV column, or a JSON key
    /// on some rank).
    gpu_column: bool,
    /// The CSV header's line.
    header_line: Option<usize>,
    rows: Vec<Entry>,
}

struct Entry {
    rank: usize,
    server: String,
    sub_node: String,
    gpu_index: Option<usize>,
    line: Option<usize>,
}

fn read_csv(text: &str, file: &str) -> Result<Entries> {
    let mut columns: Option<(usize, usize, usize, Option<usize>)> = None;
    let mut header_line = None;
    let mut rows = Vec::new();
    for record in crate::text::read_csv(text, file)? {
        let line = record.line;
        let fields: Vec<&str> = record.fields.iter().map(String::as_str).collect();
        let Some((r, s, sn, g)) = columns else {
            let find = |name: &str| fields.iter().position(|f| f.eq_ignore_ascii_case(name));
            match (find("rank"), find("server"), find("sub_node")) {
                (Some(r), Some(s), Some(sn)) => {
                    columns = Some((r, s, sn, find("gpu_index")));
                    header_line = Some(line);
                }
                _ => {
                    return Err(Error::Syntax {
                        file: file.to_string(),
                        line,
                        column: 1,
                        message: "the header needs the columns rank, server and sub_node (as `planner ranks --format csv` writes)".to_string(),
                    });
                }
            }
            continue;
        };
        let get = |c: usize| fields.get(c).copied().unwrap_or("");
        let number = |c: usize, what: &str| {
            get(c).parse::<usize>().map_err(|_| Error::Syntax {
                file: file.to_string(),
                line,
                column: 1,
                message: format!("{what} `{}` is not a whole number", get(c)),
            })
        };
        let rank = number(r, "rank")?;
        let gpu_index = match g {
            Some(g) if !get(g).is_empty() => Some(number(g, "gpu_index")?),
            _ => None,
        };
        rows.push(Entry {
            rank,
            server: get(s).to_string(),
            sub_node: get(sn).to_string(),
            gpu_index,
            line: Some(line),
        });
    }
    Ok(Entries {
        algorithm: None,
        engine: None,
        gpu_column: columns.is_some_and(|c| c.3.is_some()),
        header_line,
        rows,
    })
}

fn read_json(text: &str, file: &str) -> Result<Entries> {
    #[derive(serde::Deserialize)]
    struct Doc {
        algorithm: Option<String>,
        #[serde(default)]
        engine: Option<String>,
        ranks: Vec<Row>,
    }
    #[derive(serde::Deserialize)]
    struct Row {
        rank: usize,
        server: String,
        sub_node: String,
        #[serde(default)]
        gpu_index: Option<usize>,
    }
    let doc: Doc = serde_json::from_str(text).map_err(|e| Error::json(file, &e))?;
    let algorithm = match doc.algorithm {
        Some(a) => Some(
            Algorithm::parse(&a, Command::Ranks).map_err(|_| Error::Invalid {
                file: file.to_string(),
                what: "rank table",
                problems: vec![Problem::at(
                    None,
                    "algorithm",
                    format!("`{a}` is not an algorithm"),
                    format!("use {}", Algorithm::names(Command::Ranks)),
                )],
            })?,
        ),
        None => None,
    };
    let engine = match doc.engine {
        Some(e) => Some(e.parse::<Engine>().map_err(|_| Error::Invalid {
            file: file.to_string(),
            what: "rank table",
            problems: vec![Problem::at(
                None,
                "engine",
                format!("`{e}` is not an engine"),
                format!("use {}", Engine::ALL.map(Engine::as_str).join(", ")),
            )],
        })?),
        None => None,
    };
    Ok(Entries {
        algorithm,
        engine,
        gpu_column: doc.ranks.iter().any(|r| r.gpu_index.is_some()),
        header_line: None,
        rows: doc
            .ranks
            .into_iter()
            .map(|r| Entry {
                rank: r.rank,
                server: r.server,
                sub_node: r.sub_node,
                gpu_index: r.gpu_index,
                line: None,
            })
            .collect(),
    })
}

/// Consecutive steps of one phase with the same loads, for reports: a
/// ring's 2(P-1) steps are alike and read as two rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepGroup {
    /// `reduce-scatter` or `all-gather` (or the fold phases).
    pub phase: super::Phase,
    /// First step of the group, from 1 within the phase.
    pub first_step: usize,
    /// Last step of the group.
    pub last_step: usize,
    /// Rank distance (halving-doubling).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<usize>,
    /// Directed flows per step.
    pub flows: usize,
    /// Flows per step that stay inside a server (rail-optimized plans, or
    /// two ranks of one NIC).
    #[serde(default, skip_serializing_if = "super::verify::is_zero")]
    pub intra_server_flows: usize,
    /// Of `intra_server_flows`, those between two GPUs of one NVLink or
    /// NVSwitch domain (by the ranks' GPUs); the others go through PCIe.
    #[serde(default, skip_serializing_if = "super::verify::is_zero")]
    pub nvlink_flows: usize,
    /// Flows per step counted with another flow between the same two NICs
    /// (one rank per GPU on a shared NIC).
    #[serde(default, skip_serializing_if = "super::verify::is_zero")]
    pub shared_nic_flows: usize,
    /// Most flows on one directed inter-switch link.
    pub max_load: usize,
    /// Directed inter-switch links carrying that many.
    pub max_load_links: usize,
    /// With `spray`: the flows' shares on the busiest link (`max_load` is
    /// this rounded up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_share: Option<f64>,
    /// True when a NIC link carries more than one flow.
    pub access_overloaded: bool,
}

/// Groups consecutive alike steps; `nvlink` is every step's
/// [`super::gpus::nvlink_flows`].
pub fn group_steps(steps: &[super::StepLoad], nvlink: &[usize]) -> Vec<StepGroup> {
    let mut out: Vec<StepGroup> = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let nvlink_flows = nvlink.get(i).copied().unwrap_or(0);
        if let Some(g) = out.last_mut()
            && g.phase == s.phase
            && g.distance.is_none()
            && s.distance.is_none()
            && g.flows == s.flows
            && g.intra_server_flows == s.intra_server_flows
            && g.nvlink_flows == nvlink_flows
            && g.shared_nic_flows == s.shared_nic_flows
            && g.max_load == s.max_load
            && g.max_load_links == s.max_load_links
            && g.max_share == s.max_share
            && g.access_overloaded == s.access_overloaded
            && g.last_step + 1 == s.step
        {
            g.last_step = s.step;
            continue;
        }
        out.push(StepGroup {
            phase: s.phase,
            first_step: s.step,
            last_step: s.step,
            distance: s.distance,
            flows: s.flows,
            intra_server_flows: s.intra_server_flows,
            nvlink_flows,
            shared_nic_flows: s.shared_nic_flows,
            max_load: s.max_load,
            max_load_links: s.max_load_links,
            max_share: s.max_share,
            access_overloaded: s.access_overloaded,
        });
    }
    out
}

/// Loads of one rank order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrderLoads {
    /// `hdrm`, `hd`, `ring`, or the rank file's name.
    pub order: String,
    /// Most flows on one directed inter-switch link over all steps.
    pub worst_load: usize,
    /// With `spray`: the largest share of flows on one link over all
    /// steps (`worst_load` is this rounded up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_share: Option<f64>,
    /// Step groups.
    pub steps: Vec<StepGroup>,
}

/// The result of `planner verify-ranks`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyReport {
    /// The plan's name.
    pub plan: String,
    /// `BiGraph 4x16`, ...
    pub design: String,
    /// `halving-doubling` or `ring`.
    pub schedule: &'static str,
    /// The engine whose schedule was checked; absent for `probe`.
    #[serde(skip_serializing_if = "Engine::is_probe")]
    pub engine: Engine,
    /// Ranks in the job.
    pub ranks: usize,
    /// The routing policy the flows were routed by: `ecmp`, `dmodk` or
    /// `spray`.
    pub routing: Policy,
    /// The ECMP hash seed (moves only `ecmp` routes).
    pub seed: u64,
    /// The links and switches routed around, as given.
    pub avoid: Vec<Avoid>,
    /// True when no step puts two flows on one directed inter-switch link.
    pub congestion_free: bool,
    /// When the table was searched for: a load no table can beat on this
    /// fabric.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower_bound: Option<usize>,
    /// The table checked.
    pub table: OrderLoads,
    /// The same schedule in plan order (what a scheduler does without the
    /// topology), when the table checked is not already that.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_order: Option<OrderLoads>,
}

/// The loads of `table` whose ranks run on `gpus` (rank -> GPU), under
/// `engine`'s schedule.
fn loads(
    plan: &CheckedPlan,
    order: String,
    (table, engine): (&RankTable, Engine),
    gpus: &[Option<usize>],
    steps: &[super::StepLoad],
) -> Result<OrderLoads> {
    let schedule = engine.schedule(table.algorithm, table.ranks.len())?;
    let visit = engine.ring_order(plan, &table.ranks);
    let nvlink = super::gpus::nvlink_flows(
        plan,
        &super::in_order(&visit, &table.ranks),
        &super::in_order(&visit, gpus),
        &schedule,
    );
    Ok(OrderLoads {
        order,
        worst_load: steps.iter().map(|s| s.max_load).max().unwrap_or(0),
        worst_share: steps.iter().filter_map(|s| s.max_share).reduce(f64::max),
        steps: group_steps(steps, &nvlink),
    })
}

/// Verifies `table` (named `order` in the report) step by step on `plan`
/// with the links and switches of `avoid` out of service, and the plan
/// order beside it (skipping avoided switches) unless `table` is the plan
/// order itself. The k-th rank on a NIC runs on its k-th GPU
/// ([`super::rank_gpus`]); [`verify_report_on`] takes the GPUs given.
pub fn verify_report(
    plan: &CheckedPlan,
    table: &RankTable,
    order: String,
    avoid: &[Avoid],
    seed: u64,
    routing: Policy,
) -> Result<VerifyReport> {
    let gpus = super::rank_gpus(plan, &table.ranks);
    verify_report_on(plan, table, &gpus, order, avoid, seed, routing)
}

/// [`verify_report`] with every rank's GPU given (rank -> GPU by
/// `gpu_index` numbering, as [`read_rank_table`] reads it): which of the
/// flows inside a server join two GPUs of one NVLink domain follows it.
pub fn verify_report_on(
    plan: &CheckedPlan,
    table: &RankTable,
    gpus: &[Option<usize>],
    order: String,
    avoid: &[Avoid],
    seed: u64,
    routing: Policy,
) -> Result<VerifyReport> {
    let how = Checked {
        engine: Engine::Probe,
        avoid,
        seed,
        routing,
    };
    verify_report_as(plan, table, gpus, order, &how)
}

/// What [`verify_report_as`] checks a table against: the engine that runs
/// it, the links and switches out of service, and the routing.
#[derive(Debug, Clone, Copy)]
pub struct Checked<'a> {
    /// The engine whose schedule (its fold, its ring order) is routed.
    pub engine: Engine,
    /// Links and switches routed around.
    pub avoid: &'a [Avoid],
    /// ECMP hash seed.
    pub seed: u64,
    /// The routing policy.
    pub routing: Policy,
}

/// [`verify_report_on`] for what `how.engine` really runs over the table
/// ([`super::verify_engine`]); the plan order beside it is the same
/// engine's schedule over the ranks in plan order, which is what a
/// launcher that knows nothing of the fabric gives it.
pub fn verify_report_as(
    plan: &CheckedPlan,
    table: &RankTable,
    gpus: &[Option<usize>],
    order: String,
    how: &Checked<'_>,
) -> Result<VerifyReport> {
    verify_report_known(plan, table, gpus, order, how, None)
}

/// [`verify_report_as`] for a table [`super::plan_gpu_ranks`] just made
/// and proved (`steps`, its [`super::Outcome::steps`], asked with the
/// engine, `--avoid` and seed of `how`): they are the loads
/// [`super::verify_engine`] finds when `how` routes by the ECMP hash and
/// the engine's ring order keeps the table as it is (the same ranks,
/// schedule, fabric and seed), and are then taken as they are instead of
/// being routed a second time; otherwise the table is routed again.
pub fn verify_report_proven(
    plan: &CheckedPlan,
    table: &RankTable,
    gpus: &[Option<usize>],
    order: String,
    how: &Checked<'_>,
    steps: Vec<StepLoad>,
) -> Result<VerifyReport> {
    let same = how.routing == Policy::Ecmp
        && (how.engine.ring_order(plan, &table.ranks).iter())
            .enumerate()
            .all(|(i, &r)| i == r);
    verify_report_known(plan, table, gpus, order, how, same.then_some(steps))
}

fn verify_report_known(
    plan: &CheckedPlan,
    table: &RankTable,
    gpus: &[Option<usize>],
    order: String,
    how: &Checked<'_>,
    known: Option<Vec<StepLoad>>,
) -> Result<VerifyReport> {
    let Checked {
        engine,
        avoid,
        seed,
        routing,
    } = *how;
    super::check_ranks(plan, &table.ranks)?;
    if gpus.len() != table.ranks.len() {
        return Err(Error::Internal(format!(
            "{} GPUs given for {} ranks",
            gpus.len(),
            table.ranks.len()
        )));
    }
    let steps = match known {
        Some(steps) => steps,
        None => super::verify_engine(plan, table, engine, avoid, seed, routing)?,
    };
    let ring = table.algorithm.info().rank_schedule == Some(RankSchedule::Ring);
    let plain = if ring { Algorithm::Ring } else { Algorithm::Hd };
    let baseline = super::plan_gpu_ranks(
        plan,
        &Request {
            algorithm: plain,
            ranks: Some(table.ranks.len()),
            avoid: avoid.to_vec(),
            seed,
            engine,
            ..Request::default()
        },
    )?;
    let same_gpus = || super::rank_gpus(plan, &baseline.table.ranks) == gpus;
    let plan_order = if baseline.table.ranks == table.ranks && same_gpus() {
        None
    } else {
        // The search counts loads under the ECMP hash; another policy
        // routes the plan order again.
        let steps = if routing == Policy::Ecmp {
            baseline.steps
        } else {
            super::verify_engine(plan, &baseline.table, engine, avoid, seed, routing)?
        };
        let order = format!("{} in plan order", plain.as_str());
        let gpus = super::rank_gpus(plan, &baseline.table.ranks);
        Some(loads(
            plan,
            order,
            (&baseline.table, engine),
            &gpus,
            &steps,
        )?)
    };
    let table_loads = loads(plan, order, (table, engine), gpus, &steps)?;
    Ok(VerifyReport {
        plan: plan.name.clone(),
        design: plan.describe(),
        schedule: if ring { "ring" } else { "halving-doubling" },
        engine,
        ranks: table.ranks.len(),
        routing,
        seed,
        avoid: avoid.to_vec(),
        congestion_free: table_loads.worst_load <= 1,
        lower_bound: None,
        table: table_loads,
        plan_order,
    })
}

fn step_range(g: &StepGroup) -> String {
    if g.first_step == g.last_step {
        g.first_step.to_string()
    } else {
        format!("{}-{}", g.first_step, g.last_step)
    }
}

/// The report for people: a row per step (alike steps merged), the plan
/// order's figures beside, and a verdict.
pub fn render_verify(r: &VerifyReport) -> String {
    let routed = match r.routing {
        Policy::Ecmp => format!("ECMP seed {}", r.seed),
        Policy::DModK => "D-mod-K routing".to_string(),
        Policy::Spray => "packet spraying over every equal-cost path".to_string(),
    };
    let mut out = format!(
        "Per-step link loads of {} ({}) on {} ({}, {} ranks, {routed})\n",
        r.table.order, r.schedule, r.plan, r.design, r.ranks
    );
    if !r.engine.is_probe() {
        out.push_str(&format!(
            "Engine: {}, as it runs over this table: {}\n",
            r.engine,
            r.engine.runs()
        ));
    }
    if !r.avoid.is_empty() {
        let avoided: Vec<String> = r.avoid.iter().map(ToString::to_string).collect();
        out.push_str(&format!("Routed around: {}\n", avoided.join(", ")));
    }
    if let Some(p) = &r.plan_order {
        out.push_str(&format!(
            "Beside it: {}, the order a scheduler fills switch by switch\n",
            p.order
        ));
    }
    if r.routing == Policy::Spray {
        out.push_str("Load: flows' shares on the busiest directed inter-switch link (each flow spread evenly over its paths), and on how many links that happens\n\n");
    } else {
        out.push_str("Load: flows on the busiest directed inter-switch link, and on how many links that happens\n\n");
    }
    let load_text = |g: &StepGroup| match g.max_share {
        Some(share) => format!("{share:.2}"),
        None => g.max_load.to_string(),
    };
    let mut headers = vec!["phase", "step", "distance", "flows", "load", "links"];
    if r.plan_order.is_some() {
        headers.extend(["plan order: load", "links"]);
    }
    let right: Vec<usize> = (1..headers.len()).collect();
    let mut t = Table::new(headers).right(&right);
    // The plan order's groups line up with the table's when the steps
    // match; look them up by phase and step.
    let lookup = |phase: super::Phase, step: usize| {
        r.plan_order.as_ref().and_then(|p| {
            p.steps
                .iter()
                .find(|g| g.phase == phase && g.first_step <= step && step <= g.last_step)
        })
    };
    for g in &r.table.steps {
        let mut row = vec![
            g.phase.as_str().to_string(),
            step_range(g),
            g.distance.map_or("-".to_string(), |d| d.to_string()),
            g.flows.to_string(),
            load_text(g),
            g.max_load_links.to_string(),
        ];
        if r.plan_order.is_some() {
            match lookup(g.phase, g.first_step) {
                Some(b) => {
                    row.push(load_text(b));
                    row.push(b.max_load_links.to_string());
                }
                None => row.extend(["-".to_string(), "-".to_string()]),
            }
        }
        t.row(row);
    }
    out.push_str(&t.render());
    out.push('\n');
    let verdict = |o: &OrderLoads| -> String {
        if o.worst_load <= 1 {
            format!(
                "{}: congestion-free, no directed inter-switch link carries more than one flow in any step",
                o.order
            )
        } else {
            let bad: Vec<String> = o
                .steps
                .iter()
                .filter(|g| g.max_load > 1)
                .map(|g| {
                    format!(
                        "{} {} ({} flows)",
                        g.phase.as_str(),
                        step_range(g),
                        load_text(g)
                    )
                })
                .collect();
            let worst = match o.worst_share {
                Some(share) => format!("{share:.2} flows' worth"),
                None => format!("{} flows", o.worst_load),
            };
            format!(
                "{}: congested, up to {worst} share a link; steps {}",
                o.order,
                bad.join(", ")
            )
        }
    };
    out.push_str(&format!("Result: {}\n", verdict(&r.table)));
    if let Some(p) = &r.plan_order {
        out.push_str(&format!("        {}\n", verdict(p)));
    }
    let inside: Vec<String> = r
        .table
        .steps
        .iter()
        .filter(|g| g.intra_server_flows > 0)
        .map(|g| {
            let pcie = g.intra_server_flows - g.nvlink_flows.min(g.intra_server_flows);
            let over = match (g.nvlink_flows, pcie) {
                (0, _) => "PCIe".to_string(),
                (_, 0) => "NVLink".to_string(),
                (nv, pcie) => format!("{nv} NVLink, {pcie} PCIe"),
            };
            format!(
                "{} {} ({} of {}, {over})",
                g.phase.as_str(),
                step_range(g),
                g.intra_server_flows,
                g.flows
            )
        })
        .collect();
    if !inside.is_empty() {
        out.push_str(&format!(
            "Inside servers: flows between two GPUs of one server stay off the fabric and are on no link above, over NVLink when the two GPUs (by their gpu_index) share an NVLink domain and through PCIe otherwise: {}\n",
            inside.join(", ")
        ));
    }
    let shared: Vec<String> = r
        .table
        .steps
        .iter()
        .filter(|g| g.shared_nic_flows > 0)
        .map(|g| {
            format!(
                "{} {} ({} of {})",
                g.phase.as_str(),
                step_range(g),
                g.shared_nic_flows,
                g.flows
            )
        })
        .collect();
    if !shared.is_empty() {
        out.push_str(&format!(
            "Shared NICs: the GPUs behind one NIC send to one NIC together; a step's flows between two NICs are routed and counted as one NIC flow, so a load of 1 means no link carries two NIC pairs' traffic (each GPU gets its share of the NIC): {}\n",
            shared.join(", ")
        ));
    }
    if r.table.steps.iter().any(|g| g.access_overloaded) {
        out.push_str("Warning: some steps put two flows on one NIC link; the rank table or schedule sends twice from one sub-node\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::shorthand::{self, Shorthand};
    use crate::ranks::rank_table;

    fn plan() -> crate::checked::CheckedPlan {
        let (inv, opts) = shorthand::bigraph(2, 4, &Shorthand::default()).unwrap();
        crate::design::design(&inv, &opts).unwrap()
    }

    #[test]
    fn outputs_round_trip() {
        let plan = plan();
        let t = rank_table(&plan, Algorithm::Hdrm, None).unwrap();
        let csv = to_csv(&plan, &t);
        assert!(csv.starts_with("rank,server,sub_node,gpu,nic,switch,part\n0,"));
        let (_, back) = read_rank_file(&csv, "r.csv", &plan).unwrap();
        assert_eq!(back, t.ranks);
        let request = Request::default();
        let outcome = crate::ranks::plan_ranks(&plan, &request).unwrap();
        assert_eq!(outcome.table, t);
        let doc = RankDocument::new(&plan, &request, &outcome);
        let json = serde_json::to_string(&doc).unwrap();
        let (alg, back) = read_rank_file(&json, "r.json", &plan).unwrap();
        assert_eq!((alg, back), (Some(Algorithm::Hdrm), t.ranks.clone()));
    }

    /// cloud-8x16 (eight GPUs behind each server's one NIC) with the
    /// NVLink mesh cut in two quads, GPUs 0-3 and 4-7: which flows inside
    /// a server go over NVLink depends on which GPU runs which rank.
    fn two_quads() -> CheckedPlan {
        let text = crate::design::bundled_text("cloud-8x16").replace(
            "[[server.nvlink]]\nname = \"nvlink\"\nkind = \"mesh\"\ngbytes_per_s = 150\n",
            "[[server.nvlink]]\nname = \"quad0\"\nkind = \"mesh\"\ngbytes_per_s = 150\n\
             gpus = [\"gpu0\", \"gpu1\", \"gpu2\", \"gpu3\"]\n\n\
             [[server.nvlink]]\nname = \"quad1\"\nkind = \"mesh\"\ngbytes_per_s = 150\n\
             gpus = [\"gpu4\", \"gpu5\", \"gpu6\", \"gpu7\"]\n",
        );
        let inv = crate::inventory::Inventory::from_toml(&text, "two-quads.toml").unwrap();
        let opts = crate::design::DesignOptions {
            topology: crate::plan::Topology::FatTree,
            ..Default::default()
        };
        let plan = crate::design::design(&inv, &opts).unwrap();
        assert_eq!(plan.servers[0].nvlink.len(), 2);
        plan
    }

    /// Every step group's NVLink flows, in order.
    fn nvlink(r: &VerifyReport) -> Vec<usize> {
        r.table.steps.iter().map(|g| g.nvlink_flows).collect()
    }

    /// `ranks --format csv` read back gives every rank its GPU and the
    /// same report; a file with two ranks' GPUs swapped gives the report
    /// of that mapping (which flows inside a server stay in a quad).
    #[test]
    fn gpu_index_read_back_and_swapped() {
        let plan = two_quads();
        let request = Request {
            algorithm: Algorithm::Hd,
            ..Request::default()
        };
        let t = crate::ranks::plan_gpu_ranks(&plan, &request).unwrap().table;
        let report = |gpus: &[Option<usize>]| {
            verify_report_on(&plan, &t, gpus, "t".into(), &[], 0, Policy::Ecmp).unwrap()
        };
        let csv = to_csv(&plan, &t);
        let back = read_rank_table(&csv, "t.csv", &plan).unwrap();
        assert_eq!(back.ranks, t.ranks);
        assert_eq!(back.gpus, crate::ranks::rank_gpus(&plan, &t.ranks));
        let plain = verify_report(&plan, &t, "t".into(), &[], 0, Policy::Ecmp).unwrap();
        assert_eq!(report(&back.gpus), plain);
        assert!(plain.plan_order.is_none());
        // Distances 1 and 2 stay in a quad, 4 crosses; 8 and up leave
        // the server.
        assert_eq!(
            nvlink(&plain),
            [128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 128, 128]
        );
        // Ranks 1 and 4 of vm01 swap GPUs 1 and 4: rank 0 (GPU 0) and 4
        // (GPU 1) now share quad 0, ranks 1 (GPU 4) and 5 share quad 1;
        // 0-1, 1-3, 4-5 and 4-6 now cross (both directions each).
        let swapped = csv
            .replace("\n1,vm01,sn0,,1,", "\n1,vm01,sn0,,4,")
            .replace("\n4,vm01,sn0,,4,", "\n4,vm01,sn0,,1,");
        assert_ne!(swapped, csv);
        let back = read_rank_table(&swapped, "s.csv", &plan).unwrap();
        assert_eq!(back.ranks, t.ranks);
        assert_eq!((back.gpus[1], back.gpus[4]), (Some(4), Some(1)));
        let r = report(&back.gpus);
        assert_eq!(
            nvlink(&r),
            [124, 124, 4, 0, 0, 0, 0, 0, 0, 0, 0, 4, 124, 124]
        );
        // Only the GPUs moved: the same fabric loads, and the plan order
        // (k-th rank on the k-th GPU) beside it.
        assert_eq!(r.table.worst_load, plain.table.worst_load);
        let p = r.plan_order.as_ref().unwrap();
        assert_eq!(
            p.steps.iter().map(|g| g.nvlink_flows).collect::<Vec<_>>(),
            nvlink(&plain)
        );
        let text = render_verify(&r);
        assert!(
            text.contains("reduce-scatter 3 (128 of 128, 4 NVLink, 124 PCIe)"),
            "{text}"
        );
    }

    /// Why `text` is refused as a rank file of `plan`.
    fn refusal(text: &str, file: &str, plan: &Plan) -> String {
        read_rank_table(text, file, plan).unwrap_err().to_string()
    }

    /// A rank file's GPUs are checked: one of the NIC's, one rank each,
    /// and given on a plan whose NICs carry several.
    #[test]
    fn bad_gpu_indices_name_the_line_and_fix() {
        let plan = crate::design::bundled("cloud-8x16", Some(crate::plan::Topology::FatTree));
        let request = Request {
            algorithm: Algorithm::Ring,
            ranks: Some(8),
            ..Request::default()
        };
        let t = crate::ranks::plan_gpu_ranks(&plan, &request).unwrap().table;
        let csv = to_csv(&plan, &t);
        let bad = csv
            .replace("\n1,vm01,sn0,,1,", "\n1,vm01,sn0,,0,")
            .replace("\n2,vm01,sn0,,2,", "\n2,vm01,sn0,,8,")
            .replace("\n3,vm01,sn0,,3,", "\n3,vm01,sn0,,,");
        let e = refusal(&bad, "b.csv", &plan);
        assert!(
            e.contains("b.csv:3: rank 1: GPU 0 of vm01 sn0 already runs rank 0"),
            "{e}"
        );
        assert!(
            e.contains("b.csv:4: rank 2: gpu_index 8 is not behind the NIC of vm01 sn0, which carries GPUs 0, 1, 2, 3, 4, 5, 6, 7; give one of"),
            "{e}"
        );
        assert!(e.contains("b.csv:5: rank 3: no gpu_index"), "{e}");
        let e = refusal("x,y\n", "b.csv", &plan);
        assert!(e.starts_with("b.csv:1:1:"), "{e}");
        let no_column: String = csv
            .lines()
            .map(|l| {
                let mut f: Vec<&str> = l.split(',').collect();
                f.remove(4);
                f.join(",") + "\n"
            })
            .collect();
        let e = refusal(&no_column, "n.csv", &plan);
        assert!(
            e.contains("n.csv:1: gpu_index: the table has no gpu_index"),
            "{e}"
        );
        assert!(e.contains("planner ranks --format csv"), "{e}");
        // JSON: the same checks, and the GPUs read back.
        let outcome = crate::ranks::plan_gpu_ranks(&plan, &request).unwrap();
        let json = serde_json::to_string(&RankDocument::new(&plan, &request, &outcome)).unwrap();
        let back = read_rank_table(&json, "t.json", &plan).unwrap();
        assert_eq!(back.gpus, crate::ranks::rank_gpus(&plan, &t.ranks));
        let e = read_rank_table(
            &json.replace("\"gpu_index\":5", "\"gpu_index\":4"),
            "t.json",
            &plan,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("rank 5: GPU 4 of vm01 sn0 already runs rank 4"),
            "{e}"
        );
        // A plan with one GPU per NIC: the column may be absent, and a
        // GPU given must be the sub-node's own.
        let small = self::plan();
        let t = rank_table(&small, Algorithm::Hd, None).unwrap();
        let rows: String = (0..t.ranks.len())
            .map(|r| {
                let sn = &small.sub_node_list[t.ranks[r]];
                format!("{r},{},sn{},\n", sn.server, sn.index)
            })
            .collect();
        let csv = format!("rank,server,sub_node,gpu_index\n{rows}");
        let back = read_rank_table(&csv, "o.csv", &small).unwrap();
        assert_eq!(back.ranks, t.ranks);
        assert_eq!(back.gpus, crate::ranks::rank_gpus(&small, &t.ranks));
        let csv = csv.replacen(",sn0,\n", ",sn0,99\n", 1);
        let e = refusal(&csv, "o.csv", &small);
        assert!(e.contains("o.csv:2: rank 0: gpu_index 99"), "{e}");
    }

    #[test]
    fn rankfile_and_hostfile() {
        let plan = plan();
        let t = rank_table(&plan, Algorithm::Hd, None).unwrap();
        let rf = to_rankfile(&plan, &t).unwrap();
        // Two sub-nodes per server, one per socket.
        assert!(
            rf.starts_with("rank 0=node1 slot=0:*\nrank 1=node1 slot=1:*\n"),
            "{rf}"
        );
        assert_eq!(
            to_hostfile(&plan, &t).unwrap().lines().next(),
            Some("node1 slots=2")
        );
    }

    #[test]
    fn bad_rank_files_name_every_problem() {
        let plan = plan();
        let csv = "rank,server,sub_node\n0,node1,sn0\n0,node1,sn1\n1,node9,sn0\n2,node1,sn0\n";
        let e = read_rank_file(csv, "r.csv", &plan).unwrap_err().to_string();
        assert!(
            e.contains("r.csv:3: rank 0: the rank is given twice"),
            "{e}"
        );
        assert!(
            e.contains("r.csv:4: rank 1: node9 sn0 is not a sub-node"),
            "{e}"
        );
        assert!(
            e.contains("r.csv:5: rank 2: node1 sn0 already runs rank 0"),
            "{e}"
        );
        let e = read_rank_file("a,b\n", "r.csv", &plan)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("r.csv:1:1:"), "{e}");
        let e = read_rank_file("{\"ranks\": 3}", "r.json", &plan)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("r.json:1:"), "{e}");
    }
}
