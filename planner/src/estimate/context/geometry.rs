//! What the plan gives a context's algorithms: the switches and α between
//! ranks, β of a step with every pair of it on its paths (the route
//! model, ideally balanced), the levels of a hierarchical decomposition and
//! the ranks of every server. The closed forms and the schedules read
//! these; nothing here knows an algorithm's equations.

use super::Context;
use crate::error::{Error, Result};
use crate::estimate::schedules::{Kind, NONE};
use crate::network::Policy;
use crate::plan::Topology;
use crate::ranks::verify::flow_id;

/// The levels of a hierarchical decomposition.
#[derive(Debug, Clone)]
pub(super) struct Levels {
    pub(super) groups: Vec<Vec<Vec<u32>>>,
    pub(super) alpha: Vec<f64>,
    pub(super) w: Vec<f64>,
}

impl Context<'_> {
    /// Switches on the route between two switches of the plan.
    pub(super) fn switches_between(&self, a: u32, b: u32) -> usize {
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
    pub(super) fn alpha_of(&self, pairs: impl Iterator<Item = (usize, usize)>) -> f64 {
        let worst = pairs
            .map(|(a, b)| match &self.tier {
                Some(t) if t.same_domain(a, b) => 1,
                _ => self.switches_between(self.switch[a], self.switch[b]),
            })
            .max()
            .unwrap_or(1);
        self.params.latency_us(worst)
    }

    pub(super) fn beta0(&self) -> f64 {
        1.0 / self.w
    }

    pub(super) fn beta1(&self) -> f64 {
        1.0 / self.w.min(self.share)
    }

    /// β of a step whose pairs all stay inside NVLink domains, with the
    /// intra-server tier.
    pub(super) fn nvlink_beta(&self, pairs: &[(usize, usize)]) -> Option<f64> {
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
    pub(super) fn spread_beta(&self, pairs: &[(usize, usize)]) -> Result<f64> {
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
    pub(super) fn level_w(&self, groups: &[Vec<u32>], kind: Kind) -> Result<f64> {
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

    /// Tree edges `(child, parent)` of the given parent arrays.
    pub(super) fn tree_alpha(&self, trees: &[Vec<u32>]) -> f64 {
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
    pub(super) fn levels(&self, deep: bool) -> Result<Levels> {
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
    pub(super) fn groups_of(
        &self,
        key: &[u32],
        keys: usize,
        servers: bool,
    ) -> Result<Vec<(u32, Vec<u32>)>> {
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
    pub(super) fn server_groups(&self) -> Result<Vec<Vec<u32>>> {
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

    /// The latency of the longest route within any group.
    pub(super) fn group_alpha(&self, groups: &[Vec<u32>]) -> f64 {
        self.alpha_of(groups.iter().flat_map(|g| {
            let first = g[0] as usize;
            g.iter().map(move |&r| (first, r as usize))
        }))
    }

    pub(super) fn irregular(&self, reason: String, p0: usize, servers: bool) -> Error {
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
}
