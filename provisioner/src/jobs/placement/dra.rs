//! The two DRA policies: DRA sub-nodes and DRA whole servers (the
//! module documentation of [`super`] says how each chooses).

use super::*;

/// The placed ranks and Nodes of a DRA placement's table, each Node's
/// GPUs those its ranks claim, and every rank's devices.
pub(super) fn assemble_dra(
    plan: &CheckedPlan,
    bound_nodes: &[Node],
    view: &ClusterView,
    job: &JobSpec,
    map: &crate::jobs::dra::DeviceMap,
    outcome: &planner::ranks::Outcome,
) -> Result<(
    Vec<PlacedRank>,
    Vec<PlacedNode>,
    Vec<crate::jobs::dra::SubNodeDevices>,
)> {
    let (ranks, mut nodes) = assemble(plan, bound_nodes, view, job, &outcome.table)?;
    for n in &mut nodes {
        n.gpus = n.ranks.len() as u32;
        n.idle_sub_nodes = 0;
    }
    let devices: Vec<crate::jobs::dra::SubNodeDevices> = outcome
        .table
        .ranks
        .iter()
        .filter_map(|i| map.sub_nodes.get(i).cloned())
        .collect();
    if devices.len() != outcome.table.ranks.len() {
        return Err(Error::Placement {
            job: job.name.clone(),
            source: planner::Error::Internal(
                "the rank search placed a rank on a sub-node without devices".to_string(),
            ),
        });
    }
    Ok((ranks, nodes, devices))
}

/// What DRA placement starts from: every sub-node's devices
/// ([`crate::jobs::dra::map_devices`]), the Nodes of the plan the job cannot use
/// and why, and the open ones (Ready, schedulable, publishing devices).
/// A plan whose NICs carry several GPUs is refused.
pub(super) fn dra_nodes<'a>(
    plan: &CheckedPlan,
    bound_nodes: &'a [Node],
    view: &ClusterView,
    job: &JobSpec,
) -> Result<(crate::jobs::dra::DeviceMap, Vec<Unusable>, Vec<&'a str>)> {
    if plan.shares_nics() {
        return Err(Error::Placement {
            job: job.name.clone(),
            source: planner::Error::parameter(
                "placement",
                format!(
                    "mode = \"dra\" claims one GPU and its NIC per rank, and the plan {} has NICs shared by several GPUs (one rank per GPU), whose NIC several ranks' pods would claim; use the whole-Node policy (leave `[placement] mode` out)",
                    plan.name
                ),
            ),
        });
    }
    let map = crate::jobs::dra::map_devices(plan, bound_nodes, &view.dra, &job.placement.profile)?;
    let mut unusable: Vec<Unusable> = Vec::new();
    let mut open_nodes: Vec<&str> = Vec::new();
    for n in bound_nodes {
        let why = match view.node(&n.node) {
            None => Some(
                "no such Node in the cluster (map the server to its Node with --node-map, or join it)"
                    .to_string(),
            ),
            Some(s) if !s.ready => Some("not Ready".to_string()),
            Some(s) if s.unschedulable => Some("cordoned (spec.unschedulable)".to_string()),
            Some(_) => map
                .unusable
                .iter()
                .find(|(node, _)| node == &n.node)
                .map(|(_, why)| why.clone()),
        };
        match why {
            Some(reason) => unusable.push(Unusable {
                node: n.node.clone(),
                server: n.server.clone(),
                reason,
            }),
            None => open_nodes.push(n.node.as_str()),
        }
    }
    Ok((map, unusable, open_nodes))
}

/// DRA placement (see the module documentation).
pub(super) fn place_dra(
    plan: &CheckedPlan,
    bound_nodes: &[Node],
    view: &ClusterView,
    job: &JobSpec,
) -> Result<Placement> {
    let (map, mut unusable, open_nodes) = dra_nodes(plan, bound_nodes, view, job)?;
    // Free sub-nodes by server, and the busy ones of open Nodes by Node.
    let mut free_by_server: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut busy_by_node: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut total = 0;
    for d in map.sub_nodes.values() {
        total += 1;
        if !open_nodes.contains(&d.node.as_str()) {
            continue;
        }
        let sn = &plan.sub_node_list[d.sub_node];
        match &d.busy {
            None => free_by_server
                .entry(sn.server.as_str())
                .or_default()
                .push(d.sub_node),
            Some(why) => busy_by_node
                .entry(d.node.as_str())
                .or_default()
                .push(format!("{}: {why}", sn.id)),
        }
    }
    for n in bound_nodes {
        if let Some(list) = busy_by_node.get(n.node.as_str())
            && list.len() == n.sub_nodes.iter().filter(|s| s.gpu.is_some()).count()
        {
            unusable.push(Unusable {
                node: n.node.clone(),
                server: n.server.clone(),
                reason: format!("every sub-node is taken ({})", list.join("; ")),
            });
        }
    }
    let free: usize = free_by_server.values().map(Vec::len).sum();
    if free < job.ranks {
        return Err(not_enough(plan, job, free, total, &unusable));
    }
    let all_free: Vec<usize> = free_by_server.values().flatten().copied().collect();
    // Fill: the fewest servers, most free sub-nodes first.
    let mut servers: Vec<(&str, &Vec<usize>)> =
        free_by_server.iter().map(|(s, v)| (*s, v)).collect();
    servers.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
    let mut filled = Vec::new();
    for (_, subs) in servers {
        if filled.len() >= job.ranks {
            break;
        }
        filled.extend(subs.iter().copied());
    }
    filled.sort_unstable();
    let search = |offered: &[usize]| {
        let unavailable: Vec<usize> = (0..plan.sub_node_list.len())
            .filter(|i| offered.binary_search(i).is_err())
            .collect();
        plan_ranks(
            plan,
            &Request {
                algorithm: job.algorithm,
                ranks: Some(job.ranks),
                unavailable,
                engine: job.engine,
                ..Request::default()
            },
        )
        .map_err(|source| Error::Placement {
            job: job.name.clone(),
            source,
        })
    };
    let mut offered_spread = all_free.clone();
    offered_spread.sort_unstable();
    let spread = search(&offered_spread)?;
    let fill = if filled == offered_spread {
        None
    } else {
        Some(search(&filled)?)
    };
    let servers_of = |o: &planner::ranks::Outcome| {
        o.table
            .ranks
            .iter()
            .map(|&i| plan.sub_node_list[i].server.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    let choice = |packing: Packing, o: &planner::ranks::Outcome| PackingChoice {
        packing,
        servers: servers_of(o),
        worst_load: o.worst_load,
        lower_bound: o.lower_bound,
        chosen: packing == job.placement.packing,
    };
    let mut packings = vec![choice(Packing::Spread, &spread)];
    match &fill {
        Some(f) => packings.push(choice(Packing::Fill, f)),
        None => packings.push(PackingChoice {
            packing: Packing::Fill,
            ..choice(Packing::Fill, &spread)
        }),
    }
    let outcome = match (job.placement.packing, fill) {
        (Packing::Fill, Some(f)) => f,
        _ => spread,
    };
    let (ranks, nodes, devices) = assemble_dra(plan, bound_nodes, view, job, &map, &outcome)?;
    let mut notes = vec![
        format!(
            "{} ranks on {} sub-nodes of {} Nodes ({}); each rank's pod claims its GPU and NIC with DRA ({}), the other sub-nodes stay free for other jobs",
            job.ranks,
            job.ranks,
            nodes.len(),
            method_words(outcome.method),
            job.placement.profile.name
        ),
        load_note(job, &outcome),
    ];
    notes.push(format!(
        "packing: {}",
        packings
            .iter()
            .map(|p| format!(
                "{} {} server{}, worst load {} (lower bound {}){}",
                match p.packing {
                    Packing::Spread => "spread",
                    Packing::Fill => "fill",
                },
                p.servers,
                if p.servers == 1 { "" } else { "s" },
                p.worst_load,
                p.lower_bound,
                if p.chosen { " [chosen]" } else { "" }
            ))
            .collect::<Vec<_>>()
            .join("; ")
    ));
    finish(
        bound_nodes,
        view,
        job,
        Placed {
            outcome,
            ranks,
            nodes,
            unusable,
            notes,
            devices,
            packings,
        },
    )
}

/// Whole servers under DRA (see the module documentation): a server is
/// free when its Node is open and every GPU's sub-node is free; the
/// fewest free servers, ordered as for whole Nodes
/// ([`whole_server_table`]); each server's pod claims all its GPUs and
/// NICs ([`crate::jobs::dra::server_claim_spec`]).
pub(super) fn place_dra_servers(
    plan: &CheckedPlan,
    bound_nodes: &[Node],
    view: &ClusterView,
    job: &JobSpec,
) -> Result<Placement> {
    let (map, mut unusable, open_nodes) = dra_nodes(plan, bound_nodes, view, job)?;
    let by_server = gpus_by_server(plan);
    let per_server = server_size(job, &by_server)?;
    let servers = job.ranks / per_server;
    if 2 * per_server > crate::jobs::dra::CLAIM_MAX_DEVICES {
        return Err(Error::Placement {
            job: job.name.clone(),
            source: planner::Error::parameter(
                "placement",
                format!(
                    "unit server claims every GPU and NIC of a server in one ResourceClaim, {} devices on the plan's servers of {per_server} GPUs, and Kubernetes 1.34 allocates at most {} to one claim; use unit = \"gpu\" in [placement]",
                    2 * per_server,
                    crate::jobs::dra::CLAIM_MAX_DEVICES
                ),
            ),
        });
    }
    if job.queue.is_some()
        && job.failure.gang == crate::jobs::job::Gang::JobSet
        && servers > crate::jobs::job::KUEUE_MAX_POD_SETS
    {
        return Err(Error::Placement {
            job: job.name.clone(),
            source: planner::Error::parameter(
                "queue",
                format!(
                    "Kueue v0.19 admits a JobSet with at most {} replicated Jobs, and this job has one per server: {servers} servers of {per_server} GPUs for {} ranks; ask for at most {} ranks, or submit without a queue",
                    crate::jobs::job::KUEUE_MAX_POD_SETS,
                    job.ranks,
                    crate::jobs::job::KUEUE_MAX_POD_SETS * per_server
                ),
            ),
        });
    }
    let mut free: Vec<&str> = Vec::new();
    for n in bound_nodes {
        if !open_nodes.contains(&n.node.as_str()) {
            continue;
        }
        let gpus = by_server
            .get(n.server.as_str())
            .map_or(&[][..], Vec::as_slice);
        // The taken sub-nodes, grouped by why (a template holds many).
        let mut taken: Vec<(String, Vec<&str>)> = Vec::new();
        for &i in gpus {
            let why = match map.sub_nodes.get(&i) {
                None => "no devices".to_string(),
                Some(d) => match &d.busy {
                    None => continue,
                    Some(why) => why.clone(),
                },
            };
            let id = plan.sub_node_list[i].id.as_str();
            match taken.iter_mut().find(|(w, _)| *w == why) {
                Some((_, ids)) => ids.push(id),
                None => taken.push((why, vec![id])),
            }
        }
        let count: usize = taken.iter().map(|(_, ids)| ids.len()).sum();
        if gpus.len() == per_server && count == 0 {
            free.push(n.server.as_str());
        } else if count > 0 {
            unusable.push(Unusable {
                node: n.node.clone(),
                server: n.server.clone(),
                reason: format!(
                    "unit server needs every sub-node free, and {count} of {} are taken ({})",
                    gpus.len(),
                    taken
                        .iter()
                        .map(|(why, ids)| format!("{}: {why}", ids.join(", ")))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            });
        }
    }
    let (outcome, order_method) =
        whole_server_table(plan, job, &by_server, &free, per_server, &unusable)?;
    let (ranks, nodes, devices) = assemble_dra(plan, bound_nodes, view, job, &map, &outcome)?;
    let how = format!(
        "; each server's pod claims its {per_server} GPUs and {per_server} NICs with DRA ({}) in one ResourceClaim, each NIC under its GPU's PCIe root, and starts one process per GPU",
        job.placement.profile.name
    );
    let notes = server_notes(job, &outcome, order_method, servers, per_server, &how);
    finish(
        bound_nodes,
        view,
        job,
        Placed {
            outcome,
            ranks,
            nodes,
            unusable,
            notes,
            devices,
            packings: Vec::new(),
        },
    )
}
