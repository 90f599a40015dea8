//! The packet-level mode (`simulate --method packet`): the plan's NICs and
//! switches moving MTU-sized packets through output queues, with PFC on
//! the lossless priorities, ECN marking and DCQCN at the senders.
//!
//! # Model
//!
//! Every send of the [`SendSchedule`] (the same schedule, dependencies and
//! rendezvous gates as the event-driven mode, [`super::sim::Dependants`])
//! becomes a flow on its routes ([`crate::network::Network::flow_routes`]
//! under the routing policy: one path for `ecmp` and `dmodk`; under
//! `spray` the flow's packets go round-robin over every equal-cost path,
//! per-packet spraying, each flow starting at path `(src + dst) mod
//! paths` so that the flows of one switch do not all start on one spine). Its bytes are cut into packets of `mtu_bytes`
//! payload (default: the RoCE MTU that fits the plan's port MTU, 4096
//! bytes for 9216), each carrying `header_bytes` more on the wire (default
//! 0: link speeds count payload, as in the other modes; `nic=connectx`
//! gives 82, RoCEv2's headers, preamble and inter-frame gap, so a
//! 4096-byte payload takes 4178 bytes of link time).
//!
//! - **NICs.** A sub-node's NIC sends one packet at a time at its link's
//!   speed, round-robin over its flows whose pacing allows a packet and
//!   whose priority is not paused. A flow's priority is the class of the
//!   plan's QoS intent its source marks ([`crate::qos::QosIntent::class_for`]):
//!   on a BiGraph with per-direction classes, traffic sourced in the upper
//!   part is priority 3 and in the lower part 4, as EFLOPS Sec. IV-B has.
//! - **Switches** are output-queued and store-and-forward: a packet that
//!   has fully arrived enters the switch `alpha_us` later (the switch's
//!   latency and the cable) and queues at the egress port of the next link
//!   of its route, one FIFO per priority; a port sends one packet at a time
//!   at its link's speed, round-robin over the priorities that have
//!   packets and are not paused.
//! - **Receivers** take packets at line rate. A send is delivered `nic_us`
//!   after its last packet has arrived, and its dependants become ready
//!   then, as in the event-driven mode.
//!
//! An isolated send of b bytes over h switches on links of speed w thus
//! takes `nic_us + h alpha_us + b / w + h s / w` (s the wire size of its
//! largest packet, which paces the pipeline of equal links): the fluid
//! model's `nic_us + h alpha_us + b / w` plus one packet's
//! store-and-forward per switch. The tests hold the two to that
//! difference exactly where the fluid model is exact.
//!
//! # The intra-server tier
//!
//! With NVLink domains or NICs shared by several GPUs (issue 18) there is
//! one rank per GPU ([`crate::estimate::default_ranks`]) and the links are
//! those of the fluid modes ([`crate::estimate::intra`]), so the three
//! modes route every send the same way:
//!
//! - **NVLink.** Every GPU of a domain has an up and a down link at the
//!   domain's per-GPU speed into its NVSwitch (a `mesh` is pooled the
//!   same way). A GPU's NVLink up link is a sending port of its own, like
//!   a NIC; the NVSwitch is a switch of the model (store-and-forward,
//!   `alpha_us`, an output queue per down link). NVLink's credit flow
//!   control is modelled as PFC with the same thresholds on every
//!   priority (NVLink does not drop), and its ports never mark ECN, so
//!   DCQCN never slows a flow inside a server.
//! - **Shared NICs.** The GPUs behind one NIC send through its one port:
//!   their flows take packets from it round-robin, as flows of one rank
//!   do. Two GPUs on one NIC without a common domain talk through the
//!   NIC's up and down link (PCIe peer-to-peer at the NIC's speed at most,
//!   as the fluid modes have it), with no switch latency between the two
//!   links (a packet is still stored and forwarded once).
//! - **Channels** of `channels=pair` (a tree edge's own link between two
//!   ranks) are a sending port at one end and a receiver at the other.
//!
//! # Buffers and PFC
//!
//! Each switch counts, per ingress port and lossless priority, the bytes
//! that came in on it and have not yet left the switch. Above XOFF
//! (`buffer_kib - pfc_headroom_kib`) it sends PFC pause for that priority
//! to the upstream port (a switch port or a NIC), which stops sending that
//! priority `pfc_delay_us` later (a packet on the wire finishes); at or
//! below XON (XOFF minus `pfc_hysteresis_kib`) it sends resume, which takes
//! effect as late. The default buffer, 640 KiB per port, is a Broadcom
//! Tomahawk 2's 42 MB shared on-chip buffer over its 64 ports of 100 GbE
//! (BCM56970). Real switches share that buffer dynamically, so a port may
//! take more while others are idle and less when many are congested; the
//! static threshold here is the even share. The headroom default, 64 KiB,
//! covers what arrives after XOFF at 100 Gbps: `pfc_delay_us` and
//! `alpha_us` of wire and pipeline both ways (about 25 KB) and two
//! 9216-byte frames in flight. The model does not drop: a port that holds
//! more than `buffer_kib` is counted (`buffer_overruns`), which with the
//! defaults means the headroom was too small.
//!
//! # ECN and DCQCN
//!
//! A packet entering an egress queue of a lossless priority whose depth
//! exceeds Kmin is marked with probability `(q - Kmin) / (Kmax - Kmin)
//! Pmax`, and always above Kmax (RED on the instantaneous queue). Kmin,
//! Kmax and Pmax default to the plan's QoS intent (`ecn` min_kb, max_kb,
//! probability: what its switches are configured with, 150 KiB, 1500 KiB
//! and 100 % by default); Zhu et al. used 5 KB, 200 KB and 1 %. Marking
//! draws from a fixed-seed generator, so runs repeat exactly.
//!
//! A receiver that gets a marked packet sends a CNP at once unless it sent
//! one for that flow less than `cnp_interval_us` before; the CNP reaches
//! the sender `alpha_us` per switch later (a strict-priority class, never
//! queued). The sender runs DCQCN's reaction point ([`dcqcn`]) per queue
//! pair (rank pair). The defaults ([`PacketParams::zhu2015`]) are the
//! values of Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015 (g = 1/256, timer and α period 55 µs, byte
//! counter 10 MB, F = 5, R_AI = 40 Mbps, a CNP per flow per 50 µs; R_HAI
//! = 400 Mbps and the 100 Mbps floor assumed). `--param nic=connectx`
//! gives an NVIDIA ConnectX NIC's firmware defaults
//! ([`PacketParams::connectx`], with the source of each): g = 5/1024 with
//! α updated every 1 µs, a 300 µs timer, a 32,767-byte counter, F = 1,
//! R_AI = 5 Mbps, R_HAI = 50 Mbps, a 1 Mbps floor, a CNP per flow at most
//! every 4 µs, and a cut that keeps its target after another cut. They
//! are not the default yet: docs/packet-sim.md ("Which NIC") says why. A
//! flow below line rate spaces its packets by `size / rate`.
//!
//! # Output and cost
//!
//! Besides the time, a run reports per step (the step of the send a
//! packet belongs to) the deepest egress queue, the PFC pauses a packet of
//! the step triggered and how long they held their port, the ECN marks
//! and the CNPs ([`PacketStep`]), and their totals ([`PacketStats`]).
//! Events go through the event-driven mode's queue
//! ([`crate::estimate::queue`], a monotone radix heap) keyed by integer
//! picoseconds; the events of one instant are taken in (kind, id, aux)
//! order, including those an event adds at its own instant, and the
//! marking draws are deterministic. Every packet is simulated at every
//! hop (no batching): the cost is about two queue operations per packet
//! per link, about 0.5 µs of CPU per packet, so a
//! 256 MiB allreduce over 1,024 ranks (134 million packets) takes about a
//! minute; docs/benchmarks.md has the figures.

mod dcqcn;
mod engine;

use serde::Serialize;

use crate::checked::CheckedPlan;
use crate::error::Result;
use crate::network::Network;
use crate::ranks::Link;

pub use super::params::{PACKET_PARAMS, PacketParams, roce_mtu};
pub(crate) use engine::run;

/// The figures of one step of a packet-level run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PacketStep {
    /// Step index, from 0.
    pub step: usize,
    /// When the last send of the step was delivered, µs.
    pub end_us: f64,
    /// Deepest egress queue (one port and priority) a packet of the step
    /// joined, bytes, the packet included.
    pub max_queue_bytes: u64,
    /// PFC pauses that packets of the step triggered.
    pub pfc_pauses: u64,
    /// How long those pauses held their ports, summed over ports, µs.
    pub paused_us: f64,
    /// Packets of the step marked with ECN.
    pub ecn_marks: u64,
    /// CNPs their receivers sent.
    pub cnps: u64,
}

/// The totals of a packet-level run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PacketStats {
    /// Packets sent.
    pub packets: u64,
    /// Events processed.
    pub events: u64,
    /// Deepest egress queue, bytes.
    pub max_queue_bytes: u64,
    /// Most bytes one ingress port and priority held in a switch.
    pub max_ingress_bytes: u64,
    /// Packets that found their ingress port holding more than
    /// `buffer_kib` (a real switch would have dropped them).
    pub buffer_overruns: u64,
    /// PFC pauses.
    pub pfc_pauses: u64,
    /// Time ports spent paused, summed, µs.
    pub paused_us: f64,
    /// ECN marks.
    pub ecn_marks: u64,
    /// CNPs sent.
    pub cnps: u64,
}

/// The plan as the packet engine sees it.
#[derive(Debug, Clone)]
pub(crate) struct LinkModel {
    /// Capacity of every directed link, bytes/µs.
    pub caps: Vec<f64>,
    /// Links that start at a NIC.
    pub from_host: Vec<bool>,
    /// Links that end at a NIC.
    pub to_host: Vec<bool>,
    /// Links of an NVLink domain (a GPU's up and down link to its
    /// NVSwitch): lossless by NVLink's credit flow control whatever the
    /// priority, and never ECN-marked.
    pub nvlink: Vec<bool>,
    /// Per NIC up link, that NIC's down link (`u32::MAX` for every other
    /// link): a packet going from the one to the other is a PCIe
    /// peer-to-peer send between two GPUs on one NIC, with no switch
    /// latency between the two links.
    pub loopback: Vec<u32>,
    /// Priority of every rank's traffic.
    pub priority: Vec<u8>,
    /// Lossless priorities (bit p).
    pub lossless: u8,
    /// Packet payload, bytes.
    pub mtu: u32,
    /// ECN Kmin and Kmax (KiB) and Pmax.
    pub ecn: (f64, f64, f64),
    /// Latency of a switch, µs.
    pub alpha_us: f64,
    /// Latency at the ends of a message, µs.
    pub nic_us: f64,
    pub params: PacketParams,
}

impl LinkModel {
    /// The fabric of `plan` for ranks on the sub-nodes `table`, links of
    /// capacity `caps`: the plan's links (`net`), then `nvlink_links`
    /// NVLink links of the intra-server tier (a GPU's up link, then its
    /// down link, [`crate::estimate::intra`]), then any channels of their
    /// own (`channels=pair`: a link from one rank straight to another).
    pub(crate) fn new(
        plan: &CheckedPlan,
        net: &Network<'_>,
        table: &[usize],
        caps: &[f64],
        nvlink_links: usize,
        params: &super::Params,
    ) -> Result<Self> {
        let p = params.packet.clone();
        p.check()?;
        let qos = plan.qos_intent();
        let links = caps.len();
        let fabric = net.link_count();
        let mut from_host = vec![false; links];
        let mut to_host = vec![false; links];
        let mut nvlink = vec![false; links];
        let mut loopback = vec![u32::MAX; links];
        for id in 0..links {
            match net.link(id) {
                Some(Link::Up { sub_node, port }) => {
                    from_host[id] = true;
                    loopback[id] = net.down_link_of_port(sub_node, port) as u32;
                }
                Some(Link::Down { .. }) => to_host[id] = true,
                Some(Link::InterSwitch { .. }) => {}
                None if id < fabric => {}
                None if id < fabric + nvlink_links => {
                    nvlink[id] = true;
                    // Up (from the GPU) at even offsets, down at odd.
                    if (id - fabric).is_multiple_of(2) {
                        from_host[id] = true;
                    } else {
                        to_host[id] = true;
                    }
                }
                None => {
                    from_host[id] = true;
                    to_host[id] = true;
                }
            }
        }
        let priority = table
            .iter()
            .map(|&sn| {
                let part = net
                    .switch_of(sn)
                    .and_then(|s| plan.switch_list[s].part_or_tier.part());
                qos.class_for(part).map_or(0, |c| c.priority & 7)
            })
            .collect();
        let lossless = qos
            .lossless_priorities()
            .iter()
            .fold(0u8, |m, &p| m | (1 << (p & 7)));
        let ecn = (
            p.ecn_kmin_kib.unwrap_or(f64::from(qos.ecn.min_kb)),
            p.ecn_kmax_kib.unwrap_or(f64::from(qos.ecn.max_kb)),
            p.ecn_pmax.unwrap_or(f64::from(qos.ecn.probability) / 100.0),
        );
        Ok(Self {
            caps: caps.to_vec(),
            from_host,
            to_host,
            nvlink,
            loopback,
            priority,
            lossless,
            mtu: p.mtu_bytes.unwrap_or_else(|| roce_mtu(qos.mtu)),
            ecn,
            alpha_us: params.alpha_us,
            nic_us: params.nic_us,
            params: p,
        })
    }
}

#[cfg(test)]
mod tests;
