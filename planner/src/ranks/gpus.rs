//! One rank per GPU on plans whose NICs carry several GPUs (issue 18):
//! the rank tables `planner ranks`, `verify-ranks` and the provisioner
//! use, counted as `simulate` and `iteration` count them
//! ([`Plan::default_ranks`]).
//!
//! A rank table of one rank per NIC ([`plan_ranks`](super::plan_ranks): Algorithm 1, the
//! heuristic or the plan order) is widened: every sub-node of it takes one
//! rank per GPU behind its NIC ([`PlanSubNode::gpus`]), consecutively, in
//! the NIC's GPU order. The k-th rank on a sub-node runs on its k-th GPU
//! ([`rank_gpus`]); a table read back from a file runs each rank on the
//! GPU its `gpu_index` names ([`super::format::read_rank_table`]), which
//! decides which flows inside a server go over NVLink ([`nvlink_flows`]). With G GPUs on every NIC (G a power of two) and X = G
//! times the NIC ranks, halving-doubling's first log2(G) steps join GPUs
//! of one NIC (inside the server, NVLink or PCIe), and every later step
//! pairs GPU k of one NIC with GPU k of another: the NIC-level schedule,
//! carried by every GPU of the NIC at once. [`super::verify`] counts the
//! flows of one step between two NICs as one NIC flow, so the loads (and
//! the lower bound of the NIC-level table) are those of the NIC-level
//! schedule. A plan whose NICs each carry one GPU gets [`plan_ranks`](super::plan_ranks)'s
//! outcome unchanged.

use std::collections::{BTreeSet, HashMap};

use super::RankTable;
use super::optimize::{Fold, Outcome, Request, plan_ranks_on};
use super::schedule::Schedule;
use super::verify::{inside_server, verify_schedule};
use crate::algorithm::Runs;
use crate::checked::CheckedPlan;
use crate::error::{Error, Result};
use crate::network::Network;
use crate::plan::{Plan, PlanServer, PlanSubNode};

/// The rank table of `request` on `plan` with one rank per GPU (see the
/// module documentation); [`plan_ranks`](super::plan_ranks) itself when no NIC carries
/// several GPUs. `request.ranks` counts GPUs.
pub fn plan_gpu_ranks(plan: &CheckedPlan, request: &Request) -> Result<Outcome> {
    let net = plan.network_avoiding(&request.avoid)?;
    plan_gpu_ranks_on(&net, plan, request)
}

/// [`plan_gpu_ranks`] on `net`, the network of `plan` avoiding what
/// `request.avoid` names ([`Network::avoiding`]), built once by a caller
/// that routes more on it ([`plan_ranks_on`]).
pub fn plan_gpu_ranks_on(
    net: &Network<'_>,
    plan: &CheckedPlan,
    request: &Request,
) -> Result<Outcome> {
    if !plan.shares_nics() {
        return plan_ranks_on(net, plan, request);
    }
    let counts: BTreeSet<usize> = plan
        .sub_node_list
        .iter()
        .map(PlanSubNode::gpu_count)
        .collect();
    let uniform = (counts.len() == 1).then(|| counts.first().copied().unwrap_or(1));
    let gpus = plan.default_ranks();
    if let Some(x) = request.ranks.filter(|&x| x > gpus) {
        return Err(Error::parameter(
            "ranks",
            format!(
                "{x} ranks do not fit on the plan's {gpus} GPUs (one rank per GPU behind each NIC); use at most {gpus}"
            ),
        ));
    }
    if uniform.is_none() && request.algorithm.info().runs == Runs::BiGraphMapping {
        return Err(mixed_nics(&counts));
    }
    // With different GPU counts, every NIC in plan order, cut to X GPUs
    // below.
    let nic_ranks = request.ranks.zip(uniform).map(|(x, g)| x.div_ceil(g));
    let nic_request = Request {
        ranks: nic_ranks,
        ..request.clone()
    };
    let nic = plan_ranks_on(net, plan, &nic_request)?;
    let available: usize = nic
        .table
        .ranks
        .iter()
        .map(|&i| plan.sub_node_list[i].gpu_count())
        .sum();
    let x = request.ranks.unwrap_or(available);
    if x > available {
        return Err(Error::parameter(
            "ranks",
            format!(
                "{x} ranks do not fit on the {available} GPUs left after the avoided switches and the unavailable sub-nodes; use at most {available}"
            ),
        ));
    }
    let ranks = widen(plan, &nic.table.ranks, x);
    let nics = nic.table.ranks.len();
    let schedule = request.engine.schedule(request.algorithm, x)?;
    let steps = verify_schedule(net, &ranks, &schedule, request.seed)?;
    let worst_load = steps.iter().map(|s| s.max_load).max().unwrap_or(0);
    // The NIC-level bound holds when the GPU schedule is the NIC-level one
    // carried by every GPU: the same power of two of GPUs on every NIC,
    // all of them ranks.
    let same_schedule = uniform.is_some_and(|g| g.is_power_of_two() && x == g * nics);
    let fold = schedule.fold().and(Fold::of(x));
    let mut notes: Vec<String> = nic
        .notes
        .iter()
        .filter(|n| nic.fold.as_ref().is_none_or(|f| &f.note != *n))
        // The NIC-level table's notes count NICs.
        .map(|n| n.replace(&format!("the {nics} ranks"), &format!("the {nics} NICs")))
        .collect();
    notes.push(gpu_note(x, nics, uniform, same_schedule));
    if let Some(f) = &fold {
        notes.push(f.note.clone());
    }
    let lower_bound = if same_schedule {
        nic.lower_bound
    } else {
        notes.push(
            "no lower bound is computed for this table: its NICs do not all carry the same power of two of ranks, so its steps are not the NIC-level schedule's".to_string(),
        );
        0
    };
    Ok(Outcome {
        table: RankTable {
            algorithm: request.algorithm,
            ranks,
        },
        engine: request.engine,
        method: nic.method,
        steps,
        worst_load,
        lower_bound,
        optimal: same_schedule && worst_load == lower_bound,
        fold,
        notes,
    })
}

/// The refusal of Algorithm 1 on NICs with different GPU counts.
fn mixed_nics(counts: &BTreeSet<usize>) -> Error {
    let list: Vec<String> = counts.iter().map(ToString::to_string).collect();
    Error::parameter(
        "algorithm",
        format!(
            "the plan's NICs carry {} GPUs, and HDRM with one rank per GPU needs the same number behind every NIC; use hd or ring",
            list.join(", ")
        ),
    )
}

/// What one rank per GPU means for this table, for people.
fn gpu_note(x: usize, nics: usize, uniform: Option<usize>, same_schedule: bool) -> String {
    let per = match uniform {
        Some(g) => format!("the {g} GPUs behind each NIC take consecutive ranks"),
        None => "the GPUs behind each NIC take consecutive ranks".to_string(),
    };
    let steps = match uniform {
        Some(g) if same_schedule && g > 1 => {
            let first = match g.trailing_zeros() {
                1 => "first step stays".to_string(),
                k => format!("first {k} steps stay"),
            };
            format!(
                "; halving-doubling's {first} inside each NIC's server (NVLink or PCIe), and every later step joins GPU k of one NIC with GPU k of another"
            )
        }
        _ => String::new(),
    };
    format!(
        "one rank per GPU: {x} ranks on {nics} NICs; {per}{steps}; loads count the flows between two NICs in a step as one (the GPUs share the NIC's link)"
    )
}

/// The table of one rank per NIC `nic_table` widened to one rank per GPU
/// behind each NIC, in its GPU order, cut to `x` ranks.
pub fn widen(plan: &Plan, nic_table: &[usize], x: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(x);
    for &i in nic_table {
        let g = plan.sub_node_list.get(i).map_or(1, PlanSubNode::gpu_count);
        out.extend(std::iter::repeat_n(i, g));
        if out.len() >= x {
            break;
        }
    }
    out.truncate(x);
    out
}

/// The GPU (by `gpu_index` numbering) of every rank of `ranks` (rank ->
/// sub-node): the k-th rank on a sub-node runs on the k-th GPU behind its
/// NIC ([`PlanSubNode::gpus`]); `None` where the plan names no GPU. A
/// sub-node with more ranks than GPUs (refused by the table checks) gives
/// `None` for the extra ones.
pub fn rank_gpus(plan: &Plan, ranks: &[usize]) -> Vec<Option<usize>> {
    let mut next = vec![0usize; plan.sub_node_list.len()];
    ranks
        .iter()
        .map(|&i| {
            let sn = plan.sub_node_list.get(i)?;
            let k = next.get_mut(i)?;
            let gpu = sn.gpu_at(*k);
            *k += 1;
            gpu
        })
        .collect()
}

/// Per step of `schedule` over `ranks` (rank -> sub-node), whose ranks
/// run on `gpus` (rank -> GPU: [`rank_gpus`], or a rank file's
/// `gpu_index`): how many of the flows that stay inside a server (those
/// [`super::verify`] counts as `intra_server_flows`: two ranks of one
/// NIC, or two NICs of one server on a plan whose servers reduce inside)
/// join two GPUs of one NVLink/NVSwitch domain of the server. The others
/// of those flows go through PCIe (the NIC's PCIe switch or the host).
pub fn nvlink_flows(
    plan: &Plan,
    ranks: &[usize],
    gpus: &[Option<usize>],
    schedule: &Schedule,
) -> Vec<usize> {
    // Without an NVLink domain no flow joins two GPUs of one: every
    // count is 0, found without indexing 131,072 sub-nodes' servers.
    if plan.servers.iter().all(|s| s.nvlink.is_empty()) {
        return vec![0; schedule.steps.len()];
    }
    let servers = plan.intra_server_groups();
    let by_name: HashMap<&str, &PlanServer> =
        plan.servers.iter().map(|s| (s.name.as_str(), s)).collect();
    // Per rank: its GPU's domain, as (server name, domain position).
    let domain: Vec<Option<(&str, usize)>> = ranks
        .iter()
        .zip(gpus)
        .map(|(&i, &g)| {
            let sn = plan.sub_node_list.get(i)?;
            let g = g?;
            let server = by_name.get(sn.server.as_str())?;
            let k = server
                .nvlink
                .iter()
                .position(|d| d.gpu_indices.contains(&g))?;
            Some((sn.server.as_str(), k))
        })
        .collect();
    let mut out: Vec<usize> = Vec::with_capacity(schedule.steps.len());
    // Steps with the same flows count alike; each distinct one is counted
    // once (a ring's steps are all one).
    let mut distinct: Vec<usize> = Vec::new();
    for (i, step) in schedule.steps.iter().enumerate() {
        let same = distinct
            .iter()
            .find(|&&j| schedule.steps[j].same_flows(step));
        if let Some(&j) = same {
            out.push(out[j]);
            continue;
        }
        distinct.push(i);
        let count = step
            .flows()
            .filter(|&(s, d)| {
                let (a, b) = (ranks[s], ranks[d]);
                (a == b || inside_server(servers.as_deref(), a, b))
                    && domain[s].is_some()
                    && domain[s] == domain[d]
            })
            .count();
        out.push(count);
    }
    out
}

/// The position of every rank of `ranks` among the ranks on its sub-node
/// (0 for the first rank on a NIC, 1 for the next, ...).
pub fn nic_local_ranks(ranks: &[usize]) -> Vec<usize> {
    let mut next = std::collections::HashMap::new();
    ranks
        .iter()
        .map(|&i| {
            let k = next.entry(i).or_insert(0usize);
            *k += 1;
            *k - 1
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Topology;
    use crate::ranks::format::{read_rank_file, to_csv, to_rankfile};
    use crate::ranks::{Algorithm, check_ranks, plan_ranks, rank_table};

    /// A bundled topology designed as `topology` (the inventory's own
    /// design when `None`).
    fn bundled(name: &str, topology: Option<Topology>) -> CheckedPlan {
        crate::design::bundled(name, topology)
    }

    fn request(algorithm: Algorithm, ranks: Option<usize>) -> Request {
        Request {
            algorithm,
            ranks,
            ..Request::default()
        }
    }

    /// DGX-1-like servers (2 GPUs per NIC) on a BiGraph: HDRM takes one
    /// rank per GPU, the two GPUs of a NIC consecutive, the first step
    /// inside the NIC's server and every later step the NIC-level
    /// Algorithm 1 schedule: one NIC flow per directed link.
    #[test]
    fn hdrm_widens_algorithm1_to_every_gpu() {
        let plan = bundled("dgx1-v100", None);
        assert_eq!(plan.topology, Topology::BiGraph);
        let outcome = plan_gpu_ranks(&plan, &request(Algorithm::Hdrm, None)).unwrap();
        assert_eq!(outcome.table.ranks.len(), 128);
        assert_eq!(outcome.method, "algorithm-1");
        let nic = rank_table(&plan, Algorithm::Hdrm, None).unwrap();
        assert_eq!(outcome.table.ranks, widen(&plan, &nic.ranks, 128));
        for pair in outcome.table.ranks.chunks(2) {
            assert_eq!(pair[0], pair[1]);
        }
        let gpus = rank_gpus(&plan, &outcome.table.ranks);
        for (r, &sn) in outcome.table.ranks.iter().enumerate() {
            assert_eq!(gpus[r], Some(plan.sub_node_list[sn].gpu_indices[r % 2]));
        }
        assert_eq!((outcome.worst_load, outcome.lower_bound), (1, 1));
        assert!(outcome.optimal);
        for s in &outcome.steps {
            if s.distance == Some(1) {
                assert_eq!((s.intra_server_flows, s.max_load), (128, 0), "{s:?}");
            } else {
                assert_eq!(s.shared_nic_flows, 64, "{s:?}");
                assert_eq!((s.max_load, s.access_max_load), (1, 1), "{s:?}");
            }
        }
        assert!(outcome.notes.iter().any(|n| n.contains("one rank per GPU")));
        // Half the GPUs: the first 32 NICs of Algorithm 1, both GPUs each.
        let half = plan_gpu_ranks(&plan, &request(Algorithm::Hdrm, Some(64))).unwrap();
        let nic = rank_table(&plan, Algorithm::Hdrm, Some(32)).unwrap();
        assert_eq!(half.table.ranks, widen(&plan, &nic.ranks, 64));
        assert_eq!(half.worst_load, 1);
    }

    /// Eight GPUs behind one NIC (HiTopKComm's cloud instances): hd's
    /// first three steps never leave a NIC; ring and hd take 128 ranks;
    /// more than the GPUs is refused naming the count.
    #[test]
    fn eight_gpus_on_one_nic() {
        let plan = bundled("cloud-8x16", Some(Topology::FatTree));
        let hd = plan_gpu_ranks(&plan, &request(Algorithm::Hd, None)).unwrap();
        assert_eq!(hd.table.ranks.len(), plan.default_ranks());
        assert_eq!(hd.table.ranks.len(), 128);
        for s in &hd.steps {
            let d = s.distance.unwrap();
            if d < 8 {
                assert_eq!(s.intra_server_flows, 128, "{s:?}");
            } else {
                assert_eq!(s.shared_nic_flows, 128 - 16, "{s:?}");
                assert!(!s.access_overloaded, "{s:?}");
            }
        }
        let ring = plan_gpu_ranks(&plan, &request(Algorithm::Ring, Some(12))).unwrap();
        assert_eq!(ring.table.ranks, {
            let mut v = vec![plan.servers[0].sub_nodes[0]; 8];
            v.extend([plan.servers[1].sub_nodes[0]; 4]);
            v
        });
        let e = plan_gpu_ranks(&plan, &request(Algorithm::Hd, Some(256))).unwrap_err();
        assert!(e.to_string().contains("128 GPUs"), "{e}");
    }

    /// Plans whose NICs carry one GPU each get `plan_ranks`'s outcome.
    #[test]
    fn one_gpu_per_nic_is_unchanged() {
        for plan in [
            crate::network::tests::eflops_plan(),
            bundled("h100-8x32", Some(Topology::FatTree)),
        ] {
            for a in [Algorithm::Hdrm, Algorithm::Hd, Algorithm::Ring] {
                let r = request(a, None);
                assert_eq!(
                    plan_gpu_ranks(&plan, &r).ok(),
                    plan_ranks(&plan, &r).ok(),
                    "{a:?}"
                );
            }
        }
    }

    /// Tables check and read back with one rank per GPU: no more ranks on
    /// a NIC than its GPUs, the CSV carries the GPU index, and the
    /// rankfile gives every rank of a socket its own core.
    #[test]
    fn tables_check_and_read_back_per_gpu() {
        let plan = bundled("dgx1-v100", None);
        let t = plan_gpu_ranks(&plan, &request(Algorithm::Hd, None))
            .unwrap()
            .table;
        check_ranks(&plan, &t.ranks).unwrap();
        let csv = to_csv(&plan, &t);
        assert!(
            csv.starts_with("rank,server,sub_node,gpu,gpu_index,nic,switch,part\n"),
            "{csv}"
        );
        let (_, back) = read_rank_file(&csv, "t.csv", &plan).unwrap();
        assert_eq!(back, t.ranks);
        let mut three = t.ranks[..4].to_vec();
        three[2] = three[0];
        let e = check_ranks(&plan, &three).unwrap_err().to_string();
        assert!(
            e.contains("carries 2 GPUs and already runs ranks 0, 1"),
            "{e}"
        );
        // Every rank bound to the whole socket its GPU hangs from, never
        // one core.
        let rankfile = to_rankfile(&plan, &t).unwrap();
        assert_eq!(rankfile.lines().count(), 128);
        for (line, &sn) in rankfile.lines().zip(&t.ranks) {
            let socket = plan.sub_node_list[sn].socket_index;
            assert!(line.ends_with(&format!(" slot={socket}:*")), "{line}");
        }
    }
}
