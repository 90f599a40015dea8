//! Rank tables as people and tools read them (a table, JSON, CSV, an Open
//! MPI rankfile and hostfile), and rank tables read back from CSV or JSON
//! for `planner verify-ranks`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::{Algorithm, Avoid, Congestion, Fold, Outcome, Policy, RankTable, Request};
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
/// --ranks-file` reads back `algorithm` and the `rank`, `server` and
/// `sub_node` of every rank, and ignores the rest.
#[derive(Debug, Serialize)]
pub struct RankDocument<'a> {
    /// The plan's name.
    pub plan: &'a str,
    /// `hdrm`, `hd` or `ring`.
    pub algorithm: Algorithm,
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

/// An Open MPI rankfile: `rank N=host slot=S:C`, binding each rank to a core
/// of the socket its GPU and NIC hang from. C counts the server's GPUs
/// (one per sub-node, or every GPU of a shared NIC) on that socket, so two
/// ranks of one socket get different cores. A host name the file cannot
/// carry ([`crate::names::check_mpi_host`]) is refused.
pub fn to_rankfile(plan: &CheckedPlan, table: &RankTable) -> Result<String> {
    check_mpi_hosts(plan, table, "rankfile")?;
    let cores = rank_cores(plan, &table.ranks);
    let mut out = String::new();
    for (rank, &i) in table.ranks.iter().enumerate() {
        let sn = &plan.sub_node_list[i];
        let _ = writeln!(
            out,
            "rank {rank}={} slot={}:{}",
            sn.server, sn.socket_index, cores[rank]
        );
    }
    Ok(out)
}

/// The core of every rank of `ranks` (rank -> sub-node) on its sub-node's
/// socket, the `C` of an Open MPI `slot=S:C`: the server's sub-nodes on
/// that socket counted in sub-node order, a NIC shared by several GPUs
/// taking one core per GPU, its k-th rank the k-th of them. The one rule
/// of `planner ranks --format rankfile` and the provisioner's rankfile.
pub fn rank_cores(plan: &Plan, ranks: &[usize]) -> Vec<usize> {
    let mut first = vec![0usize; plan.sub_node_list.len()];
    for server in &plan.servers {
        let mut next: BTreeMap<usize, usize> = BTreeMap::new();
        for &i in &server.sub_nodes {
            if let Some(sn) = plan.sub_node_list.get(i) {
                let c = next.entry(sn.socket_index).or_insert(0);
                first[i] = *c;
                *c += sn.gpu_count();
            }
        }
    }
    ranks
        .iter()
        .zip(super::nic_local_ranks(ranks))
        .map(|(&i, k)| first.get(i).copied().unwrap_or(0) + k)
        .collect()
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

/// Reads a rank table written by `planner ranks` as CSV (header
/// `rank,server,sub_node,...`; only `rank`, `server` and `sub_node` are
/// read) or JSON (`{"algorithm": .., "ranks": [{"rank", "server",
/// "sub_node", ..}]}`). Returns the algorithm the JSON names, if any, and
/// the table as sub-node indices. Every problem is reported: unknown
/// servers or sub-nodes, ranks given twice or missing, a sub-node given
/// twice (on a NIC shared by several GPUs: more often than it has GPUs;
/// the k-th rank on it runs on its k-th GPU).
pub fn read_rank_file(
    text: &str,
    file: &str,
    plan: &Plan,
) -> Result<(Option<Algorithm>, Vec<usize>)> {
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
    let n = entries.1.len();
    let mut table = vec![usize::MAX; n];
    let mut taken: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for e in &entries.1 {
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
        let gpus = plan.sub_node_list[sn].gpu_count();
        let here = taken.entry(sn).or_default();
        if here.len() == gpus {
            let (what, fix) = if gpus == 1 {
                (
                    format!("{} {} already runs rank {}", e.server, e.sub_node, here[0]),
                    "give every rank its own sub-node (the table must be a permutation)"
                        .to_string(),
                )
            } else {
                let list: Vec<String> = here.iter().map(ToString::to_string).collect();
                (
                    format!(
                        "{} {} carries {gpus} GPUs and already runs ranks {}",
                        e.server,
                        e.sub_node,
                        list.join(", ")
                    ),
                    format!("give the sub-node at most {gpus} ranks, one per GPU behind its NIC"),
                )
            };
            problems.push(Problem::at(e.line, object, what, fix));
            continue;
        }
        here.push(e.rank);
        table[e.rank] = sn;
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
        Ok((entries.0, table))
    } else {
        Err(Error::Invalid {
            file: file.to_string(),
            what: "rank table",
            problems,
        })
    }
}

struct Entry {
    rank: usize,
    server: String,
    sub_node: String,
    line: Option<usize>,
}

fn read_csv(text: &str, file: &str) -> Result<(Option<Algorithm>, Vec<Entry>)> {
    let mut columns: Option<(usize, usize, usize)> = None;
    let mut out = Vec::new();
    for record in crate::text::read_csv(text, file)? {
        let line = record.line;
        let fields: Vec<&str> = record.fields.iter().map(String::as_str).collect();
        let Some((r, s, sn)) = columns else {
            let find = |name: &str| fields.iter().position(|f| f.eq_ignore_ascii_case(name));
            match (find("rank"), find("server"), find("sub_node")) {
                (Some(r), Some(s), Some(sn)) => columns = Some((r, s, sn)),
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
        let rank = get(r).parse::<usize>().map_err(|_| Error::Syntax {
            file: file.to_string(),
            line,
            column: 1,
            message: format!("rank `{}` is not a whole number", get(r)),
        })?;
        out.push(Entry {
            rank,
            server: get(s).to_string(),
            sub_node: get(sn).to_string(),
            line: Some(line),
        });
    }
    Ok((None, out))
}

fn read_json(text: &str, file: &str) -> Result<(Option<Algorithm>, Vec<Entry>)> {
    #[derive(serde::Deserialize)]
    struct Doc {
        algorithm: Option<String>,
        ranks: Vec<Row>,
    }
    #[derive(serde::Deserialize)]
    struct Row {
        rank: usize,
        server: String,
        sub_node: String,
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
    Ok((
        algorithm,
        doc.ranks
            .into_iter()
            .map(|r| Entry {
                rank: r.rank,
                server: r.server,
                sub_node: r.sub_node,
                line: None,
            })
            .collect(),
    ))
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

/// Groups consecutive alike steps.
pub fn group_steps(steps: &[super::StepLoad]) -> Vec<StepGroup> {
    let mut out: Vec<StepGroup> = Vec::new();
    for s in steps {
        if let Some(g) = out.last_mut()
            && g.phase == s.phase
            && g.distance.is_none()
            && s.distance.is_none()
            && g.flows == s.flows
            && g.intra_server_flows == s.intra_server_flows
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

fn loads(order: String, steps: &[super::StepLoad]) -> OrderLoads {
    OrderLoads {
        order,
        worst_load: steps.iter().map(|s| s.max_load).max().unwrap_or(0),
        worst_share: steps.iter().filter_map(|s| s.max_share).reduce(f64::max),
        steps: group_steps(steps),
    }
}

/// Verifies `table` (named `order` in the report) step by step on `plan`
/// with the links and switches of `avoid` out of service, and the plan
/// order beside it (skipping avoided switches) unless `table` is the plan
/// order itself.
pub fn verify_report(
    plan: &CheckedPlan,
    table: &RankTable,
    order: String,
    avoid: &[Avoid],
    seed: u64,
    routing: Policy,
) -> Result<VerifyReport> {
    super::check_ranks(plan, &table.ranks)?;
    let steps = super::verify_avoiding(plan, table, avoid, seed, routing)?;
    let ring = table.algorithm.info().rank_schedule == Some(RankSchedule::Ring);
    let plain = if ring { Algorithm::Ring } else { Algorithm::Hd };
    let baseline = super::plan_gpu_ranks(
        plan,
        &Request {
            algorithm: plain,
            ranks: Some(table.ranks.len()),
            avoid: avoid.to_vec(),
            seed,
            ..Request::default()
        },
    )?;
    let plan_order = if baseline.table.ranks == table.ranks {
        None
    } else {
        // The search counts loads under the ECMP hash; another policy
        // routes the plan order again.
        let steps = if routing == Policy::Ecmp {
            baseline.steps
        } else {
            super::verify_avoiding(plan, &baseline.table, avoid, seed, routing)?
        };
        Some(loads(format!("{} in plan order", plain.as_str()), &steps))
    };
    let table_loads = loads(order, &steps);
    Ok(VerifyReport {
        plan: plan.name.clone(),
        design: plan.describe(),
        schedule: if ring { "ring" } else { "halving-doubling" },
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
            format!(
                "{} {} ({} of {})",
                g.phase.as_str(),
                step_range(g),
                g.intra_server_flows,
                g.flows
            )
        })
        .collect();
    if !inside.is_empty() {
        out.push_str(&format!(
            "Inside servers: flows between two GPUs of one server stay off the fabric (NVLink or PCIe) and are on no link above: {}\n",
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

    #[test]
    fn rankfile_and_hostfile() {
        let plan = plan();
        let t = rank_table(&plan, Algorithm::Hd, None).unwrap();
        let rf = to_rankfile(&plan, &t).unwrap();
        // Two sub-nodes per server, one per socket.
        assert!(
            rf.starts_with("rank 0=node1 slot=0:0\nrank 1=node1 slot=1:0\n"),
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
