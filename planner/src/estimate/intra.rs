//! The intra-server tier of an estimate (issue 18): one rank per GPU when
//! a NIC carries several GPUs, and the GPUs of an NVLink/NVSwitch domain
//! joined by links of their own.
//!
//! Model: every GPU of a domain has one up and one down link at the
//! domain's per-GPU Gbps into the server's switch. A `mesh` is
//! approximated the same way (each GPU's NVLink bandwidth pooled, as if
//! its links met in a switch): a flow between two GPUs of one domain uses
//! the sender's up and the receiver's down link and nothing else. A flow
//! leaving the server goes from the GPU through its NIC into the fabric;
//! the GPUs sharing a NIC share that NIC's links (the PCIe path is taken
//! to be at least as fast as the NIC, as on every bundled server). Two
//! GPUs on one NIC without a common domain talk through the NIC's links
//! (PCIe peer-to-peer capped at the NIC's speed). A plan without the tier
//! (no domain, no shared NIC) gets `None` and the estimate is unchanged.

use crate::error::{Error, Result};
use crate::plan::Plan;

use super::params;

/// Where each rank's GPU sits and its NVLink links.
#[derive(Debug, Clone)]
pub(super) struct Tier {
    /// Per rank: the server (index into the plan's servers).
    pub(super) server: Vec<u32>,
    /// Per rank: the domain (global index), if its GPU is in one.
    pub(super) domain: Vec<Option<u32>>,
    /// Per rank: its NVLink up link id (down is `+ 1`), when in a domain.
    link: Vec<u32>,
    /// Capacities of the NVLink links, bytes/µs, from link id `base`.
    pub(super) caps: Vec<f64>,
    /// Slowest NVLink link of any rank in a domain, bytes/µs (infinite
    /// when no rank is in one).
    pub(super) nv_w: f64,
    /// True when every rank is in a domain spanning its server's ranks.
    pub(super) all_nvlink: bool,
}

/// True when the plan has an intra-server tier
/// ([`Plan::has_intra_server_tier`]).
pub(super) fn present(plan: &Plan) -> bool {
    plan.has_intra_server_tier()
}

/// The ranks of a plan when every GPU takes part ([`Plan::default_ranks`],
/// the one count `ranks` shares).
pub fn default_ranks(plan: &Plan) -> usize {
    plan.default_ranks()
}

impl Tier {
    /// One rank per GPU, in the order of `order` (sub-nodes) and of each
    /// NIC's GPUs, cut to `count`; the rank table (rank -> sub-node) and
    /// the tier. NVLink link ids start at `base`.
    pub(super) fn build(
        plan: &Plan,
        order: &[usize],
        count: Option<usize>,
        base: usize,
    ) -> Result<(Vec<usize>, Tier)> {
        let mut server_of = vec![0u32; plan.sub_node_list.len()];
        for (i, s) in plan.servers.iter().enumerate() {
            for &sn in &s.sub_nodes {
                server_of[sn] = i as u32;
            }
        }
        // Global domain index of (server, domain).
        let mut first_domain = Vec::with_capacity(plan.servers.len());
        let mut gbps = Vec::new();
        for s in &plan.servers {
            first_domain.push(gbps.len());
            gbps.extend(s.nvlink.iter().map(|d| d.gbps));
        }
        let mut table = Vec::new();
        let mut tier = Tier {
            server: Vec::new(),
            domain: Vec::new(),
            link: Vec::new(),
            caps: Vec::new(),
            nv_w: f64::INFINITY,
            all_nvlink: false,
        };
        for &sn in order {
            let server = server_of[sn];
            let s = &plan.servers[server as usize];
            for gpu in plan.sub_node_list[sn].gpus() {
                let k = gpu.and_then(|g| s.nvlink.iter().position(|d| d.gpu_indices.contains(&g)));
                table.push(sn);
                tier.server.push(server);
                match k {
                    Some(k) => {
                        let d = first_domain[server as usize] + k;
                        let cap = params::bytes_per_us(f64::from(gbps[d]));
                        tier.domain.push(Some(d as u32));
                        tier.link.push((base + tier.caps.len()) as u32);
                        tier.caps.extend([cap, cap]);
                        tier.nv_w = tier.nv_w.min(cap);
                    }
                    None => {
                        tier.domain.push(None);
                        tier.link.push(u32::MAX);
                    }
                }
            }
        }
        let total = table.len();
        let x = count.unwrap_or(total);
        if x == 0 || x > total {
            return Err(Error::parameter(
                "ranks",
                format!(
                    "{x} ranks: this plan has {total} GPUs (one rank per GPU on a NIC shared by several or in an NVLink domain); give 1 to {total}"
                ),
            ));
        }
        table.truncate(x);
        tier.server.truncate(x);
        tier.domain.truncate(x);
        tier.link.truncate(x);
        // Every rank in a domain, one domain per server (the ranks cut
        // off keep their links, unused).
        let mut domain_of_server: Vec<Option<Option<u32>>> = vec![None; plan.servers.len()];
        tier.all_nvlink = tier
            .server
            .iter()
            .zip(&tier.domain)
            .all(|(&s, &d)| d.is_some() && *domain_of_server[s as usize].get_or_insert(d) == d);
        Ok((table, tier))
    }

    /// The NVLink links (up, down) of a flow from rank `s` to rank `d`
    /// when both GPUs are in one domain.
    pub(super) fn nvlink_route(&self, s: usize, d: usize) -> Option<[u32; 2]> {
        match (self.domain[s], self.domain[d]) {
            (Some(a), Some(b)) if a == b => Some([self.link[s], self.link[d] + 1]),
            _ => None,
        }
    }

    /// True when ranks `a` and `b` share an NVLink domain.
    pub(super) fn same_domain(&self, a: usize, b: usize) -> bool {
        self.nvlink_route(a, b).is_some()
    }
}
