//! The packet-level event loop: NICs, switch egress ports with per-priority
//! queues, PFC, ECN marking and DCQCN (see [`super`] for the model).

use std::collections::{HashMap, VecDeque};

use super::dcqcn::{self, Rate};
use super::{LinkModel, PacketStats, PacketStep};
use crate::error::{Error, Result};
use crate::estimate::queue::Queue;
use crate::estimate::schedules::{NONE, SendSchedule};
use crate::estimate::sim::{Dependants, FlowRoute, Routes};
use crate::network::hash::fmix64;

/// Picoseconds per µs.
const PS: f64 = 1e6;
/// Priorities of 802.1p.
const PRIOS: usize = 8;

/// Event kinds, in the order ties at one instant are taken.
const TX_DONE: u8 = 0;
const ARRIVE: u8 = 1;
const PAUSE: u8 = 2;
const CNP: u8 = 3;
const WAKE: u8 = 4;
const READY: u8 = 5;

/// An event's value in the queue (whose key is its time): kind, id and
/// aux packed so that events of one instant are taken in the order
/// (kind, id, aux).
fn event(kind: u8, id: u32, aux: u32) -> u64 {
    (u64::from(kind) << 60) | (u64::from(id) << 28) | u64::from(aux & 0x0FFF_FFFF)
}

fn unevent(v: u64) -> (u8, u32, u32) {
    (
        ((v >> 60) & 0xF) as u8,
        (v >> 28) as u32,
        (v & 0x0FFF_FFFF) as u32,
    )
}

/// Switches on `route`: a PCIe peer-to-peer hop between two GPUs on one
/// NIC (an up link followed by its `loopback`) is none.
fn switches(loopback: &[u32], route: &FlowRoute) -> u64 {
    let links = route.links();
    let direct = links
        .windows(2)
        .filter(|w| loopback[w[0] as usize] == w[1])
        .count();
    (links.len().saturating_sub(1) - direct) as u64
}

fn ps(us: f64) -> u64 {
    (us * PS).round().max(0.0) as u64
}

/// One packet in flight.
#[derive(Debug, Clone, Copy, Default)]
struct Packet {
    flow: u32,
    /// Index of its path among the flow's.
    path: u8,
    /// Index of the link it is on (or queued for) in the path.
    hop: u8,
    ecn: bool,
    payload: u32,
    wire: u32,
}

/// One send in flight: a RoCE queue pair.
#[derive(Debug, Clone)]
struct Flow {
    send: u32,
    prio: u8,
    step: u32,
    nic: u32,
    paths: Vec<FlowRoute>,
    next_path: usize,
    to_send: u64,
    to_recv: u64,
    /// Earliest time its next packet may leave (pacing), ps.
    next_at: u64,
    /// Its queue pair (the rate state of its rank pair).
    qp: u32,
    /// Last CNP its receiver sent, ps (`u64::MAX`: none).
    last_cnp: u64,
}

/// The sending end of a directed link: a NIC or a switch egress port.
#[derive(Debug, Default)]
struct Port {
    busy: bool,
    current: u32,
    /// Priorities paused by PFC (bit p).
    paused: u8,
    /// Where round-robin resumes.
    rr: usize,
    queues: [VecDeque<u32>; PRIOS],
    queued: [u64; PRIOS],
    paused_since: [u64; PRIOS],
    /// Step charged with the current pause of each priority.
    pause_step: [u32; PRIOS],
    /// NIC ports: the flows with bytes left to send.
    flows: Vec<u32>,
    /// Pending wake-up of a NIC, ps (`u64::MAX`: none).
    wake: u64,
}

/// What one run found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PacketOutcome {
    pub time_us: f64,
    pub max_link_flows: usize,
    pub stats: PacketStats,
    pub steps: Vec<PacketStep>,
}

/// A deterministic generator for ECN marking: a counter through the
/// route model's 64-bit finaliser.
struct Rng(u64);

impl Rng {
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(1);
        (fmix64(self.0) >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Engine<'a> {
    sched: &'a SendSchedule,
    fab: &'a LinkModel,
    /// Picoseconds per byte on every link.
    ps_per_byte: Vec<f64>,
    alpha_ps: u64,
    nic_ps: u64,
    pfc_delay_ps: u64,
    cnp_interval_ps: u64,
    xoff: u64,
    xon: u64,
    buffer: u64,
    kmin: f64,
    kmax: f64,
    pmax: f64,
    dcqcn: Option<dcqcn::Config>,
    /// Events keyed by their time, ps: the event-driven mode's queue.
    queue: Queue,
    ports: Vec<Port>,
    /// Bytes in a switch per (ingress link, priority), and whether XOFF
    /// was sent for it.
    ingress: Vec<u64>,
    xoff_sent: Vec<bool>,
    /// PFC frames sent per (ingress link, priority): orders a pause and
    /// a resume sent at one instant.
    pfc_gen: Vec<u32>,
    flows: Vec<Flow>,
    free_flows: Vec<u32>,
    /// DCQCN rate state per queue pair (ordered rank pair): a pair's
    /// sends in successive steps share one, as messages on one RDMA
    /// connection do.
    qps: Vec<Rate>,
    qp_of: HashMap<(u32, u32), u32>,
    packets: Vec<Packet>,
    free_packets: Vec<u32>,
    /// Flows in flight per link.
    on_link: Vec<u32>,
    deps: Dependants,
    ready: Vec<f64>,
    delivered: usize,
    end: f64,
    rng: Rng,
    stats: PacketStats,
    steps: Vec<PacketStep>,
    max_link_flows: usize,
    scratch: Vec<FlowRoute>,
}

/// Runs `sched` packet by packet on `fab` with the routes `routes` gives;
/// sends of `eager_bytes` or more wait for their receiver.
pub(crate) fn run(
    sched: &SendSchedule,
    fab: &LinkModel,
    routes: &mut impl Routes,
    eager_bytes: u64,
) -> Result<PacketOutcome> {
    let n = sched.len();
    if n >= 0x0FFF_FFFF {
        return Err(Error::Internal(format!(
            "{n} sends are more than the packet simulator can number"
        )));
    }
    let links = fab.caps.len();
    let p = &fab.params;
    let kib = |k: f64| (k * 1024.0).round() as u64;
    let xoff = kib(p.buffer_kib - p.pfc_headroom_kib);
    let dcqcn = p.dcqcn.then(|| dcqcn::Config {
        g: p.dcqcn_g,
        alpha_ps: ps(p.dcqcn_alpha_us).max(1),
        timer_ps: ps(p.dcqcn_timer_us).max(1),
        bytes: p.dcqcn_bytes,
        rai: p.dcqcn_rai_mbps * 0.125,
        rhai: p.dcqcn_rhai_mbps * 0.125,
        f: p.dcqcn_f,
        min_rate: p.dcqcn_min_mbps * 0.125,
        clamp_target: p.dcqcn_clamp_target,
    });
    let mut e = Engine {
        sched,
        fab,
        ps_per_byte: fab.caps.iter().map(|&c| PS / c).collect(),
        alpha_ps: ps(fab.alpha_us),
        nic_ps: ps(fab.nic_us),
        pfc_delay_ps: ps(p.pfc_delay_us),
        cnp_interval_ps: ps(p.cnp_interval_us),
        xoff,
        xon: xoff.saturating_sub(kib(p.pfc_hysteresis_kib)),
        buffer: kib(p.buffer_kib),
        kmin: fab.ecn.0 * 1024.0,
        kmax: fab.ecn.1 * 1024.0,
        pmax: fab.ecn.2,
        dcqcn,
        queue: Queue::default(),
        ports: (0..links)
            .map(|_| Port {
                wake: u64::MAX,
                ..Port::default()
            })
            .collect(),
        ingress: vec![0; links * PRIOS],
        xoff_sent: vec![false; links * PRIOS],
        pfc_gen: vec![0; links * PRIOS],
        flows: Vec::new(),
        free_flows: Vec::new(),
        qps: Vec::new(),
        qp_of: HashMap::new(),
        packets: Vec::new(),
        free_packets: Vec::new(),
        on_link: vec![0; links],
        deps: Dependants::new(sched, eager_bytes),
        ready: vec![0.0; n],
        delivered: 0,
        end: 0.0,
        rng: Rng(0x5EED_0F9A_C4E7),
        stats: PacketStats::default(),
        steps: vec![PacketStep::default(); sched.steps().len()],
        max_link_flows: 0,
        scratch: Vec::new(),
    };
    for (k, s) in e.steps.iter_mut().enumerate() {
        s.step = k;
    }
    for (r, &last) in sched.final_recv.iter().enumerate() {
        if last == NONE {
            e.end = e.end.max(sched.tail_us[r]);
        }
    }
    for i in 0..n {
        if e.deps.waiting[i] == 0 {
            let at = ps(sched.delay_us[i]);
            e.queue.push(at, event(READY, i as u32, 0));
        }
    }
    // The events of the current instant, the next one last. An event may
    // add others at the same instant: they join this list in order, so
    // the events of an instant are taken in (kind, id, aux) order as one
    // priority queue of (time, kind, id, aux) would take them.
    let mut instant: Vec<u64> = Vec::new();
    let mut fresh: Vec<u64> = Vec::new();
    let mut now = 0u64;
    loop {
        if instant.is_empty() {
            match e.queue.pop_min(&mut instant) {
                Some(t) => now = t,
                None => break,
            }
            instant.reverse();
        }
        let Some(v) = instant.pop() else { break };
        let (kind, id, aux) = unevent(v);
        e.stats.events += 1;
        match kind {
            TX_DONE => e.tx_done(now, id as usize)?,
            ARRIVE => e.arrive(now, id)?,
            PAUSE => e.pause(now, id as usize, ((aux >> 1) & 7) as usize, aux & 1 == 1)?,
            CNP => e.cnp(now, id as usize),
            WAKE => {
                let port = &mut e.ports[id as usize];
                if port.wake == now {
                    port.wake = u64::MAX;
                }
                e.try_start(now, id as usize)?;
            }
            _ => e.start(now, id as usize, routes)?,
        }
        if e.queue.pop_same(&mut fresh) {
            instant.append(&mut fresh);
            instant.sort_unstable_by(|a, b| b.cmp(a));
        }
    }
    if e.delivered != n {
        return Err(Error::Internal(format!(
            "the packet simulation delivered {} of {n} sends: the schedule's dependencies form a cycle, or a PFC pause never ended",
            e.delivered
        )));
    }
    for s in &e.steps {
        e.stats.max_queue_bytes = e.stats.max_queue_bytes.max(s.max_queue_bytes);
        e.stats.pfc_pauses += s.pfc_pauses;
        e.stats.paused_us += s.paused_us;
        e.stats.ecn_marks += s.ecn_marks;
        e.stats.cnps += s.cnps;
    }
    Ok(PacketOutcome {
        time_us: e.end,
        max_link_flows: e.max_link_flows,
        stats: e.stats,
        steps: e.steps,
    })
}

impl Engine<'_> {
    fn ser(&self, link: usize, wire: u32) -> u64 {
        (f64::from(wire) * self.ps_per_byte[link]).round().max(1.0) as u64
    }

    /// Send `i` is ready at `now`: it becomes a flow (or is delivered at
    /// once when it has nothing to carry).
    fn start(&mut self, now: u64, i: usize, routes: &mut impl Routes) -> Result<()> {
        self.scratch.clear();
        routes.paths(i, &mut self.scratch)?;
        let Some(&first) = self.scratch.first() else {
            return Err(Error::Internal(format!("send {i} has no route")));
        };
        let bytes = self.sched.bytes[i];
        if bytes == 0 || first.len == 0 {
            let at = now as f64 / PS + first.latency;
            return self.deliver(i, at);
        }
        if self.scratch.len() > usize::from(u8::MAX) {
            return Err(Error::Internal(format!(
                "send {i} has {} paths, more than the packet simulator sprays over",
                self.scratch.len()
            )));
        }
        let nic = first.links[0] as usize;
        let line = self.fab.caps[nic];
        let src = self.sched.src[i] as usize;
        let slot = match self.free_flows.pop() {
            Some(s) => s,
            None => {
                self.flows.push(Flow {
                    send: NONE,
                    prio: 0,
                    step: 0,
                    nic: 0,
                    paths: Vec::new(),
                    next_path: 0,
                    to_send: 0,
                    to_recv: 0,
                    next_at: 0,
                    qp: 0,
                    last_cnp: u64::MAX,
                });
                (self.flows.len() - 1) as u32
            }
        };
        for path in &self.scratch {
            for &l in path.links() {
                if l as usize >= self.on_link.len() {
                    return Err(Error::Internal(format!(
                        "send {i} is routed over link {l}, beyond the {} links",
                        self.on_link.len()
                    )));
                }
                self.on_link[l as usize] += 1;
                self.max_link_flows = self.max_link_flows.max(self.on_link[l as usize] as usize);
            }
        }
        let dst = self.sched.dst[i];
        let qp = match self.qp_of.get(&(src as u32, dst)) {
            Some(&q) => q,
            None => {
                self.qps.push(Rate::new(line, now));
                let q = (self.qps.len() - 1) as u32;
                self.qp_of.insert((src as u32, dst), q);
                q
            }
        };
        let f = &mut self.flows[slot as usize];
        f.send = i as u32;
        f.prio = self.fab.priority[src];
        f.step = self.sched.step[i];
        f.nic = nic as u32;
        f.paths.clear();
        f.paths.extend_from_slice(&self.scratch);
        // Sprayed flows start on different paths (see the module
        // documentation).
        f.next_path = (src + dst as usize) % self.scratch.len();
        f.to_send = bytes;
        f.to_recv = bytes;
        f.next_at = now;
        f.qp = qp;
        f.last_cnp = u64::MAX;
        self.ports[nic].flows.push(slot);
        self.try_start(now, nic)
    }

    /// Starts the next packet on `link` if the port is idle.
    fn try_start(&mut self, now: u64, link: usize) -> Result<()> {
        if self.ports[link].busy {
            return Ok(());
        }
        if self.fab.from_host[link] {
            return self.nic_start(now, link);
        }
        let port = &mut self.ports[link];
        let mut pick = None;
        for k in 0..PRIOS {
            let p = (port.rr + k) % PRIOS;
            if port.paused & (1 << p) == 0 && !port.queues[p].is_empty() {
                pick = Some(p);
                break;
            }
        }
        let Some(p) = pick else { return Ok(()) };
        port.rr = (p + 1) % PRIOS;
        let Some(pkt) = port.queues[p].pop_front() else {
            return Ok(());
        };
        let wire = self.packets[pkt as usize].wire;
        port.queued[p] -= u64::from(wire);
        port.busy = true;
        port.current = pkt;
        let done = now + self.ser(link, wire);
        self.queue.push(done, event(TX_DONE, link as u32, 0));
        Ok(())
    }

    /// A NIC picks, round-robin, a flow whose pacing allows a packet now
    /// and whose priority is not paused.
    fn nic_start(&mut self, now: u64, link: usize) -> Result<()> {
        let port = &self.ports[link];
        let count = port.flows.len();
        let mut pick = None;
        let mut wait = u64::MAX;
        for k in 0..count {
            let idx = (port.rr + k) % count;
            let f = &self.flows[port.flows[idx] as usize];
            if port.paused & (1 << f.prio) != 0 {
                continue;
            }
            if f.next_at <= now {
                pick = Some(idx);
                break;
            }
            wait = wait.min(f.next_at);
        }
        let Some(idx) = pick else {
            if wait != u64::MAX && wait < self.ports[link].wake {
                self.ports[link].wake = wait;
                self.queue.push(wait, event(WAKE, link as u32, 0));
            }
            return Ok(());
        };
        let slot = self.ports[link].flows[idx];
        let mtu = u64::from(self.fab.mtu);
        let header = self.fab.params.header_bytes;
        let f = &mut self.flows[slot as usize];
        let payload = f.to_send.min(mtu) as u32;
        f.to_send -= u64::from(payload);
        let wire = payload + header;
        let path = f.next_path as u8;
        f.next_path = (f.next_path + 1) % f.paths.len();
        let ser = (f64::from(wire) * self.ps_per_byte[link]).round().max(1.0) as u64;
        let rate = &mut self.qps[f.qp as usize];
        if let Some(c) = &self.dcqcn {
            rate.on_sent(now, u64::from(wire), c);
        }
        let gap = if rate.limited() {
            ((f64::from(wire) / rate.rc) * PS).round() as u64
        } else {
            0
        };
        f.next_at = now + ser.max(gap);
        let finished = f.to_send == 0;
        let pkt = self.alloc_packet(Packet {
            flow: slot,
            path,
            hop: 0,
            ecn: false,
            payload,
            wire,
        });
        self.stats.packets += 1;
        let port = &mut self.ports[link];
        if finished {
            port.flows.remove(idx);
            port.rr = if port.flows.is_empty() {
                0
            } else {
                idx % port.flows.len()
            };
        } else {
            port.rr = (idx + 1) % port.flows.len();
        }
        port.busy = true;
        port.current = pkt;
        self.queue.push(now + ser, event(TX_DONE, link as u32, 0));
        Ok(())
    }

    fn alloc_packet(&mut self, p: Packet) -> u32 {
        match self.free_packets.pop() {
            Some(i) => {
                self.packets[i as usize] = p;
                i
            }
            None => {
                self.packets.push(p);
                (self.packets.len() - 1) as u32
            }
        }
    }

    /// The packet on `link` has left the port.
    fn tx_done(&mut self, now: u64, link: usize) -> Result<()> {
        let port = &mut self.ports[link];
        port.busy = false;
        let id = port.current;
        let pkt = self.packets[id as usize];
        let flow = &self.flows[pkt.flow as usize];
        let route = &flow.paths[usize::from(pkt.path)];
        let prio = usize::from(flow.prio);
        let step = flow.step as usize;
        let next = route
            .links()
            .get(usize::from(pkt.hop) + 1)
            .copied()
            .unwrap_or(u32::MAX);
        // The packet leaves the switch's buffer: release what it held
        // against the port it came in on.
        if pkt.hop > 0 {
            let inlink = route.links[usize::from(pkt.hop) - 1] as usize;
            let k = inlink * PRIOS + prio;
            self.ingress[k] -= u64::from(pkt.wire);
            if self.xoff_sent[k] && self.ingress[k] <= self.xon {
                self.xoff_sent[k] = false;
                self.pfc_frame(now, inlink, prio, false);
            }
        }
        if self.fab.to_host[link] {
            self.receive(now, id, step)?;
        } else {
            // A PCIe peer-to-peer send between two GPUs on one NIC meets
            // no switch (the fluid modes' route has no switch latency).
            let delay = if self.fab.loopback[link] == next {
                0
            } else {
                self.alpha_ps
            };
            self.queue.push(now + delay, event(ARRIVE, id, 0));
        }
        self.try_start(now, link)
    }

    /// A packet enters the switch at the end of its current link and
    /// queues for the next one.
    fn arrive(&mut self, now: u64, id: u32) -> Result<()> {
        let pkt = &mut self.packets[id as usize];
        pkt.hop += 1;
        let pkt = *pkt;
        let flow = &self.flows[pkt.flow as usize];
        let route = &flow.paths[usize::from(pkt.path)];
        let prio = usize::from(flow.prio);
        let step = flow.step as usize;
        let hop = usize::from(pkt.hop);
        if hop >= usize::from(route.len) {
            return Err(Error::Internal(format!(
                "a packet of send {} ran past the end of its route",
                flow.send
            )));
        }
        let inlink = route.links[hop - 1] as usize;
        let out = route.links[hop] as usize;
        // NVLink is lossless by its credit flow control, whatever the
        // priority; its ports do not mark ECN.
        let lossless = self.fab.lossless & (1 << prio) != 0 || self.fab.nvlink[inlink];
        let marks = lossless && !self.fab.nvlink[out];
        // Ingress accounting and PFC.
        let k = inlink * PRIOS + prio;
        self.ingress[k] += u64::from(pkt.wire);
        let held = self.ingress[k];
        self.stats.max_ingress_bytes = self.stats.max_ingress_bytes.max(held);
        if held > self.buffer {
            self.stats.buffer_overruns += 1;
        }
        if lossless && held > self.xoff && !self.xoff_sent[k] {
            self.xoff_sent[k] = true;
            self.pfc_frame(now, inlink, prio, true);
            self.ports[inlink].pause_step[prio] = step as u32;
        }
        // ECN marking on the egress queue (RED on the instantaneous depth).
        let q = self.ports[out].queued[prio] as f64;
        if marks && q > self.kmin {
            let mark = if q > self.kmax || self.kmax <= self.kmin {
                true
            } else {
                let prob = (q - self.kmin) / (self.kmax - self.kmin) * self.pmax;
                prob > 0.0 && self.rng.unit() < prob
            };
            if mark {
                self.packets[id as usize].ecn = true;
                self.steps[step].ecn_marks += 1;
            }
        }
        let port = &mut self.ports[out];
        port.queues[prio].push_back(id);
        port.queued[prio] += u64::from(pkt.wire);
        let depth = port.queued[prio];
        let s = &mut self.steps[step];
        s.max_queue_bytes = s.max_queue_bytes.max(depth);
        self.try_start(now, out)
    }

    /// The switch at the end of `link` sends a PFC pause (`on`) or resume
    /// frame for `prio`; it takes effect `pfc_delay_us` later. Frames of
    /// one link and priority carry increasing numbers, so two sent at one
    /// instant take effect in order.
    fn pfc_frame(&mut self, now: u64, link: usize, prio: usize, on: bool) {
        let k = link * PRIOS + prio;
        self.pfc_gen[k] = self.pfc_gen[k].wrapping_add(1) & 0x00FF_FFFF;
        let aux = (self.pfc_gen[k] << 4) | ((prio as u32) << 1) | u32::from(on);
        self.queue
            .push(now + self.pfc_delay_ps, event(PAUSE, link as u32, aux));
    }

    /// PFC pauses (`on`) or resumes priority `prio` of the port sending on
    /// `link`.
    fn pause(&mut self, now: u64, link: usize, prio: usize, on: bool) -> Result<()> {
        let port = &mut self.ports[link];
        if on {
            port.paused |= 1 << prio;
            port.paused_since[prio] = now;
            let step = port.pause_step[prio] as usize;
            self.steps[step].pfc_pauses += 1;
            Ok(())
        } else {
            port.paused &= !(1 << prio);
            let step = port.pause_step[prio] as usize;
            self.steps[step].paused_us += (now - port.paused_since[prio]) as f64 / PS;
            self.try_start(now, link)
        }
    }

    /// A CNP reaches the sender of queue pair `qp`.
    fn cnp(&mut self, now: u64, qp: usize) {
        if let Some(c) = &self.dcqcn {
            self.qps[qp].on_cnp(now, c);
        }
    }

    /// A packet reaches its receiver's NIC.
    fn receive(&mut self, now: u64, id: u32, step: usize) -> Result<()> {
        let pkt = self.packets[id as usize];
        self.free_packets.push(id);
        let slot = pkt.flow as usize;
        let f = &mut self.flows[slot];
        f.to_recv -= u64::from(pkt.payload);
        if pkt.ecn
            && self.dcqcn.is_some()
            && (f.last_cnp == u64::MAX || now - f.last_cnp >= self.cnp_interval_ps)
        {
            f.last_cnp = now;
            let hops = switches(&self.fab.loopback, &f.paths[usize::from(pkt.path)]);
            let at = now + hops * self.alpha_ps;
            self.queue.push(at, event(CNP, f.qp, 0));
            self.steps[step].cnps += 1;
        }
        if f.to_recv == 0 {
            let send = f.send as usize;
            f.send = NONE;
            for path in &f.paths {
                for &l in path.links() {
                    self.on_link[l as usize] -= 1;
                }
            }
            self.free_flows.push(slot as u32);
            let at = (now + self.nic_ps) as f64 / PS;
            let s = &mut self.steps[step];
            s.end_us = s.end_us.max(at);
            self.deliver(send, at)?;
        }
        Ok(())
    }

    /// Send `i` is delivered at `at` µs: its dependants may become ready.
    fn deliver(&mut self, i: usize, at: f64) -> Result<()> {
        self.delivered += 1;
        self.end = self.end.max(at);
        let dst = self.sched.dst[i] as usize;
        if self.sched.final_recv.get(dst) == Some(&(i as u32)) {
            self.end = self.end.max(at + self.sched.tail_us[dst]);
        }
        let (lo, hi) = (
            self.deps.fan_start[i] as usize,
            self.deps.fan_start[i + 1] as usize,
        );
        for k in lo..hi {
            let j = self.deps.fan[k] as usize;
            self.ready[j] = self.ready[j].max(at);
            self.deps.waiting[j] -= 1;
            if self.deps.waiting[j] == 0 {
                let t = self.ready[j] + self.sched.delay_us[j];
                if !(t.is_finite() && t >= 0.0) {
                    return Err(Error::Internal(format!("send {j} is ready at {t} µs")));
                }
                self.queue.push(ps(t), event(READY, j as u32, 0));
            }
        }
        Ok(())
    }
}
