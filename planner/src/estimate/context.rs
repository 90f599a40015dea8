//! A plan, an algorithm and its rank table, ready for any message size:
//! the closed form, the send schedule and the simulated time of one
//! allreduce, with the routes of its sends.

use super::{
    Algorithm, Channels, Estimate, Method, Options, PacketStats, PacketStep, Params, ScheduleStats,
    SendSchedule, StepSummary, bandwidths, check_size, fast, intra, models, packet, params,
    schedules, sim,
};
use std::collections::HashMap;

use serde::Serialize;

use crate::algorithm::RankSchedule;
use crate::checked::CheckedPlan;
use crate::error::{Error, Problem, Result};
use crate::network::{Leg, Network, Policy, Route};
use crate::plan::{Tier, Topology};
use crate::ranks::verify::flow_id;
use crate::ranks::{self, Link};
use schedules::{Kind, NONE, Shape};
use sim::{FlowRoute, Routes};

/// The rank table the estimates use: `planner ranks`'s for halving-doubling
/// over a rank count that is not a power of two (the table
/// [`ranks::plan_ranks`] chooses for the folded schedule, with its default
/// solver and seed), otherwise [`ranks::rank_table`] (Algorithm 1 for
/// HDRM, plan order for the others, which is what `planner ranks` gives
/// there too). HDRM off a BiGraph keeps `rank_table`'s refusal.
fn rank_order(plan: &CheckedPlan, order: Algorithm, count: Option<usize>) -> Result<Vec<usize>> {
    let x = count.unwrap_or(plan.sub_node_list.len());
    let folds = x > 0 && !x.is_power_of_two();
    let maps = order.info().rank_schedule == Some(RankSchedule::HalvingDoubling)
        && order.runs_on(plan.topology);
    if folds && maps {
        let request = ranks::Request {
            algorithm: order,
            ranks: Some(x),
            ..ranks::Request::default()
        };
        return Ok(ranks::plan_ranks(plan, &request)?.table.ranks);
    }
    Ok(ranks::rank_table(plan, order, count)?.ranks)
}

/// How a level of `size` ranks per group runs in `blueconnect`
/// (halving-doubling where the groups are a power of two) or `2d`
/// (`ring_only`: rings everywhere).
fn level_kind(ring_only: bool, size: usize) -> Kind {
    if !ring_only && size.is_power_of_two() {
        Kind::HalvingDoubling
    } else {
        Kind::Ring
    }
}

/// The levels of a hierarchical decomposition.
#[derive(Debug, Clone)]
struct Levels {
    groups: Vec<Vec<Vec<u32>>>,
    alpha: Vec<f64>,
    w: Vec<f64>,
}

/// A plan, an algorithm and its rank table, ready for any message size.
#[derive(Debug)]
pub(super) struct Context<'a> {
    plan: &'a CheckedPlan,
    algorithm: Algorithm,
    params: Params,
    net: Network<'a>,
    /// Rank -> sub-node.
    pub(super) table: Vec<usize>,
    /// Capacity of every directed link, bytes/µs.
    pub(super) caps: Vec<f64>,
    /// Switch of every rank.
    switch: Vec<u32>,
    /// The intra-server tier (one rank per GPU, NVLink links), when the
    /// plan has one.
    tier: Option<intra::Tier>,
    /// Slowest link a flow of these ranks can take, bytes/µs.
    w: f64,
    /// Slowest fabric link (NIC or inter-switch) of these ranks, bytes/µs
    /// (`w` without the NVLink links).
    fabric_w: f64,
    /// Uplink bandwidth per rank of the most loaded switch, bytes/µs.
    share: f64,
    three_tier: bool,
    /// The closed form's (α, β) of each halving-doubling step and of the
    /// fold, computed at the first size.
    step_costs: std::sync::OnceLock<Vec<(f64, f64)>>,
    /// The closed form's hierarchical levels, computed at the first size.
    level_costs: std::sync::OnceLock<Vec<models::Level>>,
    /// `nccl-tree`'s per-hop latency and β (in its wave, with every
    /// tree's flows), computed at the first size.
    tree_costs: std::sync::OnceLock<Vec<(f64, f64, f64)>>,
}

impl<'a> Context<'a> {
    pub(super) fn new(
        plan: &'a CheckedPlan,
        algorithm: Algorithm,
        ranks: Option<usize>,
        params: &Params,
    ) -> Result<Self> {
        if params.channels == Channels::Pair && !algorithm.is_tree() {
            return Err(Error::parameter(
                "param",
                format!(
                    "channels=pair gives each tree edge a channel of its own (C-Cube's DGX-1), which {} does not take: use channels=fabric, or tree, pipelined-tree, double-tree, overlapped-tree or overlapped-double-tree",
                    algorithm.as_str()
                ),
            ));
        }
        let net = Network::new(plan, plan.source())?;
        let (table, tier) = if intra::present(plan) {
            let order = rank_order(plan, algorithm.info().rank_table, None)?;
            let (table, tier) = intra::Tier::build(plan, &order, ranks, net.link_count())?;
            (table, Some(tier))
        } else {
            (rank_order(plan, algorithm.info().rank_table, ranks)?, None)
        };
        let mut problems = Vec::new();
        let mut caps = Vec::with_capacity(net.link_count());
        for id in 0..net.link_count() {
            let gbps = match net.link(id) {
                Some(Link::Up { sub_node, port } | Link::Down { sub_node, port }) => {
                    let sn = &plan.sub_node_list[sub_node];
                    let port = net
                        .switch_in(usize::from(port), sub_node)
                        .map_or(sn.nic_gbps, |s| plan.switch_list[s].port_gbps);
                    sn.nic_gbps.min(port)
                }
                Some(Link::InterSwitch { from, to, .. }) => plan.switch_list[from]
                    .port_gbps
                    .min(plan.switch_list[to].port_gbps),
                None => 0,
            };
            if gbps == 0 && params.link_gbps.is_none() {
                problems.push(Problem::at(
                    None,
                    net.describe(id),
                    "the link has a speed of 0 Gbps",
                    "set the NIC's speed_gbps and the switch's port_gbps, or give the parameter link_gbps=100",
                ));
            }
            caps.push(params::bytes_per_us(
                params.link_gbps.unwrap_or(f64::from(gbps)),
            ));
        }
        if !problems.is_empty() {
            problems.truncate(10);
            return Err(plan.refusal(problems));
        }
        let switch: Vec<u32> = table
            .iter()
            .map(|&sn| net.switch_of(sn).map_or(0, |s| s as u32))
            .collect();
        let mut on_switch = vec![0usize; plan.switch_list.len()];
        for &s in &switch {
            on_switch[s as usize] += 1;
        }
        let mut w = f64::INFINITY;
        for &sn in &table {
            w = w.min(caps[net.up_link(sn)]).min(caps[net.down_link(sn)]);
        }
        let mut uplink = vec![0.0f64; plan.switch_list.len()];
        let spans = on_switch.iter().filter(|&&c| c > 0).count() > 1;
        for id in net.inter_switch_links() {
            if let Some(Link::InterSwitch { from, .. }) = net.link(id) {
                uplink[from] += caps[id];
                if spans {
                    w = w.min(caps[id]);
                }
            }
        }
        let mut share = if spans {
            (0..plan.switch_list.len())
                .filter(|&s| on_switch[s] > 0)
                .map(|s| uplink[s] / on_switch[s] as f64)
                .fold(f64::INFINITY, f64::min)
        } else {
            f64::INFINITY
        };
        let fabric_w = w;
        if let Some(tier) = &tier {
            // The GPUs sharing a NIC share its links when all of them
            // send off the server at once.
            let mut on_nic = vec![0usize; plan.sub_node_list.len()];
            for &sn in &table {
                on_nic[sn] += 1;
            }
            for (sn, &k) in on_nic.iter().enumerate().filter(|(_, k)| **k > 1) {
                let nic = caps[net.up_link(sn)].min(caps[net.down_link(sn)]);
                share = share.min(nic / k as f64);
            }
            w = w.min(tier.nv_w);
            caps.extend_from_slice(&tier.caps);
        }
        let three_tier = plan
            .switch_list
            .iter()
            .any(|s| matches!(s.part_or_tier, Tier::Edge | Tier::Aggregation | Tier::Core));
        Ok(Self {
            plan,
            algorithm,
            params: params.clone(),
            net,
            table,
            caps,
            switch,
            tier,
            w,
            fabric_w,
            share,
            three_tier,
            step_costs: std::sync::OnceLock::new(),
            level_costs: std::sync::OnceLock::new(),
            tree_costs: std::sync::OnceLock::new(),
        })
    }

    fn ranks(&self) -> usize {
        self.table.len()
    }

    /// Switches on the route between two switches of the plan.
    fn switches_between(&self, a: u32, b: u32) -> usize {
        if a == b {
            return 1;
        }
        let (sa, sb) = (
            &self.plan.switch_list[a as usize],
            &self.plan.switch_list[b as usize],
        );
        match self.plan.topology {
            Topology::BiGraph if sa.part_or_tier != sb.part_or_tier => 2,
            Topology::BiGraph => 3,
            Topology::FatTree if self.three_tier && sa.pod != sb.pod => 5,
            Topology::FatTree | Topology::RailOptimized | Topology::Hpn => 3,
        }
    }

    /// The latency of the longest route among rank pairs.
    fn alpha_of(&self, pairs: impl Iterator<Item = (usize, usize)>) -> f64 {
        let worst = pairs
            .map(|(a, b)| match &self.tier {
                Some(t) if t.same_domain(a, b) => 1,
                _ => self.switches_between(self.switch[a], self.switch[b]),
            })
            .max()
            .unwrap_or(1);
        self.params.latency_us(worst)
    }

    fn beta0(&self) -> f64 {
        1.0 / self.w
    }

    fn beta1(&self) -> f64 {
        1.0 / self.w.min(self.share)
    }

    /// β of a step whose pairs all stay inside NVLink domains, with the
    /// intra-server tier.
    fn nvlink_beta(&self, pairs: &[(usize, usize)]) -> Option<f64> {
        let t = self.tier.as_ref()?;
        pairs
            .iter()
            .all(|&(a, b)| t.same_domain(a, b))
            .then(|| 1.0 / t.nv_w)
    }

    /// β of a step in which every pair of `pairs` sends at once, on a
    /// plan without the intra-server tier: each flow split evenly over its
    /// equal-cost paths (ideal balancing, what `--routing spray` does),
    /// the most flows' worth on one directed link over that link's
    /// capacity, µs per byte. A BiGraph has one link between an upper and
    /// a lower switch, so when the M ranks of a switch all talk to the
    /// ranks of one switch of the other part (halving-doubling in plan
    /// order, a ring across switches) M flows share it, which the
    /// switch's uplinks per rank (`share`) do not show.
    fn spread_beta(&self, pairs: &[(usize, usize)]) -> Result<f64> {
        let mut load = vec![0.0f64; self.caps.len()];
        // Every flow loads its NIC links; the flows between two switches
        // share those switches' equal-cost paths, which are routed once
        // per switch pair (a 3-tier fat-tree has a thousand between pods).
        let mut between: Vec<(u32, u32, usize, usize)> = Vec::new();
        for &(a, b) in pairs {
            let (s, d) = (self.table[a], self.table[b]);
            if s == d {
                continue;
            }
            load[self.net.up_link(s)] += 1.0;
            load[self.net.down_link(d)] += 1.0;
            if self.switch[a] != self.switch[b] {
                between.push((self.switch[a], self.switch[b], a, b));
            }
        }
        between.sort_unstable();
        let mut paths = Vec::new();
        for run in between.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
            let (_, _, a, b) = run[0];
            paths.clear();
            self.net.flow_routes(
                Policy::Spray,
                self.table[a],
                self.table[b],
                flow_id(a, b),
                0,
                &mut paths,
            )?;
            let each = run.len() as f64 / paths.len().max(1) as f64;
            for r in &paths {
                // The links between the NIC's up and down link.
                let links = r.links();
                for &l in links.get(1..links.len().saturating_sub(1)).unwrap_or(&[]) {
                    load[l] += each;
                }
            }
        }
        Ok(load
            .iter()
            .zip(&self.caps)
            .map(|(&x, &c)| x / c)
            .fold(0.0, f64::max))
    }

    /// The bandwidth per rank of a level of a hierarchical decomposition
    /// without the intra-server tier, from [`Context::spread_beta`] of its
    /// steps: a ring's steps all have the same pairs; a halving-doubling
    /// level's step at distance `2^k` moves `1 / 2^(k+1)` of the level's
    /// bytes, so one β weighted by those shares gives the level's time
    /// exactly.
    fn level_w(&self, groups: &[Vec<u32>], kind: Kind) -> Result<f64> {
        let g = groups.first().map_or(0, Vec::len);
        if g < 2 {
            return Ok(self.w);
        }
        let pairs_at = |d: usize| -> Vec<(usize, usize)> {
            groups
                .iter()
                .flat_map(|m| {
                    (0..g).map(move |i| {
                        let j = match kind {
                            Kind::Ring => (i + d) % g,
                            Kind::HalvingDoubling => i ^ d,
                        };
                        (m[i] as usize, m[j] as usize)
                    })
                })
                .collect()
        };
        let beta = match kind {
            Kind::Ring => self.spread_beta(&pairs_at(1))?,
            Kind::HalvingDoubling => {
                let mut sum = 0.0;
                for k in 0..g.ilog2() {
                    let share = 0.5f64.powi(k as i32 + 1);
                    sum += share * self.spread_beta(&pairs_at(1 << k))?;
                }
                let gf = g as f64;
                sum / ((gf - 1.0) / gf)
            }
        };
        Ok(if beta > 0.0 { 1.0 / beta } else { self.w })
    }

    /// (α, β) of each halving-doubling step over the `core` ranks, then of
    /// the fold when there are more ranks: β from NVLink inside a domain,
    /// from the route model without the tier (`spread_beta`), otherwise
    /// `b1`.
    fn hd_step_costs(&self, core: usize, b0: f64, b1: f64) -> Result<Vec<(f64, f64)>> {
        let beta_of = |pairs: &[(usize, usize)]| -> Result<f64> {
            Ok(match self.nvlink_beta(pairs) {
                Some(b) => b,
                None if self.tier.is_none() => self.spread_beta(pairs)?.max(b0),
                None => b1,
            })
        };
        let mut steps = Vec::new();
        for s in 0..core.ilog2() {
            let d = 1usize << s;
            let pairs: Vec<(usize, usize)> = (0..core).map(|r| (r, r ^ d)).collect();
            steps.push((self.alpha_of(pairs.iter().copied()), beta_of(&pairs)?));
        }
        let p = self.ranks();
        if core < p {
            let pairs: Vec<(usize, usize)> = (core..p).map(|r| (r, r - core)).collect();
            steps.push((self.alpha_of(pairs.iter().copied()), beta_of(&pairs)?));
        }
        Ok(steps)
    }

    /// The levels of `blueconnect` (`2d` when `ring_only`) with their
    /// bandwidth: without the tier the level's steps on their paths,
    /// ideally balanced, as the schedule runs them (`level_w`).
    fn hierarchical_levels(&self, ring_only: bool) -> Result<Vec<models::Level>> {
        let levels = self.levels(!ring_only)?;
        let mut lv = Vec::with_capacity(levels.groups.len());
        for (i, groups) in levels.groups.iter().enumerate() {
            let size = groups[0].len();
            let w = if self.tier.is_none() {
                self.level_w(groups, level_kind(ring_only, size))?
                    .min(self.w)
            } else {
                levels.w[i]
            };
            lv.push(models::Level {
                p: size,
                alpha: levels.alpha[i],
                w,
            });
        }
        Ok(lv)
    }

    /// Tree edges `(child, parent)` of the given parent arrays.
    fn tree_alpha(&self, trees: &[Vec<u32>]) -> f64 {
        self.alpha_of(trees.iter().flat_map(|t| {
            t.iter()
                .enumerate()
                .filter(|&(_, &up)| up != NONE)
                .map(|(r, &up)| (r, up as usize))
        }))
    }

    /// The levels of a topology-aware decomposition: ranks under one
    /// switch, then (3-tier fat-trees, `deep`) the same position under the
    /// switches of one pod, then across pods; otherwise the same position
    /// under every switch. With the intra-server tier, level 0 is the
    /// GPUs of one server at their NVLink speed and level 1 the same
    /// position on every server at the fabric's speed per rank.
    fn levels(&self, deep: bool) -> Result<Levels> {
        let (key, keys): (&[u32], usize) = match &self.tier {
            Some(t) => (&t.server, self.plan.servers.len()),
            None => (&self.switch, self.plan.switch_list.len()),
        };
        let deep = deep && self.tier.is_none();
        let groups = self.groups_of(key, keys, self.tier.is_some())?;
        let p0 = groups[0].1.len();
        let w0 = match &self.tier {
            // Every server's ranks in one NVLink domain.
            Some(t) if t.all_nvlink => t.nv_w,
            // Some GPUs of a server talk through their NIC or the fabric.
            Some(_) => self.fabric_w.min(self.share),
            None => self.w,
        };
        let mut out = Levels {
            groups: vec![groups.iter().map(|g| g.1.clone()).collect()],
            alpha: vec![self.params.latency_us(1)],
            w: vec![w0],
        };
        let upper_w = self.fabric_w.min(self.share);
        let pods: Vec<Vec<usize>> = if deep && self.three_tier {
            let mut pods: Vec<(Option<usize>, Vec<usize>)> = Vec::new();
            for (k, (s, _)) in groups.iter().enumerate() {
                let pod = self.plan.switch_list[*s as usize].pod;
                match pods.iter_mut().find(|(q, _)| *q == pod) {
                    Some((_, members)) => members.push(k),
                    None => pods.push((pod, vec![k])),
                }
            }
            pods.into_iter().map(|(_, m)| m).collect()
        } else {
            vec![(0..groups.len()).collect()]
        };
        let per_pod = pods[0].len();
        if pods.iter().any(|m| m.len() != per_pod) {
            return Err(self.irregular(
                "the ranks' switches are spread unevenly over the pods, and the decomposition needs the same number in every pod".to_string(),
                p0,
                false,
            ));
        }
        // Same position under the switches of a pod.
        let mut level1 = Vec::new();
        for members in &pods {
            for j in 0..p0 {
                level1.push(
                    members
                        .iter()
                        .map(|&k| groups[k].1[j])
                        .collect::<Vec<u32>>(),
                );
            }
        }
        let alpha1 = self.group_alpha(&level1);
        out.groups.push(level1);
        out.alpha.push(alpha1);
        out.w.push(upper_w);
        if pods.len() > 1 {
            let mut level2 = Vec::new();
            for q in 0..per_pod {
                for j in 0..p0 {
                    level2.push(pods.iter().map(|m| groups[m[q]].1[j]).collect::<Vec<u32>>());
                }
            }
            let alpha2 = self.group_alpha(&level2);
            out.groups.push(level2);
            out.alpha.push(alpha2);
            out.w.push(upper_w);
        }
        Ok(out)
    }

    /// The ranks grouped by `key` (a switch or server index below
    /// `keys` per rank), in rank order, each group with its key; refused
    /// unless every group has as many ranks (`servers`: the groups are
    /// servers, otherwise switches).
    fn groups_of(&self, key: &[u32], keys: usize, servers: bool) -> Result<Vec<(u32, Vec<u32>)>> {
        let p = self.ranks();
        let mut groups: Vec<(u32, Vec<u32>)> = Vec::new();
        let mut seen = vec![usize::MAX; keys];
        for (r, &s) in key.iter().enumerate() {
            match seen[s as usize] {
                usize::MAX => {
                    seen[s as usize] = groups.len();
                    groups.push((s, vec![r as u32]));
                }
                g => groups[g].1.push(r as u32),
            }
        }
        let sizes = groups.iter().map(|g| g.1.len());
        let (lo, hi) = (sizes.clone().min().unwrap_or(0), sizes.max().unwrap_or(0));
        if lo != hi || groups.is_empty() {
            return Err(self.irregular(
                format!(
                    "the {p} ranks sit {lo} to {hi} {}, and the decomposition needs the same number {}",
                    if servers { "on a server" } else { "under a switch" },
                    if servers { "on every server" } else { "under every switch" },
                ),
                hi,
                servers,
            ));
        }
        Ok(groups)
    }

    /// The ranks of every server, in rank order, for `nccl-ring` and
    /// `nccl-tree`: position j of a server is its j-th NIC in plan order
    /// (rail j on a rail-optimized fabric). Without the intra-server tier
    /// a sub-node outside every server is a server of its own.
    fn server_groups(&self) -> Result<Vec<Vec<u32>>> {
        let key: Vec<u32> = match &self.tier {
            Some(t) => t.server.clone(),
            None => {
                let servers = self.plan.servers.len();
                let mut server_of: Vec<u32> = (0..self.plan.sub_node_list.len())
                    .map(|sn| (servers + sn) as u32)
                    .collect();
                for (i, s) in self.plan.servers.iter().enumerate() {
                    for &sn in &s.sub_nodes {
                        server_of[sn] = i as u32;
                    }
                }
                self.table.iter().map(|&sn| server_of[sn]).collect()
            }
        };
        let keys = self.plan.servers.len() + self.plan.sub_node_list.len();
        Ok(self
            .groups_of(&key, keys, true)?
            .into_iter()
            .map(|(_, g)| g)
            .collect())
    }

    /// The closed form of `nccl-ring` (see [`schedules::nccl_rings`]) over
    /// the ranks of `servers`, `nf` bytes: C = g rings of `nf / C` bytes
    /// over P = m·g ranks, each ring step moving N/(CP) bytes. An NVLink
    /// hop (α of one switch) carries one flow of every ring on each GPU's
    /// link, `C·N/(CP)` at the NVLink speed; a rail hop one flow of its
    /// ring at the fabric's speed per rank. Each ring step waits for the
    /// slower of the two (the rings and hops run at once), and the first
    /// rail hop waits for the first NVLink hand-over. Without the tier
    /// every hop crosses the fabric, and both cost one step of all the
    /// rings' flows at once on their paths, ideally balanced. γ: a
    /// reduce-scatter step's NVLink hop reduces its N/(CP) bytes first.
    fn nccl_ring_closed_form(&self, servers: &[Vec<u32>], nf: f64) -> Result<f64> {
        let (m, g) = (servers.len(), servers[0].len());
        let p = m * g;
        if p <= 1 {
            return Ok(0.0);
        }
        let (c, pf) = (g as f64, p as f64);
        let b = nf / (c * pf);
        // Rail hops: GPU c of server s to GPU c of server s + 1.
        let rail_pairs = || {
            (0..m).flat_map(move |s| {
                (0..g).map(move |j| (servers[s][j] as usize, servers[(s + 1) % m][j] as usize))
            })
        };
        let (t_in, t_out) = match &self.tier {
            Some(t) => {
                let w0 = if t.all_nvlink {
                    t.nv_w
                } else {
                    self.fabric_w.min(self.share)
                };
                let t_in = self.params.latency_us(1) + c * b / w0;
                let t_out = self.alpha_of(rail_pairs()) + b / self.fabric_w.min(self.share);
                (t_in, t_out)
            }
            None => {
                // Every rank's hop in every ring, and the hand-overs.
                let mut pairs = Vec::with_capacity(p * g + m * g);
                for r in 0..g {
                    for (s, server) in servers.iter().enumerate() {
                        for k in 0..g {
                            let from = server[(r + k) % g] as usize;
                            let to = if k + 1 < g {
                                server[(r + k + 1) % g] as usize
                            } else if m > 1 && g > 1 {
                                pairs.push((server[r] as usize, servers[(s + 1) % m][r] as usize));
                                server[r] as usize
                            } else {
                                servers[(s + 1) % m][r] as usize
                            };
                            pairs.push((from, to));
                        }
                    }
                }
                let beta = self.spread_beta(&pairs)?.max(self.beta0());
                let t = self.alpha_of(pairs.into_iter()) + b * beta;
                (t, t)
            }
        };
        // A reduce-scatter send first reduces what it received (γ), the
        // all-gather's do not; the rail hop forwards without reducing.
        let reduce = self.params.gamma_us() * b;
        let step = |t_in: f64| match (m > 1, g > 1) {
            (true, true) => t_in.max(t_out),
            (false, _) => t_in,
            (true, false) => t_out,
        };
        let first = if m > 1 && g > 1 { t_in } else { 0.0 };
        Ok((pf - 1.0) * (step(t_in + reduce) + step(t_in)) + first)
    }

    /// Per pair of ranks, the latency of its flow and its β (µs per byte)
    /// when the pairs of its wave (`wave`, one per pair) send at once, and
    /// when every pair of `pairs` does: each flow split evenly over its
    /// equal-cost paths (`spray`, ideal balancing) on the routes the
    /// simulation takes (NVLink links inside a server with the tier), its
    /// β the most loaded link on its paths, the link's flows over its
    /// capacity.
    fn shared_costs(&self, pairs: &[(usize, usize)], wave: &[u32]) -> Result<Vec<(f64, f64, f64)>> {
        let none = SendSchedule::default();
        let mut routes = PlanRoutes::new(self, &none, 0, Policy::Spray);
        // Every pair's paths, listed once.
        let mut listed = Vec::new();
        let mut spans = Vec::with_capacity(pairs.len());
        for &(a, b) in pairs {
            let start = listed.len();
            routes.paths_between(a, b as u32, &mut listed)?;
            spans.push(start..listed.len());
        }
        let paths = |i: usize| &listed[spans[i].clone()];
        // The links of pair i with its share of each.
        let add = |load: &mut [f64], i: usize, touched: &mut Vec<u32>| {
            let ps = paths(i);
            for &l in ps.iter().flat_map(|r| r.links()) {
                touched.push(l);
                load[l as usize] += 1.0 / ps.len() as f64;
            }
        };
        let beta = |load: &[f64], i: usize| {
            paths(i)
                .iter()
                .flat_map(|r| r.links())
                .map(|&l| load[l as usize] / self.caps[l as usize])
                .fold(0.0, f64::max)
        };
        let mut all = vec![0.0f64; self.caps.len()];
        let mut touched = Vec::new();
        for i in 0..pairs.len() {
            add(&mut all, i, &mut touched);
        }
        let mut out: Vec<(f64, f64, f64)> = (0..pairs.len())
            .map(|i| {
                let latency = paths(i).iter().map(|r| r.latency).fold(0.0, f64::max);
                (latency, 0.0, beta(&all, i))
            })
            .collect();
        // Wave by wave, one load array cleared after each.
        let mut order: Vec<usize> = (0..pairs.len()).collect();
        order.sort_by_key(|&i| wave[i]);
        let mut load = vec![0.0f64; self.caps.len()];
        for group in order.chunk_by(|&x, &y| wave[x] == wave[y]) {
            touched.clear();
            for &i in group {
                add(&mut load, i, &mut touched);
            }
            for &i in group {
                out[i].1 = beta(&load, i);
            }
            for &l in &touched {
                load[l as usize] = 0.0;
            }
        }
        Ok(out)
    }

    /// The chunks per tree of `nccl-tree` for `n` bytes over `servers`:
    /// each tree's part in NCCL's chunks ([`schedules::nccl_tree_chunk`],
    /// with NCCL's depth estimate `g - 1 + ⌊log2 m⌋` for m servers of g
    /// ranks).
    fn nccl_tree_chunks(servers: &[Vec<u32>], n: u64) -> usize {
        let (m, g) = (servers.len(), servers.first().map_or(1, Vec::len));
        let trees = 2 * g.max(1);
        let depth = g.saturating_sub(1) + m.max(1).ilog2() as usize;
        let chunk = schedules::nccl_tree_chunk(n, trees, depth);
        let part = n.div_ceil(trees as u64);
        usize::try_from(part.div_ceil(chunk))
            .unwrap_or(usize::MAX)
            .max(1)
    }

    /// The closed form of `nccl-tree` (see [`schedules::nccl_trees`]) over
    /// the ranks of `servers`, `nf` bytes in `k` chunks per tree: with
    /// chunks of b = N/(2CK) bytes, every edge of every tree carries one
    /// chunk up and one down at a time. The first chunk of every tree
    /// climbs from the deepest ranks and comes back down to every rank in
    /// waves, as the step-synchronous mode numbers the steps (up: the
    /// senders of one height in every tree at once; down: the receivers of
    /// one depth), each hop costing its latency, b times its β with the
    /// other flows of its wave ([`Self::shared_costs`]) and, going up, the
    /// reduction of what the sender's children sent (γ per byte). The
    /// other K - 1 chunks follow one period apart, the period the slowest
    /// hop with every tree's flows at once (a chain hop its share of the
    /// GPU's NVLink links, a tree hop its share of the rail GPU's NIC).
    fn nccl_tree_closed_form(&self, servers: &[Vec<u32>], nf: f64, k: usize) -> Result<f64> {
        if self.ranks() <= 1 {
            return Ok(0.0);
        }
        let parents = schedules::nccl_tree_parents(servers)?;
        let b = nf / (parents.len() * k.max(1)) as f64;
        let gamma = self.params.gamma_us() * b;
        let mut shapes = Vec::with_capacity(parents.len());
        let (mut pairs, mut wave) = (Vec::new(), Vec::new());
        for parent in &parents {
            let shape = schedules::shape(parent)?;
            for (r, &up) in parent.iter().enumerate().filter(|(_, u)| **u != NONE) {
                pairs.extend([(r, up as usize), (up as usize, r)]);
                wave.extend([2 * shape.height[r], 2 * shape.depth[r] + 1]);
            }
            shapes.push(shape);
        }
        // The routes and their sharing do not depend on the size.
        let costs = match self.tree_costs.get() {
            Some(costs) => costs,
            None => {
                let costs = self.shared_costs(&pairs, &wave)?;
                self.tree_costs.get_or_init(|| costs)
            }
        };
        let mut period = 0.0f64;
        let mut fill = 0.0f64;
        let mut next = costs.iter();
        for (parent, shape) in parents.iter().zip(&shapes) {
            let kids = |v: usize| shape.children[v].len() as f64;
            let mut up_hop = vec![0.0; parent.len()];
            let mut down_hop = vec![0.0; parent.len()];
            for (r, _) in parent.iter().enumerate().filter(|(_, u)| **u != NONE) {
                let (up, down) = match (next.next(), next.next()) {
                    (Some(&u), Some(&d)) => (u, d),
                    _ => return Err(Error::Internal("a tree edge without its cost".to_string())),
                };
                let reduce = gamma * kids(r);
                up_hop[r] = up.0 + b * up.1 + reduce;
                down_hop[r] = down.0 + b * down.1;
                period = period
                    .max(up.0 + b * up.2 + reduce)
                    .max(down.0 + b * down.2);
            }
            // The first chunk: up by height, down by depth.
            let mut order: Vec<usize> = (0..parent.len()).collect();
            order.sort_by_key(|&v| shape.height[v]);
            let mut ready = vec![0.0f64; parent.len()];
            for &v in &order {
                if parent[v] != NONE {
                    let up = parent[v] as usize;
                    ready[up] = ready[up].max(ready[v] + up_hop[v]);
                }
            }
            let root = shape.root;
            ready[root] += gamma * kids(root);
            order.sort_by_key(|&v| shape.depth[v]);
            for &v in &order {
                if parent[v] != NONE {
                    ready[v] = ready[parent[v] as usize] + down_hop[v];
                }
            }
            fill = fill.max(ready.iter().copied().fold(0.0, f64::max));
        }
        Ok(fill + (k.max(1) - 1) as f64 * period)
    }

    /// The latency of the longest route within any group.
    fn group_alpha(&self, groups: &[Vec<u32>]) -> f64 {
        self.alpha_of(groups.iter().flat_map(|g| {
            let first = g[0] as usize;
            g.iter().map(move |&r| (first, r as usize))
        }))
    }

    fn irregular(&self, reason: String, p0: usize, servers: bool) -> Error {
        Error::Infeasible {
            input: self.plan.source().to_string(),
            topology: format!("{} decomposition", self.algorithm.as_str()),
            reason,
            fix: format!(
                "give a rank count that fills whole {} (a multiple of {})",
                if servers { "servers" } else { "switches" },
                p0.max(1)
            ),
        }
    }

    /// The closed form of a tree algorithm over `p` ranks, `nf` bytes:
    /// the time and the chunk count K.
    ///
    /// Per step, with chunks of N/K bytes (N/2K per tree for the double
    /// trees), a rank moves through its NIC (`channels=fabric`):
    ///
    /// | algorithm | steps | per step |
    /// |---|---|---|
    /// | `tree` (K = 1) | `2 log P` | MG-WFBP's row: 2β and 2γ |
    /// | `pipelined-tree` | `2(h + K)` | reduce: two chunks in (2β) and their reduction (2γ); broadcast: two out (2β) |
    /// | `double-tree` | `2(h + K)` | two half chunks each way (β), the reduction of two halves (γ) in the reduce phase |
    /// | `overlapped-tree` | `2h + K` | one chunk up and two down (3β), two reduced (2γ) |
    /// | `overlapped-double-tree` | `2h + K` | four half chunks out (2β), two halves reduced (γ) |
    ///
    /// With `channels=pair` every tree edge is a channel of its own (C-Cube's
    /// DGX-1), so a step costs one chunk per channel: β for the single
    /// trees (eq. 6 for `pipelined-tree`, eq. 7 for `overlapped-tree`),
    /// β/2 for the double trees; the reduction is the same.
    fn tree_closed_form(&self, p: usize, nf: f64, max_chunks: usize) -> Result<(f64, usize)> {
        let g = self.params.gamma_us();
        let b = self.beta0();
        let pair = self.params.channels == Channels::Pair;
        let trees = match self.algorithm {
            Algorithm::DoubleTree | Algorithm::OverlappedDoubleTree => {
                vec![schedules::btree(p), schedules::mirror_tree(p)]
            }
            _ => vec![schedules::btree(p)],
        };
        let a = if pair {
            self.params.latency_us(0)
        } else {
            self.tree_alpha(&trees)
        };
        let mut h = 0u32;
        for t in &trees {
            let shape = schedules::shape(t)?;
            h = h.max(shape.height[shape.root]);
        }
        let h = f64::from(h);
        // (fixed steps, α per K-step unit, bytes term per K-step unit).
        let (fixed, alpha, bytes) = match (self.algorithm, pair) {
            (Algorithm::Tree, false) => {
                return Ok((models::binary_tree(p, nf, a, 2.0 * b, 2.0 * g), 1));
            }
            (Algorithm::Tree, true) => return Ok((models::binary_tree(p, nf, a, b, 2.0 * g), 1)),
            (Algorithm::PipelinedTree, false) => (h, 2.0 * a, 4.0 * b + 2.0 * g),
            (Algorithm::PipelinedTree, true) => (h, 2.0 * a, 2.0 * b + 2.0 * g),
            (Algorithm::DoubleTree, false) => (h, 2.0 * a, 2.0 * b + g),
            (Algorithm::DoubleTree, true) => (h, 2.0 * a, b + g),
            (Algorithm::OverlappedTree, false) => (2.0 * h, a, 3.0 * b + 2.0 * g),
            (Algorithm::OverlappedTree, true) => (2.0 * h, a, b + 2.0 * g),
            (Algorithm::OverlappedDoubleTree, false) => (2.0 * h, a, 2.0 * b + g),
            (Algorithm::OverlappedDoubleTree, true) => (2.0 * h, a, b / 2.0 + g),
            (other, _) => {
                return Err(Error::Internal(format!("{} is not a tree", other.as_str())));
            }
        };
        let best = models::pipeline(fixed, alpha, bytes * nf, max_chunks);
        Ok((best.time_us, best.chunks))
    }

    /// The closed-form time of `n` bytes and the chunk count of a
    /// pipelined tree.
    pub(super) fn closed_form(&self, n: u64) -> Result<(f64, usize)> {
        let p = self.ranks();
        if p <= 1 {
            return Ok((0.0, 1));
        }
        let nf = n as f64;
        let g = self.params.gamma_us();
        let (b0, b1) = (self.beta0(), self.beta1());
        let max_chunks = usize::try_from(n).unwrap_or(usize::MAX).max(1);
        Ok(match self.algorithm {
            Algorithm::Ring => {
                let a = self.alpha_of((0..p).map(|r| (r, (r + 1) % p)));
                (models::ring(p, nf, a, b0, g), 1)
            }
            Algorithm::Hd | Algorithm::Hdrm => {
                // Halving-doubling over the P' core ranks, plus the fold
                // and unfold of the X - P' extra ranks when X is not a
                // power of two (ranks::folded_halving_doubling's pairing).
                let core = 1usize << p.ilog2();
                // (α, β) of every step, then of the fold; they do not
                // depend on the size, so a context computes them once.
                let steps = match self.step_costs.get() {
                    Some(steps) => steps.clone(),
                    None => {
                        let steps = self.hd_step_costs(core, b0, b1)?;
                        self.step_costs.get_or_init(|| steps).clone()
                    }
                };
                let (hd, fold) = steps.split_at(core.ilog2() as usize);
                let mut t = models::halving_doubling_steps(core, nf, hd, g);
                if let Some(&(a, b)) = fold.first() {
                    t += models::fold(nf, a, b, g);
                }
                (t, 1)
            }
            Algorithm::Tree
            | Algorithm::PipelinedTree
            | Algorithm::DoubleTree
            | Algorithm::OverlappedTree
            | Algorithm::OverlappedDoubleTree => self.tree_closed_form(p, nf, max_chunks)?,
            Algorithm::BlueConnect | Algorithm::TwoD => {
                let ring_only = self.algorithm == Algorithm::TwoD;
                // The levels do not depend on the size either.
                let lv = match self.level_costs.get() {
                    Some(lv) => lv.clone(),
                    None => {
                        let lv = self.hierarchical_levels(ring_only)?;
                        self.level_costs.get_or_init(|| lv).clone()
                    }
                };
                (models::blueconnect(&lv, nf, g, ring_only), 1)
            }
            Algorithm::TwoLevel => {
                let levels = self.levels(false)?;
                let p0 = levels.groups[0][0].len();
                let p1 = levels.groups.get(1).map_or(1, |l| l[0].len());
                let alpha1 = levels.alpha.get(1).copied().unwrap_or(levels.alpha[0]);
                // One master per switch: the masters' flows do not share
                // an uplink, so they go at the slowest link's speed.
                let t = models::two_level(
                    p0,
                    p1,
                    nf,
                    (levels.alpha[0], alpha1),
                    levels.w[0],
                    self.fabric_w,
                );
                let reduce = |p: usize| g * (p as f64 - 1.0) / p as f64 * nf;
                (t + reduce(p0) + reduce(p1), 1)
            }
            Algorithm::TopKAllGather => {
                let w = self.params.gradient_bytes;
                let k = schedules::topk_elements(n, self.params.density, w) as f64;
                let wf = f64::from(w);
                let m = k * (wf + models::INDEX_BYTES);
                let steps: Vec<(f64, f64)> = if p.is_power_of_two() {
                    (0..p.ilog2())
                        .map(|s| {
                            let d = p >> (s + 1);
                            let pairs: Vec<(usize, usize)> = (0..p).map(|r| (r, r ^ d)).collect();
                            let inside = self.tier.is_none()
                                && pairs.iter().all(|&(a, b)| self.switch[a] == self.switch[b]);
                            let beta = match self.nvlink_beta(&pairs) {
                                Some(b) => b,
                                None if inside => b0,
                                None => b1,
                            };
                            (self.alpha_of(pairs.into_iter()), beta)
                        })
                        .collect()
                } else {
                    vec![(self.alpha_of((0..p).map(|r| (r, (r + 1) % p))), b0)]
                };
                let t2 = self.params.topk_us() * nf;
                let acc = g * wf * k * p as f64;
                (models::topk_allgather(p, m, &steps, t2, acc), 1)
            }
            Algorithm::ParameterServer => {
                let a = self.alpha_of((0..p).flat_map(|r| (0..p).map(move |j| (r, j))));
                // The part of a rank's shards that leaves its switch, for
                // the switch with the fewest ranks.
                let mut on = vec![0usize; self.plan.switch_list.len()];
                for &s in &self.switch {
                    on[s as usize] += 1;
                }
                let fewest = on.iter().copied().filter(|&c| c > 0).min().unwrap_or(p);
                let cross = (p - fewest) as f64 / p as f64 * nf;
                (
                    models::parameter_server(p, nf, a, b0, (cross, 1.0 / self.share), g),
                    1,
                )
            }
            Algorithm::NcclRing => {
                let servers = self.server_groups()?;
                (self.nccl_ring_closed_form(&servers, nf)?, 1)
            }
            Algorithm::NcclTree => {
                let servers = self.server_groups()?;
                let k = Self::nccl_tree_chunks(&servers, n);
                (self.nccl_tree_closed_form(&servers, nf, k)?, k)
            }
            Algorithm::HiTopK => {
                let levels = self.levels(false)?;
                let gpus = levels.groups[0][0].len();
                let nodes = levels.groups[1][0].len();
                let t2 = self.params.topk_us() * nf / gpus as f64;
                let w = f64::from(self.params.gradient_bytes);
                let t = models::hitopk_sent(
                    nodes,
                    gpus,
                    nf / w,
                    self.params.density,
                    w,
                    (levels.alpha[0], 1.0 / levels.w[0]),
                    (levels.alpha[1], 1.0 / levels.w[1]),
                    t2,
                );
                // The paper has no γ; the schedule reduces the ring
                // reduce-scatter's (g-1)/g of the buffer and accumulates
                // the m gathered sets of ρ·d/g values.
                let (gf, mf) = (gpus as f64, nodes as f64);
                let shard_elements = ((nf / gf) / w).floor();
                let selected = (self.params.density * shard_elements).ceil();
                let reduced = (gf - 1.0) / gf * nf + mf * selected * w;
                (t + g * reduced, 1)
            }
        })
    }

    /// The shape of the algorithm's schedule when it is made of ring and
    /// halving-doubling steps (which can be streamed: [`Shape`]).
    fn shape(&self) -> Result<Option<Shape>> {
        let p = self.ranks();
        Ok(Some(match self.algorithm {
            Algorithm::Ring => Shape::Levels {
                levels: vec![(vec![(0..p as u32).collect()], Kind::Ring)],
                labelled: false,
            },
            Algorithm::Hd | Algorithm::Hdrm => Shape::FoldedHd,
            Algorithm::BlueConnect | Algorithm::TwoD => {
                let ring_only = self.algorithm == Algorithm::TwoD;
                let levels = self.levels(!ring_only)?;
                let levels = levels
                    .groups
                    .into_iter()
                    .map(|groups| {
                        let kind = level_kind(ring_only, groups[0].len());
                        (groups, kind)
                    })
                    .collect();
                Shape::Levels {
                    levels,
                    labelled: true,
                }
            }
            _ => return Ok(None),
        }))
    }

    /// True when the schedule can be streamed: made of ring and
    /// halving-doubling steps ([`Shape`]), and no pair has a channel of
    /// its own (`channels=pair` reads the whole schedule).
    fn streams(&self) -> Result<bool> {
        Ok(self.params.channels != Channels::Pair && self.shape()?.is_some())
    }

    /// The run of `n` bytes under `seed` and `routing` over the schedule
    /// streamed (never stored), with what is left of the schedule: the
    /// step-synchronous mode ([`fast::Steps`]), or the event-driven mode's
    /// lone pass ([`sim::Lone`]). `None` when the schedule cannot be
    /// streamed (not made of ring and halving-doubling steps, or pairs with
    /// channels of their own), or, event-driven, when flows share a link:
    /// then the mode runs on the stored schedule.
    pub(super) fn streamed(
        &self,
        n: u64,
        seed: u64,
        routing: Policy,
        method: Method,
    ) -> Result<Option<(sim::Outcome, schedules::Streamed)>> {
        if !matches!(method, Method::Event | Method::Fast) || !self.streams()? {
            return Ok(None);
        }
        let Some(shape) = self.shape()? else {
            return Ok(None);
        };
        let no_sends = SendSchedule::default();
        let mut routes = PlanRoutes::new(self, &no_sends, seed, routing);
        let caps = routes.caps();
        let p = self.ranks();
        let g = self.params.gamma_us();
        if method == Method::Fast {
            let mut sink = StepSink {
                steps: fast::Steps::new(caps.len()),
                routes: &mut routes,
                caps: &caps,
                step: None,
                paths: Vec::new(),
                error: None,
            };
            let streamed = schedules::stream(p, &shape, n, g, &mut sink)?;
            if let Some(e) = sink.error {
                return Err(e);
            }
            let mut steps = sink.steps;
            if sink.step.is_some() {
                steps.end_step(&caps, None);
            }
            let o = steps.finish(&streamed.tail_us);
            let out = sim::Outcome {
                time_us: o.time_us,
                max_link_flows: o.max_link_flows,
                events: 0,
                recomputes: 0,
            };
            return Ok(Some((out, streamed)));
        }
        let lone = sim::Lone::new(p, 0, self.params.eager_bytes, false, false, false);
        let mut sink = LoneSink {
            lone,
            routes: &mut routes,
            caps: &caps,
        };
        let streamed = schedules::stream(p, &shape, n, g, &mut sink)?;
        let LoneSink { lone, .. } = sink;
        Ok(lone
            .finish(&streamed.final_recv, &streamed.tail_us)
            .map(|(out, _, _)| (out, streamed)))
    }

    /// The send-level schedule of `n` bytes.
    pub(super) fn schedule(&self, n: u64, chunks: usize) -> Result<SendSchedule> {
        let p = self.ranks();
        let g = self.params.gamma_us();
        if let Some(shape) = self.shape()? {
            return schedules::build(p, &shape, n, g);
        }
        match self.algorithm {
            Algorithm::Ring
            | Algorithm::Hd
            | Algorithm::Hdrm
            | Algorithm::BlueConnect
            | Algorithm::TwoD => Err(Error::Internal(format!(
                "{} has a shape, built above",
                self.algorithm.as_str()
            ))),
            Algorithm::Tree => schedules::trees(p, vec![schedules::btree(p)], n, 1, false, g),
            Algorithm::PipelinedTree => {
                schedules::trees(p, vec![schedules::btree(p)], n, chunks, false, g)
            }
            Algorithm::DoubleTree | Algorithm::OverlappedDoubleTree => schedules::trees(
                p,
                vec![schedules::btree(p), schedules::mirror_tree(p)],
                n,
                chunks,
                self.algorithm == Algorithm::OverlappedDoubleTree,
                g,
            ),
            Algorithm::OverlappedTree => {
                schedules::trees(p, vec![schedules::btree(p)], n, chunks, true, g)
            }
            Algorithm::TwoLevel => {
                let levels = self.levels(false)?;
                let masters = levels
                    .groups
                    .get(1)
                    .map_or_else(|| vec![0], |l| l[0].clone());
                schedules::two_level(p, &levels.groups[0], &masters, n, g)
            }
            Algorithm::TopKAllGather => schedules::topk_allgather(
                p,
                n,
                self.params.density,
                self.params.gradient_bytes,
                g,
                self.params.topk_us(),
            ),
            Algorithm::ParameterServer => schedules::parameter_server(p, n, g),
            Algorithm::NcclRing => schedules::nccl_rings(&self.server_groups()?, n, g),
            Algorithm::NcclTree => schedules::nccl_trees(&self.server_groups()?, n, chunks, g),
            Algorithm::HiTopK => {
                let levels = self.levels(false)?;
                schedules::hitopk(
                    p,
                    &levels.groups[0],
                    &levels.groups[1],
                    n,
                    self.params.density,
                    self.params.gradient_bytes,
                    g,
                    self.params.topk_us(),
                )
            }
        }
    }

    /// The plan as the packet-level mode sees it, over the links `caps`
    /// ([`PlanRoutes::caps`]: the plan's, the NVLink links of the
    /// intra-server tier, then any channels of `channels=pair`).
    fn packet_fabric(&self, caps: &[f64]) -> Result<packet::Fabric> {
        let nvlink = self.tier.as_ref().map_or(0, |t| t.caps.len());
        packet::Fabric::new(
            self.plan,
            &self.net,
            &self.table,
            caps,
            nvlink,
            &self.params,
        )
    }

    /// Estimates `n` bytes.
    /// Refuses, without building it, a schedule for `n` bytes with more
    /// sends than the simulator builds, naming the algorithm, plan and
    /// size; the closed form needs no schedule.
    pub(super) fn sends_fit(&self, n: u64, options: &Options) -> Result<()> {
        if options.method == Method::ClosedForm {
            return Ok(());
        }
        let (_, chunks) = self.closed_form(n)?;
        schedules::sends_fit(|| self.schedule(n, chunks)).map_err(|e| match e {
            Error::TooManySends {
                ranks,
                sends,
                limit,
                ..
            } => Error::TooManySends {
                job: Some(format!(
                    "{} on {} at {}",
                    self.algorithm.as_str(),
                    self.plan.name,
                    super::format_size(n)
                )),
                ranks,
                sends,
                limit,
            },
            other => other,
        })
    }

    pub(super) fn estimate(&self, n: u64, options: &Options) -> Result<Estimate> {
        check_size(n)?;
        let (closed, chunks) = self.closed_form(n)?;
        let p = self.ranks();
        let mut est = Estimate {
            algorithm: self.algorithm,
            topology: self.plan.topology,
            plan: self.plan.name.clone(),
            design: self.plan.describe(),
            ranks: p,
            size_bytes: n,
            method: options.method,
            time_us: closed,
            time_min_us: closed,
            time_max_us: closed,
            seeds: 1,
            closed_form_us: closed,
            algbw_gbps: 0.0,
            busbw_gbps: 0.0,
            chunks,
            schedule: None,
            packet: None,
        };
        if options.method != Method::ClosedForm {
            // Only the ECMP hash reads the seed.
            let seeds = if options.seeds.is_empty() {
                vec![0]
            } else if !options.routing.seeded() {
                vec![options.seeds[0]]
            } else {
                options.seeds.clone()
            };
            // The event-driven and step-synchronous modes first stream the
            // schedule of every seed (Context::streamed), which is then
            // never stored; it is built when a seed needs the event loop,
            // or for the other modes.
            // The seeds streamed, and the one whose flows share a link (its
            // lone pass failed: the event loop runs without trying it again).
            let mut streamed = Vec::new();
            let mut shared: Option<u64> = None;
            if matches!(options.method, Method::Event | Method::Fast) {
                for &seed in &seeds {
                    match self.streamed(n, seed, options.routing, options.method)? {
                        Some(run) => streamed.push((seed, run)),
                        None => {
                            shared = Some(seed).filter(|_| self.streams().unwrap_or(false));
                            break;
                        }
                    }
                }
            }
            let mut times = Vec::with_capacity(seeds.len());
            let mut max_link_flows = 0;
            let mut packets: Vec<(f64, PacketStats)> = Vec::new();
            let (steps, sends, bytes_per_rank) = match streamed.first() {
                Some((_, (_, shape))) if streamed.len() == seeds.len() => {
                    for (_, (o, _)) in &streamed {
                        max_link_flows = max_link_flows.max(o.max_link_flows);
                        times.push(o.time_us);
                    }
                    (shape.steps, shape.sends, shape.bytes_sent_by_0)
                }
                _ => {
                    let sched = self.schedule(n, chunks)?;
                    let mut previous: Option<(PlanRoutes<'_>, f64)> = None;
                    // The packet mode's figures per seed, by time.
                    // Built at the first seed: every seed has the same links.
                    let mut fabric: Option<packet::Fabric> = None;
                    for &seed in &seeds {
                        // A seed streamed before the one that could not be.
                        if let Some((_, (o, _))) = streamed.iter().find(|(s, _)| *s == seed) {
                            max_link_flows = max_link_flows.max(o.max_link_flows);
                            times.push(o.time_us);
                            continue;
                        }
                        let mut routes = PlanRoutes::new(self, &sched, seed, options.routing);
                        // A seed that routes every pair the same way as the
                        // last one gives the same time.
                        if let Some((last, t)) = &previous
                            && last.same_routes(&mut routes)?
                        {
                            times.push(*t);
                            if let Some(last) = packets.last().cloned() {
                                packets.push(last);
                            }
                            continue;
                        }
                        let caps = routes.caps();
                        let (t, flows) = match options.method {
                            Method::Fast => {
                                let o = fast::run(&sched, &caps, &mut routes, false)?;
                                (o.time_us, o.max_link_flows)
                            }
                            Method::Packet => {
                                let fab = match &mut fabric {
                                    Some(f) => f,
                                    None => fabric.insert(self.packet_fabric(&caps)?),
                                };
                                let o =
                                    packet::run(&sched, fab, &mut routes, self.params.eager_bytes)?;
                                packets.push((o.time_us, o.stats));
                                (o.time_us, o.max_link_flows)
                            }
                            _ => {
                                let settings = sim::Settings {
                                    general: shared == Some(seed),
                                    ..sim::Settings::default()
                                };
                                let o = sim::run_with(
                                    &sched,
                                    &caps,
                                    &mut routes,
                                    self.params.eager_bytes,
                                    settings,
                                    None,
                                )?;
                                (o.time_us, o.max_link_flows)
                            }
                        };
                        max_link_flows = max_link_flows.max(flows);
                        times.push(t);
                        previous = Some((routes, t));
                    }
                    (sched.steps().len(), sched.len(), sched.bytes_sent_by(0))
                }
            };
            times.sort_by(f64::total_cmp);
            let k = times.len();
            est.time_us = if k % 2 == 1 {
                times[k / 2]
            } else {
                (times[k / 2 - 1] + times[k / 2]) / 2.0
            };
            packets.sort_by(|a, b| a.0.total_cmp(&b.0));
            est.packet = packets.get(k / 2).map(|(_, s)| s.clone());
            est.time_min_us = times[0];
            est.time_max_us = times[k - 1];
            est.seeds = k;
            est.schedule = Some(ScheduleStats {
                steps,
                sends,
                bytes_per_rank,
                max_link_flows,
            });
        }
        let (algbw, busbw) = bandwidths(n, est.time_us, p);
        est.algbw_gbps = algbw;
        est.busbw_gbps = busbw;
        Ok(est)
    }
}

/// The lone pass as a [`schedules::Sink`]: each streamed send routed by
/// its ranks.
struct LoneSink<'r, 'c> {
    lone: sim::Lone,
    routes: &'r mut PlanRoutes<'c>,
    caps: &'r [f64],
}

impl schedules::Sink for LoneSink<'_, '_> {
    fn send(&mut self, src: u32, dst: u32, bytes: u64, step: u32, deps: &[u32], delay_us: f64) {
        if self.lone.failed {
            return;
        }
        let (lone, caps) = (&mut self.lone, self.caps);
        self.routes.with_single(src as usize, dst, |route| {
            lone.send(caps, dst, bytes, step, deps, &[], delay_us, route);
        });
    }

    fn reserve(&mut self, sends: usize) {
        self.lone.reserve(sends);
    }
}

/// The step-synchronous mode as a [`schedules::Sink`]: each streamed send
/// routed by its ranks, a step ended when the next begins.
struct StepSink<'r, 'c> {
    steps: fast::Steps,
    routes: &'r mut PlanRoutes<'c>,
    caps: &'r [f64],
    /// The current step.
    step: Option<u32>,
    paths: Vec<FlowRoute>,
    /// The first route that could not be found, or a step out of order.
    error: Option<Error>,
}

impl schedules::Sink for StepSink<'_, '_> {
    fn send(&mut self, src: u32, dst: u32, bytes: u64, step: u32, _deps: &[u32], delay_us: f64) {
        if self.error.is_some() {
            return;
        }
        match self.step {
            Some(s) if s > step => {
                self.error = Some(Error::Internal(format!(
                    "a streamed schedule went back from step {s} to step {step}"
                )));
                return;
            }
            Some(s) if s < step => self.steps.end_step(self.caps, None),
            _ => {}
        }
        self.step = Some(step);
        self.paths.clear();
        match self
            .routes
            .paths_between(src as usize, dst, &mut self.paths)
        {
            Ok(()) => self.steps.add(bytes, delay_us, &self.paths),
            Err(e) => self.error = Some(e),
        }
    }
}

/// Routes of a schedule's sends on the plan under a routing policy,
/// cached per source rank (a rank talks to a handful of peers). A sprayed
/// flow's routes between two switches (up to 1,024 a flow on an 8,192-GPU
/// HPN fabric) are kept once per pair of switches and joined to the
/// flow's access links when asked for, the same routes in the same order
/// as [`Network::flow_routes`] lists them.
#[derive(Debug)]
pub(super) struct PlanRoutes<'c> {
    ctx: &'c Context<'c>,
    sched: &'c SendSchedule,
    seed: u64,
    policy: Policy,
    /// With `channels=pair`: the schedule's (tree, sender, receiver)
    /// channels, sorted; channel j is link `base + j`.
    channels: Vec<(u32, u32, u32)>,
    base: usize,
    /// Per source rank: (destination rank, where its paths are).
    cache: Vec<Vec<(u32, Stored)>>,
    /// Per source rank, its entry of `cache` looked up last (destination
    /// `NONE` before the first): most ranks send to the same peer many
    /// times in a row, and this array is dense where `cache` is not.
    last: Vec<(u32, Stored)>,
    pool: Vec<FlowRoute>,
    scratch: Vec<Route>,
    /// Sprayed flows: their legs ([`Network::spray_legs`]) that have
    /// routes, each with its access links and its range of `between`.
    legs: Vec<StoredLeg>,
    leg_scratch: Vec<Leg>,
    /// Per pair of switches, its range of `between`: the routes between
    /// them, inter-switch links only, with the whole route's latency.
    pairs: HashMap<(usize, usize), (u32, u32)>,
    between: Vec<FlowRoute>,
}

/// Where the paths of one flow are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    /// `count` whole routes from `first` in `pool`.
    Pool { first: u32, count: u32 },
    /// A sprayed flow's `count` legs from `first` in `legs`.
    Legs { first: u32, count: u32 },
}

/// One leg of a sprayed flow: its access links in the leg's plane and its
/// routes between the two switches (`count` from `first` in `between`;
/// none when both ends are on one switch, the access links alone).
#[derive(Debug, Clone, Copy)]
struct StoredLeg {
    up: u32,
    down: u32,
    first: u32,
    count: u32,
}

impl<'c> PlanRoutes<'c> {
    pub(super) fn new(
        ctx: &'c Context<'c>,
        sched: &'c SendSchedule,
        seed: u64,
        policy: Policy,
    ) -> Self {
        let channels = if ctx.params.channels == Channels::Pair {
            let mut c: Vec<(u32, u32, u32)> = (0..sched.len())
                .map(|i| (sched.tree_of(i), sched.src[i], sched.dst[i]))
                .collect();
            c.sort_unstable();
            c.dedup();
            c
        } else {
            Vec::new()
        };
        // A streamed schedule comes with no sends: the context's ranks.
        let ranks = ctx.ranks().max(sched.ranks());
        Self {
            ctx,
            sched,
            seed,
            policy,
            channels,
            base: ctx.caps.len(),
            cache: vec![Vec::new(); ranks],
            last: vec![(NONE, Stored::Pool { first: 0, count: 0 }); ranks],
            pool: Vec::new(),
            scratch: Vec::new(),
            legs: Vec::new(),
            leg_scratch: Vec::new(),
            pairs: HashMap::new(),
            between: Vec::new(),
        }
    }

    /// Routes the flow from rank `s` to rank `d` into `pool` (or, sprayed,
    /// `legs`); returns where.
    fn compute(&mut self, s: usize, d: usize) -> Result<Stored> {
        let t = &self.ctx.table;
        if let Some(tier) = &self.ctx.tier {
            // Inside a server: over NVLink, or through the shared NIC's
            // links (PCIe peer-to-peer at the NIC's speed at most).
            let (links, latency) = match tier.nvlink_route(s, d) {
                Some(links) => (Some(links), self.ctx.params.latency_us(1)),
                None if t[s] == t[d] => (
                    Some([
                        self.ctx.net.up_link(t[s]) as u32,
                        self.ctx.net.down_link(t[d]) as u32,
                    ]),
                    self.ctx.params.latency_us(0),
                ),
                None => (None, 0.0),
            };
            if let Some(links) = links {
                let mut out = FlowRoute {
                    latency,
                    len: 2,
                    ..FlowRoute::default()
                };
                out.links[..2].copy_from_slice(&links);
                self.pool.push(out);
                return Ok(Stored::Pool {
                    first: self.pool.len() as u32 - 1,
                    count: 1,
                });
            }
        }
        if self.policy == Policy::Spray {
            return self.compute_legs(s, d);
        }
        self.scratch.clear();
        self.ctx.net.flow_routes(
            self.policy,
            t[s],
            t[d],
            flow_id(s, d),
            self.seed,
            &mut self.scratch,
        )?;
        let first = self.pool.len() as u32;
        for r in &self.scratch {
            let out = self.flow_route(r.links());
            self.pool.push(out);
        }
        Ok(Stored::Pool {
            first,
            count: self.scratch.len() as u32,
        })
    }

    /// The path over `links` (a whole route: access links and the
    /// switches between) with its latency.
    fn flow_route(&self, links: &[usize]) -> FlowRoute {
        let mut out = FlowRoute {
            latency: self.ctx.params.latency_us(links.len().saturating_sub(1)),
            ..FlowRoute::default()
        };
        for (k, &l) in links.iter().enumerate() {
            out.links[k] = l as u32;
        }
        out.len = links.len() as u8;
        out
    }

    /// A sprayed flow from rank `s` to rank `d`: its legs that have routes
    /// into `legs`, the routes between their switches kept once per pair;
    /// the hashed route into `pool` when no leg has one (as
    /// [`Network::flow_routes`] does).
    fn compute_legs(&mut self, s: usize, d: usize) -> Result<Stored> {
        let t = &self.ctx.table;
        let mut legs = std::mem::take(&mut self.leg_scratch);
        legs.clear();
        let one = self
            .ctx
            .net
            .spray_legs(t[s], t[d], flow_id(s, d), self.seed, &mut legs)?;
        let first = self.legs.len() as u32;
        for leg in &legs {
            let (from, count) = if leg.from == leg.to {
                (0, 0)
            } else {
                match self.between(leg.from, leg.to) {
                    (_, 0) => continue,
                    range => range,
                }
            };
            self.legs.push(StoredLeg {
                up: leg.up as u32,
                down: leg.down as u32,
                first: from,
                count,
            });
        }
        self.leg_scratch = legs;
        let count = self.legs.len() as u32 - first;
        if count > 0 {
            return Ok(Stored::Legs { first, count });
        }
        let out = self.flow_route(one.links());
        self.pool.push(out);
        Ok(Stored::Pool {
            first: self.pool.len() as u32 - 1,
            count: 1,
        })
    }

    /// The range of `between` that holds the routes from switch `a` to
    /// switch `b` ([`Network::switch_paths`], in its order), found there
    /// or routed now.
    fn between(&mut self, a: usize, b: usize) -> (u32, u32) {
        if let Some(&range) = self.pairs.get(&(a, b)) {
            return range;
        }
        let first = self.between.len() as u32;
        for path in self.ctx.net.switch_paths(a, b) {
            let mut out = self.flow_route(&path);
            // The whole route crosses one switch more than its
            // inter-switch links.
            out.latency = self.ctx.params.latency_us(path.len() + 1);
            self.between.push(out);
        }
        let range = (first, self.between.len() as u32 - first);
        self.pairs.insert((a, b), range);
        range
    }

    /// Route `j` of a stored leg: its access links around its `j`-th
    /// route between the switches (the access links alone on one switch).
    fn leg_route(&self, leg: &StoredLeg, j: u32) -> FlowRoute {
        if leg.count == 0 {
            let mut out = FlowRoute {
                latency: self.ctx.params.latency_us(1),
                len: 2,
                ..FlowRoute::default()
            };
            out.links[..2].copy_from_slice(&[leg.up, leg.down]);
            return out;
        }
        let inner = &self.between[(leg.first + j) as usize];
        let m = inner.len as usize;
        let mut out = FlowRoute {
            latency: inner.latency,
            len: inner.len + 2,
            ..FlowRoute::default()
        };
        out.links[0] = leg.up;
        out.links[1..=m].copy_from_slice(inner.links());
        out.links[m + 1] = leg.down;
        out
    }

    /// Appends the paths kept at `stored` to `out`.
    fn fill(&self, stored: Stored, out: &mut Vec<FlowRoute>) {
        match stored {
            Stored::Pool { first, count } => {
                out.extend_from_slice(&self.pool[first as usize..(first + count) as usize]);
            }
            Stored::Legs { first, count } => {
                for leg in &self.legs[first as usize..(first + count) as usize] {
                    for j in 0..leg.count.max(1) {
                        out.push(self.leg_route(leg, j));
                    }
                }
            }
        }
    }

    /// The first of the paths kept at `stored`.
    fn first(&self, stored: Stored) -> FlowRoute {
        match stored {
            Stored::Pool { first, .. } => self.pool[first as usize],
            Stored::Legs { first, .. } => self.leg_route(&self.legs[first as usize], 0),
        }
    }

    /// The paths of the flow from rank `s` to rank `d`, cached.
    #[inline]
    fn lookup(&mut self, s: usize, d: u32) -> Result<Stored> {
        if let Some(&(x, stored)) = self.last.get(s)
            && x == d
        {
            return Ok(stored);
        }
        let stored = match self.cache[s].iter().find(|(x, _)| *x == d) {
            Some(&(_, stored)) => stored,
            None => {
                let stored = self.compute(s, d as usize)?;
                self.cache[s].push((d, stored));
                stored
            }
        };
        self.last[s] = (d, stored);
        Ok(stored)
    }

    /// Every path from rank `s` to rank `d`, appended to `out`.
    fn paths_between(&mut self, s: usize, d: u32, out: &mut Vec<FlowRoute>) -> Result<()> {
        let stored = self.lookup(s, d)?;
        self.fill(stored, out);
        Ok(())
    }

    /// `f` of the route from rank `s` to rank `d` when the flow has one
    /// path, else of `None` (several paths, or no route: the lone pass
    /// gives up and the event loop reports it); the route is lent, not
    /// copied, when it is stored whole.
    #[inline]
    fn with_single<T>(&mut self, s: usize, d: u32, f: impl FnOnce(Option<&FlowRoute>) -> T) -> T {
        match self.lookup(s, d) {
            Ok(Stored::Pool { first, count: 1 }) => f(Some(&self.pool[first as usize])),
            Ok(_) => f(self.single_between(s, d).ok().flatten().as_ref()),
            Err(_) => f(None),
        }
    }

    /// The route from rank `s` to rank `d` when the flow has one path.
    fn single_between(&mut self, s: usize, d: u32) -> Result<Option<FlowRoute>> {
        let stored = self.lookup(s, d)?;
        let single = match stored {
            Stored::Pool { count, .. } => count == 1,
            Stored::Legs { first, count } => count == 1 && self.legs[first as usize].count <= 1,
        };
        Ok(single.then(|| self.first(stored)))
    }

    /// True when `other` (another seed) routes every pair this one routed
    /// the same way.
    fn same_routes(&self, other: &mut PlanRoutes<'_>) -> Result<bool> {
        let (mut mine, mut theirs) = (Vec::new(), Vec::new());
        for (s, list) in self.cache.iter().enumerate() {
            for &(d, stored) in list {
                mine.clear();
                theirs.clear();
                self.fill(stored, &mut mine);
                let kept = other.lookup(s, d)?;
                other.fill(kept, &mut theirs);
                if mine != theirs {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

impl<'c> PlanRoutes<'c> {
    /// The link capacities the routes index: the plan's links, then with
    /// `channels=pair` one channel per (tree, sender, receiver) at the
    /// ranks' link speed.
    pub(super) fn caps(&self) -> std::borrow::Cow<'c, [f64]> {
        if self.channels.is_empty() {
            return std::borrow::Cow::Borrowed(&self.ctx.caps);
        }
        let mut caps = self.ctx.caps.clone();
        caps.resize(self.base + self.channels.len(), self.ctx.w);
        std::borrow::Cow::Owned(caps)
    }

    /// The channel of send `i` under `channels=pair`.
    fn channel(&self, i: usize) -> Option<FlowRoute> {
        if self.channels.is_empty() {
            return None;
        }
        let key = (self.sched.tree_of(i), self.sched.src[i], self.sched.dst[i]);
        let j = self.channels.binary_search(&key).ok()?;
        let mut out = FlowRoute {
            latency: self.ctx.params.latency_us(0),
            len: 1,
            ..FlowRoute::default()
        };
        out.links[0] = (self.base + j) as u32;
        Some(out)
    }
}

impl Routes for PlanRoutes<'_> {
    fn route(&mut self, i: usize) -> Result<FlowRoute> {
        if let Some(r) = self.channel(i) {
            return Ok(r);
        }
        let (s, d) = (self.sched.src[i] as usize, self.sched.dst[i]);
        let stored = self.lookup(s, d)?;
        Ok(self.first(stored))
    }

    fn paths(&mut self, i: usize, out: &mut Vec<FlowRoute>) -> Result<()> {
        if let Some(r) = self.channel(i) {
            out.push(r);
            return Ok(());
        }
        self.paths_between(self.sched.src[i] as usize, self.sched.dst[i], out)
    }

    fn single(&mut self, i: usize) -> Result<Option<FlowRoute>> {
        if let Some(r) = self.channel(i) {
            return Ok(Some(r));
        }
        self.single_between(self.sched.src[i] as usize, self.sched.dst[i])
    }
}

/// Estimates one allreduce of `size_bytes` with `algorithm` on `plan`,
/// over `ranks` ranks (default: every sub-node, M x N for HDRM).
pub fn estimate(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    size_bytes: u64,
    params: &Params,
    options: &Options,
) -> Result<Estimate> {
    Context::new(plan, algorithm, ranks, params)?.estimate(size_bytes, options)
}

/// [`estimate`] for several sizes: the rank table, the network and the
/// link capacities are built once (a rank search on a large plan costs
/// more than the estimates themselves).
pub fn estimates(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    sizes: &[u64],
    params: &Params,
    options: &Options,
) -> Result<Vec<Estimate>> {
    let ctx = Context::new(plan, algorithm, ranks, params)?;
    sizes.iter().map(|&n| ctx.estimate(n, options)).collect()
}

/// The context and send schedule of one allreduce of `size_bytes`.
fn prepare<'a>(
    plan: &'a CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    size_bytes: u64,
    params: &Params,
) -> Result<(Context<'a>, SendSchedule)> {
    check_size(size_bytes)?;
    let ctx = Context::new(plan, algorithm, ranks, params)?;
    let (_, chunks) = ctx.closed_form(size_bytes)?;
    let sched = ctx.schedule(size_bytes, chunks)?;
    Ok((ctx, sched))
}

/// The schedule behind an estimate, step by step as the step-synchronous
/// mode sees it with ECMP seed `seed` under `routing`: phase, flows, bytes,
/// the most flows on one link and the step's time; and for the trees the
/// gradient turnaround of their chunks. With `method` event-driven the
/// turnaround is measured on the event-driven simulation's timeline (when
/// each send started and was delivered, [`SendSchedule::turnaround_of_sends`]);
/// otherwise on the step-synchronous one ([`SendSchedule::turnaround`]).
#[allow(clippy::too_many_arguments)]
pub fn steps_and_turnaround(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    size_bytes: u64,
    params: &Params,
    seed: u64,
    routing: Policy,
    method: Method,
) -> Result<(Vec<StepSummary>, Option<schedules::Turnaround>)> {
    let (ctx, sched) = prepare(plan, algorithm, ranks, size_bytes, params)?;
    let mut routes = PlanRoutes::new(&ctx, &sched, seed, routing);
    let caps = routes.caps();
    let steps = fast::run(&sched, &caps, &mut routes, true)?.steps;
    // Only the trees' sends belong to chunks.
    let turnaround = if !sched.chunk.is_empty() {
        match method {
            Method::Event => {
                let mut routes = PlanRoutes::new(&ctx, &sched, seed, routing);
                let mut times = sim::SendTimes::default();
                sim::run_with(
                    &sched,
                    &caps,
                    &mut routes,
                    params.eager_bytes,
                    sim::Settings::default(),
                    Some(&mut times),
                )?;
                sched.turnaround_of_sends(&times.start_us, &times.delivered_us)
            }
            _ => {
                let times: Vec<f64> = steps.iter().map(|s| s.time_us).collect();
                sched.turnaround(&times)
            }
        }
    } else {
        None
    };
    Ok((steps, turnaround))
}

/// The send-level schedule of an algorithm on a plan (for callers that
/// want every send).
pub fn send_schedule(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    size_bytes: u64,
    params: &Params,
) -> Result<SendSchedule> {
    Ok(prepare(plan, algorithm, ranks, size_bytes, params)?.1)
}

/// A packet-level run of one allreduce: its time and per-step queue, PFC
/// and ECN figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PacketRun {
    /// The allreduce time, µs.
    pub time_us: f64,
    /// Totals.
    pub stats: PacketStats,
    /// Per step of the schedule.
    pub steps: Vec<PacketStep>,
}

/// The packet-level run behind `simulate --method packet --steps`, with
/// ECMP seed `seed` under `routing`.
pub fn packet_steps(
    plan: &CheckedPlan,
    algorithm: Algorithm,
    ranks: Option<usize>,
    size_bytes: u64,
    params: &Params,
    seed: u64,
    routing: Policy,
) -> Result<PacketRun> {
    let (ctx, sched) = prepare(plan, algorithm, ranks, size_bytes, params)?;
    let mut routes = PlanRoutes::new(&ctx, &sched, seed, routing);
    let fab = ctx.packet_fabric(&routes.caps())?;
    let o = packet::run(&sched, &fab, &mut routes, params.eager_bytes)?;
    Ok(PacketRun {
        time_us: o.time_us,
        stats: o.stats,
        steps: o.steps,
    })
}

#[cfg(test)]
mod plan_routes_tests {
    use super::*;
    use crate::network::hpn_tests::hpn_plan;
    use crate::network::tests::{bigraph_plan, fat_tree_plan, rail_plan};

    /// A sprayed send's paths from [`PlanRoutes`] (kept per pair of
    /// switches and joined to the access links) are
    /// [`Network::flow_routes`]'s, in its order and with the latency of
    /// each route's length, on every kind of fabric.
    #[test]
    fn sprayed_paths_are_the_route_models() {
        let params = Params::default();
        for plan in [
            bigraph_plan(4, 16),
            fat_tree_plan("tiers=2,sub-nodes=96,ports=16,oversub=3"),
            fat_tree_plan("k=8"),
            rail_plan("sub-nodes=128,rails=4,ports=16"),
            hpn_plan("sub-nodes=128,rails=4,ports=16"),
        ] {
            let mut sprayed = 0;
            for algorithm in [Algorithm::Hd, Algorithm::Ring] {
                let ranks = Some(1 << plan.sub_node_list.len().ilog2());
                let ctx = Context::new(&plan, algorithm, ranks, &params).unwrap();
                let (_, chunks) = ctx.closed_form(1 << 20).unwrap();
                let sched = ctx.schedule(1 << 20, chunks).unwrap();
                let mut routes = PlanRoutes::new(&ctx, &sched, 3, Policy::Spray);
                let (mut got, mut listed) = (Vec::new(), Vec::new());
                for i in 0..sched.len() {
                    let (s, d) = (sched.src[i] as usize, sched.dst[i] as usize);
                    got.clear();
                    routes.paths(i, &mut got).unwrap();
                    assert_eq!(routes.route(i).unwrap(), got[0]);
                    listed.clear();
                    let t = &ctx.table;
                    ctx.net
                        .flow_routes(Policy::Spray, t[s], t[d], flow_id(s, d), 3, &mut listed)
                        .unwrap();
                    let want: Vec<FlowRoute> = listed
                        .iter()
                        .map(|r| {
                            let mut w = FlowRoute {
                                latency: params.latency_us(r.switches()),
                                len: r.links().len() as u8,
                                ..FlowRoute::default()
                            };
                            for (k, &l) in r.links().iter().enumerate() {
                                w.links[k] = l as u32;
                            }
                            w
                        })
                        .collect();
                    assert_eq!(got, want, "{}: send {i}, {s} -> {d}", plan.name);
                    sprayed += usize::from(want.len() > 1);
                }
            }
            assert!(sprayed > 0, "{}", plan.name);
        }
    }
}
