//! Building and removing a lab: namespaces, veth cables shaped by `tc` (HTB) to the scaled rates, bridges, addresses, static ECMP routes and forwarding; changing one cable (degrade, cut, restore); installing a run's pins.

use std::path::Path;
use std::time::{Duration, Instant};

use planner::network::{Lab, Pin};
use serde::Serialize;

use super::error::{Error, Result};
use super::frr;
use super::port_name;
use super::state::{self, Changed, Routing, State};
use super::sys::{self, Sys};
use super::trust;

/// Milliseconds of traffic at the cable's rate each shaper queues.
const QUEUE_MS: u64 = 200;

/// Policy-rule priority of the pins (below the main table's 32766).
const PIN_PRIORITY: u32 = 1000;

/// The routing table of the pins that leave by `port`.
fn pin_table(port: u32) -> u64 {
    10_000 + u64::from(port)
}

/// What `lab up` was asked.
#[derive(Debug, Clone)]
pub struct UpOptions {
    /// The lab's name.
    pub name: String,
    /// The state directory.
    pub state_dir: std::path::PathBuf,
    /// The rate of the plan's fastest NIC cable, kbit/s.
    pub rate_kbit: u64,
    /// Static routes, or FRR for `push` to configure.
    pub routing: Routing,
    /// BGP only: per physical switch, the configuration its FRR starts
    /// with (the plan's rendered `frr.conf`, `lab up --preload-config`);
    /// a switch without one starts with the minimal configuration.
    pub frr_configs: std::collections::BTreeMap<String, String>,
}

/// What `lab up` made, and how long it took.
#[derive(Debug, Clone, Serialize)]
pub struct UpReport {
    /// The lab's name.
    pub name: String,
    /// Namespaces made (switches and sub-nodes).
    pub namespaces: usize,
    /// Switch namespaces.
    pub switches: usize,
    /// Sub-node namespaces.
    pub hosts: usize,
    /// Veth pairs (NIC cables and inter-switch cables).
    pub cables: usize,
    /// Rate of the fastest NIC cable, kbit/s.
    pub rate_kbit: u64,
    /// `static` or `bgp`.
    pub routing: Routing,
    /// Seconds taken.
    pub seconds: f64,
}

/// Builds `lab` (from `plan_file`) in network namespaces. A lab of the
/// same name that is up is an error; a failure half-way removes what was
/// made.
pub fn up(sys: &Sys, lab: Lab, plan_file: &str, o: &UpOptions) -> Result<UpReport> {
    let start = Instant::now();
    state::check_name(&o.name)?;
    if o.rate_kbit < 8 {
        return Err(Error::parameter(
            "rate",
            "below 8 kbit/s: give a rate such as 100mbit",
        ));
    }
    if let Some(_old) = state::read(&o.state_dir, &o.name)? {
        return Err(Error::AlreadyUp {
            name: o.name.clone(),
            state: state::path(&o.state_dir, &o.name).display().to_string(),
        });
    }
    let mut st = State {
        version: state::VERSION,
        name: o.name.clone(),
        phase: "building".to_string(),
        plan_file: plan_file.to_string(),
        rate_kbit: o.rate_kbit,
        namespaces: Vec::new(),
        lab,
        changed: Vec::new(),
        pins: Vec::new(),
        routing: o.routing,
        frr_dirs: Vec::new(),
        mark: trust::new_mark()?,
    };
    if o.routing == Routing::Bgp {
        frr::check()?;
        check_whole_switches(&st)?;
    }
    let switch_ns = st.switch_namespaces();
    let switches = switch_ns.len();
    let hosts = st.lab.hosts.len();
    if o.routing == Routing::Bgp {
        st.frr_dirs = switch_ns
            .iter()
            .flat_map(|ns| [frr::etc_dir(ns), frr::run_dir(ns)])
            .map(|d| d.display().to_string())
            .collect();
        if let Some(clash) = st.frr_dirs.iter().find(|d| Path::new(d).exists()) {
            return Err(Error::Leftover {
                name: o.name.clone(),
                namespace: format!("FRR instance directory {clash}"),
                state_dir: o.state_dir.display().to_string(),
            });
        }
    }
    st.namespaces = switch_ns
        .into_iter()
        .chain((0..hosts).map(|i| st.host_ns(i)))
        .collect();
    let existing = sys::namespaces();
    if let Some(clash) = st.namespaces.iter().find(|n| existing.contains(n)) {
        return Err(Error::Leftover {
            name: o.name.clone(),
            namespace: clash.clone(),
            state_dir: o.state_dir.display().to_string(),
        });
    }
    // The state file lists every namespace before the first is made.
    state::write(&o.state_dir, &st)?;
    match build(sys, &st, &o.state_dir, &o.frr_configs) {
        Ok(()) => {
            st.phase = "up".to_string();
            state::write(&o.state_dir, &st)?;
        }
        Err(e) => {
            let _ = remove_all(sys, &st);
            let _ = state::remove(&o.state_dir, &o.name);
            return Err(e);
        }
    }
    Ok(UpReport {
        name: o.name.clone(),
        namespaces: st.namespaces.len(),
        switches,
        hosts,
        cables: hosts + st.lab.cables.len(),
        rate_kbit: o.rate_kbit,
        routing: o.routing,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Refuses a BGP lab of a plan with split switches: its two VLAN halves
/// are two VRFs of one FRR instance (the `frr` render's `vrf Vrf<vlan>`
/// blocks), which needs Linux VRF devices, and this machine's kernel has
/// none (no CONFIG_NET_VRF); a whole switch routes in the default VRF.
fn check_whole_switches(st: &State) -> Result<()> {
    for (j, name) in st.physicals().iter().enumerate() {
        let halves = st.halves(j);
        if halves.len() > 1 {
            let names: Vec<&str> = halves
                .iter()
                .map(|&h| st.lab.switches[h].name.as_str())
                .collect();
            return Err(Error::parameter(
                "routing",
                format!(
                    "physical switch {name} is split into VLAN halves {}: its two halves are two VRFs of one FRR, which needs Linux VRF devices in one namespace, and the lab does not build them (docs/lab.md, \"BGP\"); run this plan with --routing static, or a plan without split switches with --routing bgp",
                    names.join(" and ")
                ),
            ));
        }
    }
    Ok(())
}

/// Brings a namespace's loopback up with the lab's mark as its alias
/// ([`trust`]).
fn lo_up(st: &State) -> String {
    match trust::mark(st) {
        Some(m) => format!("link set lo alias {m} up"),
        None => "link set lo up".to_string(),
    }
}

fn build(
    sys: &Sys,
    st: &State,
    dir: &Path,
    frr_configs: &std::collections::BTreeMap<String, String>,
) -> Result<()> {
    let lab = &st.lab;
    // Root namespace: the namespaces, then each veth pair made directly
    // inside its two namespaces.
    let mut root: Vec<String> = st
        .namespaces
        .iter()
        .map(|n| format!("netns add {n}"))
        .collect();
    for (i, h) in lab.hosts.iter().enumerate() {
        root.push(format!(
            "link add {} netns {} type veth peer name eth0 netns {}",
            port_name(h.port),
            st.switch_ns(h.switch),
            st.host_ns(i)
        ));
    }
    for c in &lab.cables {
        root.push(format!(
            "link add {} netns {} type veth peer name {} netns {}",
            port_name(c.a_port),
            st.switch_ns(c.a),
            port_name(c.b_port),
            st.switch_ns(c.b)
        ));
    }
    sys.ip_batch(None, &root, false)?;

    for (s, sw) in lab.switches.iter().enumerate() {
        let ns = st.switch_ns(s);
        let mut lines = vec![lo_up(st), "link add br0 type bridge".to_string()];
        for p in &sw.access_ports {
            lines.push(format!(
                "link set {} mtu {} master br0 up",
                port_name(*p),
                sw.mtu
            ));
        }
        lines.push(format!("link set br0 mtu {} up", sw.mtu));
        for g in &sw.gateways {
            lines.push(format!("addr add {g} dev br0"));
        }
        for p in &sw.routed_ports {
            lines.push(format!("addr add {} dev {}", p.address, port_name(p.port)));
            lines.push(format!("link set {} mtu {} up", port_name(p.port), sw.mtu));
        }
        if st.routing == Routing::Static {
            for r in &sw.routes {
                lines.push(route_line(r));
            }
        }
        sysctl(sys, &ns)?;
        if st.routing == Routing::Bgp {
            // A Linux switch forwards IPv6 too (FRR reports it, and the
            // frr render leaves it at that default).
            sys.exec(
                &ns,
                &["sysctl", "-q", "-w", "net.ipv6.conf.all.forwarding=1"],
                false,
            )?;
        }
        sys.ip_batch(Some(&ns), &lines, false)?;
        let mut tc = Vec::new();
        for h in lab.hosts.iter().filter(|h| h.switch == s) {
            tc.extend(shaper(&port_name(h.port), st.scaled(h.gbps), h.mtu));
        }
        for cable in &lab.cables {
            let rate = st.scaled(cable.gbps);
            if cable.a == s {
                tc.extend(shaper(&port_name(cable.a_port), rate, sw.mtu));
            }
            if cable.b == s {
                tc.extend(shaper(&port_name(cable.b_port), rate, sw.mtu));
            }
        }
        sys.tc_batch(&ns, &tc, false)?;
    }
    for (i, h) in lab.hosts.iter().enumerate() {
        let ns = st.host_ns(i);
        // A RoCE NIC sends at its rate from the first byte; TCP would
        // restart slow start on a connection idle for a retransmission
        // timeout, and halving-doubling uses each connection in two steps
        // of an iteration only.
        sys.exec(
            &ns,
            &["sysctl", "-q", "-w", "net.ipv4.tcp_slow_start_after_idle=0"],
            false,
        )?;
        let lines = vec![
            lo_up(st),
            format!("link set eth0 mtu {} up", h.mtu),
            format!("addr add {}/{} dev eth0", h.address, h.prefix_len),
            format!("route add default via {}", h.gateway),
        ];
        sys.ip_batch(Some(&ns), &lines, false)?;
        sys.tc_batch(&ns, &shaper("eth0", st.scaled(h.gbps), h.mtu), false)?;
    }
    if st.routing == Routing::Bgp {
        let run = dir.join(format!("{}.run", st.name));
        for (s, sw) in lab.switches.iter().enumerate() {
            let ns = st.switch_ns(s);
            frr::start(
                sys,
                &ns,
                &sw.physical,
                frr_configs.get(&sw.physical).map(String::as_str),
            )?;
            frr::start_lldpd(
                sys,
                &ns,
                &sw.physical,
                "swp*",
                None,
                &frr::lldpd_socket(&ns),
            )?;
        }
        for (i, h) in lab.hosts.iter().enumerate() {
            let ns = st.host_ns(i);
            let socket = run.join("lldpd").join(format!("{ns}.socket"));
            // A sub-node announces its server and its NIC, as the plan
            // names them (what `push` verifies on the switch port).
            frr::start_lldpd(sys, &ns, &h.server, "eth0", Some(&h.nic), &socket)?;
        }
    }
    Ok(())
}

/// `route add PREFIX nexthop via A dev pX nexthop via B dev pY`.
fn route_line(r: &planner::network::lab::LabRoute) -> String {
    match r.via.as_slice() {
        [one] => format!(
            "route add {} via {} dev {}",
            r.prefix,
            one.address,
            port_name(one.port)
        ),
        many => {
            let hops: Vec<String> = many
                .iter()
                .map(|h| format!("nexthop via {} dev {}", h.address, port_name(h.port)))
                .collect();
            format!("route add {} {}", r.prefix, hops.join(" "))
        }
    }
}

/// Forwarding on, reverse-path filtering off (pins and ECMP make paths
/// asymmetric), the kernel's ECMP hash over the 5-tuple.
fn sysctl(sys: &Sys, ns: &str) -> Result<()> {
    sys.exec(
        ns,
        &[
            "sysctl",
            "-q",
            "-w",
            "net.ipv4.ip_forward=1",
            "net.ipv4.conf.all.rp_filter=0",
            "net.ipv4.conf.default.rp_filter=0",
            "net.ipv4.fib_multipath_hash_policy=1",
        ],
        false,
    )?;
    Ok(())
}

/// The shaper of one veth end at `kbit`: an HTB class at the cable's rate
/// with two leaves, small packets (TCP acknowledgements, the engine's
/// control messages: IPv4 total length under 64 bytes) served first, the
/// rest after, each leaf a byte FIFO of 20 ms at the rate. Without the
/// first leaf, the acknowledgements of a flow one way wait behind a full
/// queue of the flow the other way, and every bidirectional exchange
/// (halving-doubling's) runs at a fraction of the rate; real RoCE NICs
/// acknowledge in hardware and have no such effect. This kernel has no
/// `prio`, `sfq` or `fq_codel`, so the classes are HTB's, with a `u32`
/// filter.
fn shaper(dev: &str, kbit: u64, mtu: u32) -> Vec<String> {
    let frame = u64::from(mtu) + 14;
    let burst = (kbit * 1000 / 8 / 1000).max(2 * frame);
    let queue = (kbit * 1000 / 8 * QUEUE_MS / 1000).max(4 * frame);
    let small = (kbit / 10).max(8);
    vec![
        format!("qdisc replace dev {dev} root handle 1: htb default 20"),
        format!(
            "class replace dev {dev} parent 1: classid 1:1 htb rate {kbit}kbit ceil {kbit}kbit burst {burst} cburst {burst} quantum {frame}"
        ),
        format!(
            "class replace dev {dev} parent 1:1 classid 1:10 htb rate {small}kbit ceil {kbit}kbit burst {burst} cburst {burst} prio 0 quantum {frame}"
        ),
        format!(
            "class replace dev {dev} parent 1:1 classid 1:20 htb rate {kbit}kbit ceil {kbit}kbit burst {burst} cburst {burst} prio 1 quantum {frame}"
        ),
        format!("qdisc replace dev {dev} parent 1:10 handle 10: bfifo limit {queue}"),
        format!("qdisc replace dev {dev} parent 1:20 handle 20: bfifo limit {queue}"),
        format!(
            "filter replace dev {dev} parent 1: protocol ip prio 1 handle 800::1 u32 match u16 0x0000 0xffc0 at 2 flowid 1:10"
        ),
    ]
}

/// What `lab down` removed.
#[derive(Debug, Clone, Serialize)]
pub struct DownReport {
    /// The lab's name.
    pub name: String,
    /// Namespaces removed.
    pub namespaces: usize,
    /// Processes that were still running in them and were stopped.
    pub processes: usize,
    /// Seconds taken.
    pub seconds: f64,
}

/// Removes lab `name`: stops what runs in its namespaces, removes every
/// namespace its state file lists (their veths go with them) and the
/// state file.
pub fn down(sys: &Sys, dir: &Path, name: &str) -> Result<DownReport> {
    let start = Instant::now();
    state::check_name(name)?;
    trust::check_file(dir, name)?;
    let st = state::require(dir, name)?;
    // Nothing is removed unless everything the file names is the lab's.
    trust::check(sys, &st, &state::path(dir, name), dir)?;
    let (namespaces, processes) = remove_all(sys, &st)?;
    // The run's files (host file, step socket) go with the lab.
    let work = dir.join(format!("{name}.run"));
    if work.exists() {
        std::fs::remove_dir_all(&work)
            .map_err(|e| Error::io(format!("removing {}", work.display()), e))?;
    }
    state::remove(dir, name)?;
    Ok(DownReport {
        name: name.to_string(),
        namespaces,
        processes,
        seconds: start.elapsed().as_secs_f64(),
    })
}

fn remove_all(sys: &Sys, st: &State) -> Result<(usize, usize)> {
    let existing = sys::namespaces();
    let ours: Vec<&String> = st
        .namespaces
        .iter()
        .filter(|n| existing.contains(n))
        .collect();
    let mut killed = 0;
    for ns in &ours {
        killed += trust::kill_in(ns, &sys.pids(ns));
    }
    if killed > 0 {
        // Let the kernel release the killed processes' sockets.
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until && ours.iter().any(|ns| !sys.pids(ns).is_empty()) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let lines: Vec<String> = ours.iter().map(|n| format!("netns del {n}")).collect();
    sys.ip_batch(None, &lines, true)?;
    // The FRR instances' files go once their daemons are gone.
    frr::remove_dirs(&st.frr_dirs)?;
    let left: Vec<String> = sys::namespaces()
        .into_iter()
        .filter(|n| st.namespaces.contains(n))
        .collect();
    if !left.is_empty() {
        return Err(Error::Command {
            command: "ip netns del".to_string(),
            message: format!("namespaces left: {}", left.join(", ")),
        });
    }
    Ok((ours.len(), killed))
}

/// The inter-switch cables named by `link:A-B` (every parallel cable
/// between plan switches A and B).
pub fn find_cables(st: &State, spec: &str) -> Result<Vec<usize>> {
    let unknown = |message: String| Error::Unknown {
        what: spec.to_string(),
        message,
    };
    let body = spec.strip_prefix("link:").ok_or_else(|| {
        unknown("give a cable as link:A-B, with A and B switches of the plan".to_string())
    })?;
    let names: Vec<&str> = st.lab.switches.iter().map(|s| s.name.as_str()).collect();
    // Switch names may hold '-': try every split.
    for (i, _) in body.match_indices('-') {
        let (a, b) = (&body[..i], &body[i + 1..]);
        let (Some(a), Some(b)) = (
            names.iter().position(|n| *n == a),
            names.iter().position(|n| *n == b),
        ) else {
            continue;
        };
        let found: Vec<usize> = st
            .lab
            .cables
            .iter()
            .enumerate()
            .filter(|(_, c)| (c.a == a && c.b == b) || (c.a == b && c.b == a))
            .map(|(k, _)| k)
            .collect();
        if found.is_empty() {
            return Err(unknown(format!(
                "no cable joins {} and {} in the plan",
                names[a], names[b]
            )));
        }
        return Ok(found);
    }
    let some: Vec<String> = (0..st.lab.cables.len().min(4))
        .map(|c| format!("link:{}", st.cable_name(c)))
        .collect();
    Err(unknown(format!(
        "not two switches of the plan joined by '-'; cables are named like {}",
        some.join(", ")
    )))
}

/// What a cable is set to (both ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// Up, shaped to this rate (kbit/s).
    Rate(u64),
    /// Both ends down: the switches see the link go (a pulled cable).
    Down,
    /// Both ends up, every frame dropped: a link that fails silently (a
    /// bad optic, a hung peer), which only BFD or the hold timer notices.
    Silent,
}

/// The qdisc that drops every frame: a token bucket too small for any.
fn silent(dev: &str) -> String {
    format!("qdisc add dev {dev} root tbf rate 8bit burst 1 limit 1")
}

/// Sets cables (both ends) to a rate, cuts them, or makes them drop
/// everything (see [`restore`] for the planned state).
pub fn change(
    sys: &Sys,
    dir: &Path,
    st: &mut State,
    cables: &[usize],
    setting: Setting,
) -> Result<()> {
    for &c in cables {
        let cable = st.lab.cables[c].clone();
        let mtu_a = st.lab.switches[cable.a].mtu;
        let mtu_b = st.lab.switches[cable.b].mtu;
        let ends = [
            (st.switch_ns(cable.a), cable.a_port, mtu_a),
            (st.switch_ns(cable.b), cable.b_port, mtu_b),
        ];
        for (ns, port, mtu) in &ends {
            let dev = port_name(*port);
            match setting {
                Setting::Rate(_) | Setting::Silent => {
                    sys.ip_batch(Some(ns), &[format!("link set {dev} up")], false)?;
                    // A qdisc cannot be replaced by HTB in place: the old
                    // one goes first.
                    sys.tc_batch(ns, &[format!("qdisc del dev {dev} root")], true)?;
                    let lines = match setting {
                        Setting::Rate(kbit) => shaper(&dev, kbit, *mtu),
                        _ => vec![silent(&dev)],
                    };
                    sys.tc_batch(ns, &lines, false)?;
                }
                Setting::Down => {
                    sys.ip_batch(Some(ns), &[format!("link set {dev} down")], false)?;
                }
            }
        }
        if matches!(setting, Setting::Rate(_)) && st.routing == Routing::Static {
            // Routes through a port that was down went with it (under
            // BGP, zebra puts them back itself).
            reroute(sys, st, &[cable.a, cable.b])?;
        }
        st.changed.retain(|x| x.cable != c);
        st.changed.push(Changed {
            cable: c,
            rate_kbit: match setting {
                Setting::Rate(kbit) => Some(kbit),
                Setting::Down | Setting::Silent => None,
            },
            silent: setting == Setting::Silent,
        });
    }
    st.changed.sort_by_key(|x| x.cable);
    state::write(dir, st)
}

/// Gives cables back their planned rate and state.
pub fn restore(sys: &Sys, dir: &Path, st: &mut State, cables: &[usize]) -> Result<()> {
    for &c in cables {
        let rate = st.scaled(st.lab.cables[c].gbps);
        change(sys, dir, st, &[c], Setting::Rate(rate))?;
        st.changed.retain(|x| x.cable != c);
    }
    state::write(dir, st)
}

/// Re-adds the static routes of switches (`route replace`), after a port
/// came back up.
fn reroute(sys: &Sys, st: &State, switches: &[usize]) -> Result<()> {
    for &s in switches {
        let lines: Vec<String> = st.lab.switches[s]
            .routes
            .iter()
            .map(|r| route_line(r).replacen("route add", "route replace", 1))
            .collect();
        sys.ip_batch(Some(&st.switch_ns(s)), &lines, false)?;
    }
    Ok(())
}

/// Replaces the pins of the last run with `pins`: one routing table per
/// routed port (its neighbour as the default route) and one policy rule
/// per pinned flow.
pub fn install_pins(sys: &Sys, dir: &Path, st: &mut State, pins: &[Pin]) -> Result<()> {
    if st.routing == Routing::Bgp {
        return Err(Error::parameter(
            "ecmp",
            format!(
                "lab {} routes with BGP: pins are policy routes beside static routing's tables; give --ecmp kernel (the kernel hashes flows over the next hops BGP installed)",
                st.name
            ),
        ));
    }
    clear_pins(sys, dir, st)?;
    let mut by_switch: std::collections::BTreeMap<usize, Vec<&Pin>> = Default::default();
    for p in pins {
        by_switch.entry(p.switch).or_default().push(p);
    }
    for (s, list) in by_switch {
        let ns = st.switch_ns(s);
        let mut lines = Vec::new();
        let mut ports: Vec<(u32, &str)> = list.iter().map(|p| (p.port, p.via.as_str())).collect();
        ports.sort();
        ports.dedup();
        for (port, via) in ports {
            lines.push(format!(
                "route replace default via {via} dev {} table {}",
                port_name(port),
                pin_table(port)
            ));
        }
        for p in &list {
            let rule = format!(
                "from {} to {} table {} pref {PIN_PRIORITY}",
                p.source,
                p.destination,
                pin_table(p.port)
            );
            lines.push(format!("rule add {rule}"));
            st.pins.push((ns.clone(), rule));
        }
        sys.ip_batch(Some(&ns), &lines, false)?;
    }
    state::write(dir, st)
}

/// Removes the pins of the last run.
pub fn clear_pins(sys: &Sys, dir: &Path, st: &mut State) -> Result<()> {
    if st.pins.is_empty() {
        return Ok(());
    }
    let mut by_ns: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for (ns, rule) in &st.pins {
        by_ns
            .entry(ns)
            .or_default()
            .push(format!("rule del {rule}"));
    }
    for (ns, lines) in by_ns {
        sys.ip_batch(Some(ns), &lines, true)?;
    }
    st.pins.clear();
    state::write(dir, st)
}

/// What `lab status` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// The lab's name.
    pub name: String,
    /// `building` or `up`.
    pub phase: String,
    /// The plan file.
    pub plan_file: String,
    /// Switch namespaces.
    pub switches: usize,
    /// Sub-node namespaces.
    pub hosts: usize,
    /// Namespaces the state lists that do not exist (a lab damaged from
    /// outside).
    pub missing: Vec<String>,
    /// Rate of the fastest NIC cable, kbit/s.
    pub rate_kbit: u64,
    /// Inter-switch cables.
    pub cables: usize,
    /// Cables changed by degrade or cut: name and rate (kbit/s, absent
    /// when cut).
    pub changed: Vec<(String, Option<u64>)>,
    /// The cut cables among them that are up but drop every frame
    /// (`lab cut --silent`).
    pub silent: Vec<String>,
    /// Policy rules of the last run's pins.
    pub pins: usize,
    /// `static` or `bgp`.
    pub routing: Routing,
}

/// The state of lab `name`.
pub fn status(dir: &Path, name: &str) -> Result<Status> {
    state::check_name(name)?;
    let st = state::require(dir, name)?;
    let existing = sys::namespaces();
    Ok(Status {
        name: st.name.clone(),
        phase: st.phase.clone(),
        plan_file: st.plan_file.clone(),
        switches: st.lab.switches.len(),
        hosts: st.lab.hosts.len(),
        missing: st
            .namespaces
            .iter()
            .filter(|n| !existing.contains(n))
            .cloned()
            .collect(),
        rate_kbit: st.rate_kbit,
        cables: st.lab.cables.len(),
        changed: st
            .changed
            .iter()
            .map(|c| (st.cable_name(c.cable), c.rate_kbit))
            .collect(),
        silent: st
            .changed
            .iter()
            .filter(|c| c.silent)
            .map(|c| st.cable_name(c.cable))
            .collect(),
        pins: st.pins.len(),
        routing: st.routing,
    })
}
