//! Switch and host configurations rendered from a plan, and the proof that
//! the plan's priorities cannot deadlock.
//!
//! - [`render`]: one configuration file per physical switch for H3C
//!   Comware 7 (the S9850 of EFLOPS Sec. VI), SONiC (`config_db.json`),
//!   Arista EOS, NVIDIA Cumulus Linux (NVUE `nv set` commands) and
//!   FRRouting on a Linux switch (`frr.conf`), with static routes or, for
//!   `routing = "bgp"`, eBGP with BFD from `network::bgp`. Comware and EOS
//!   come from the askama templates in the workspace's `templates/`
//!   folder; SONiC's JSON is built with serde, FRR's text directly, and
//!   NVUE's commands as words ([`nvue_tree`] places the same commands in
//!   the JSON tree NVUE's REST API takes: [`nvue_trees`]);
//! - [`render_switch`]: one physical switch's file as a `String`.
//! - [`render_hosts`]: per server, a shell file and a JSON file with each
//!   sub-node's address, the DSCP it must mark and the collective runtime's
//!   environment; and, for servers whose PCIe tree the plan carries, NCCL's
//!   topology file ([`nccl_topo`]).
//! - [`check_qos`]: the per-priority buffer-dependency graph of every route
//!   the plan allows, proved acyclic or with its cycle reported, and the
//!   agreement of both ends of every link.
//! - [`apply_qos_overrides`]: a QoS overrides file (the inventory's
//!   `[qos]` table) applied to a designed plan.
//! - `parse` (in tests, and with the `parse` feature): readers of the
//!   rendered files, for round-trip tests.
//!
//! Everything derives from the plan through one vendor-neutral model
//! (`network::Model`, whose module documents the VLAN, addressing and
//! routing rules).
//! The library does no I/O: files come back as `(name, contents)` pairs.

mod check;
mod comware;
mod eos;
mod frr;
mod hosts;
mod marking;
pub mod nccl_topo;
mod nvue;
pub mod nvue_tree;
mod overrides;
#[cfg(any(test, feature = "parse"))]
pub mod parse;
#[cfg(test)]
mod routes_tests;
mod sonic;
mod vendor;

use std::collections::{BTreeMap, BTreeSet};

pub use crate::names::file_stem;
pub use check::{
    CycleLink, DeadlockCycle, FailedQos, FailedQosVerdict, MarkingRow, PriorityGraph, QosCheck,
    QosFinding, check_qos, check_qos_failed, check_qos_marked, render_qos_table,
};
pub use comware::FRAME_OVERHEAD as COMWARE_FRAME_OVERHEAD;
pub use hosts::{HostFile, HostSlot, host_files, render_hosts};
pub use marking::{FIFO_TC_SINCE, FifoTc, HostMarking, UCX_AUTO_TC, UcxTc};
pub use overrides::apply_qos_overrides;

use crate::checked::CheckedPlan;
use crate::error::{Error, Result};
use crate::names;
use crate::network::{Bgp, Model, PortKind};
use vendor::{SwitchVendor, vendors};

// The registry of switch vendors: a vendor is its file (declared above)
// and one row here. The rows' order is the order of `Vendor::ALL`, of the
// `--vendor` help and of the documentation.
vendors! {
    /// H3C Comware 7 (S9850 and kin): a configuration file.
    Comware => comware::Comware,
    /// SONiC: a `config_db.json` to merge with `config load`.
    Sonic => sonic::Sonic,
    /// Arista EOS: a configuration file.
    Eos => eos::Eos,
    /// NVIDIA Cumulus Linux 5: a shell script of `nv set` commands.
    Nvue => nvue::Nvue,
    /// FRRouting on a Linux switch: a complete `frr.conf`.
    Frr => frr::Frr,
}

/// Renders one configuration file per physical switch, in plan order:
/// `(file name, contents)`.
pub fn render(plan: &CheckedPlan, vendor: Vendor) -> Result<Vec<(String, String)>> {
    let imp = vendor.implementation();
    check_port_names(plan, imp)?;
    let m = Model::build(plan, plan.source())?;
    let bgp = bgp_of(plan, &m)?;
    let mut names = BTreeSet::new();
    let mut out = Vec::with_capacity(m.devices.len());
    for d in 0..m.devices.len() {
        let name = vendor.file_name(&m.devices[d].name);
        if !names.insert(name.clone()) {
            return Err(Error::Invalid {
                file: plan.source().to_string(),
                what: "plan",
                problems: vec![crate::Problem::at(
                    None,
                    format!("switch {}", m.devices[d].name),
                    format!("its file name {name} is also another switch's"),
                    "give switches names that differ in letters and digits",
                )],
            });
        }
        out.push((name, imp.render(&m, bgp.as_ref(), d)?));
    }
    Ok(out)
}

/// Each physical switch's NVUE configuration as the JSON tree the NVUE
/// REST API takes, in plan order: `(switch, tree)`. The trees hold exactly
/// the commands of [`render`]'s `nvue` scripts ([`nvue_tree`]).
pub fn nvue_trees(plan: &CheckedPlan) -> Result<Vec<(String, serde_json::Value)>> {
    check_port_names(plan, Vendor::Nvue.implementation())?;
    let m = Model::build(plan, plan.source())?;
    let bgp = bgp_of(plan, &m)?;
    (0..m.devices.len())
        .map(|d| Ok((m.devices[d].name.clone(), nvue::tree(&m, bgp.as_ref(), d)?)))
        .collect()
}

/// The configuration file of one physical switch, named as the plan names
/// it (`sw01`): what [`render`] writes for it. An unknown switch is a
/// parameter error naming the plan's switches.
pub fn render_switch(plan: &CheckedPlan, physical: &str, vendor: Vendor) -> Result<String> {
    let imp = vendor.implementation();
    check_port_names(plan, imp)?;
    let m = Model::build(plan, plan.source())?;
    let d = device_named(plan, &m, physical)?;
    imp.render(&m, bgp_of(plan, &m)?.as_ref(), d)
}

/// The model's index of physical switch `physical`, or a parameter error
/// (`switch`) naming the plan's switches.
pub(crate) fn device_named(plan: &CheckedPlan, m: &Model<'_>, physical: &str) -> Result<usize> {
    m.devices
        .iter()
        .position(|d| d.name == physical)
        .ok_or_else(|| {
            let names = m.devices.iter().map(|d| d.name.as_str());
            not_a_switch(plan, physical, "a physical switch", names)
        })
}

/// The `switch` parameter error: `name` is not `what` of the plan, which
/// has `names`.
fn not_a_switch<'a>(
    plan: &CheckedPlan,
    name: &str,
    what: &str,
    names: impl Iterator<Item = &'a str>,
) -> Error {
    Error::parameter(
        "switch",
        format!(
            "`{}` is not {what} of {}; it has {}",
            names::escape(name),
            names::escape(plan.source()),
            names.collect::<Vec<_>>().join(", ")
        ),
    )
}

/// The FRR `frr.conf` of one plan switch (`sw01-u`, a half of a split
/// switch, or a whole switch) as a router of its own: the default VRF, its
/// gateways on `br0`, its own ports only, host name the plan switch's.
/// What a lab that builds each plan switch in its own network namespace
/// runs (no VRF device needed); on a real split switch use
/// [`render_switch`] with [`Vendor::Frr`]. An unknown switch is a
/// parameter error naming the plan's switches.
pub fn render_frr_plan_switch(plan: &CheckedPlan, switch: &str) -> Result<String> {
    check_port_names(plan, Vendor::Frr.implementation())?;
    let m = Model::build(plan, plan.source())?;
    let Some(d) = plan.switch_list.iter().position(|s| s.name == switch) else {
        let names = plan.switch_list.iter().map(|s| s.name.as_str());
        return Err(not_a_switch(plan, switch, "a switch", names));
    };
    Ok(frr::render_plan_switch(&m, d, bgp_of(plan, &m)?.as_ref()))
}

/// The eBGP model when the plan routes with BGP.
fn bgp_of(plan: &CheckedPlan, m: &Model<'_>) -> Result<Option<Bgp>> {
    if plan.routing.is_bgp() {
        Bgp::of(m, plan.source()).map(Some)
    } else {
        Ok(None)
    }
}

/// Refuses a plan whose `port_name` pattern, in this vendor's style, gives
/// a port a name the vendor does not accept (`swp{p};touch X;`): every
/// problem names the switch, the port and what the vendor takes.
fn check_port_names(plan: &CheckedPlan, vendor: &dyn SwitchVendor) -> Result<()> {
    let mut problems = Vec::new();
    // A breakout this vendor's syntax is not documented for: refused, one
    // problem per breakout naming its switches, not guessed.
    let mut refused: BTreeMap<crate::plan::Breakout, (String, Vec<&str>)> = BTreeMap::new();
    for s in &plan.switch_list {
        if let Some(b) = s.breakout
            && let Err(why) = vendor.breakout(b)
        {
            let names = &mut refused.entry(b).or_insert((why, Vec::new())).1;
            if !names.contains(&s.physical.as_str()) {
                names.push(&s.physical);
            }
        }
    }
    for (b, (why, names)) in &refused {
        problems.push(crate::Problem::at(
            None,
            format!(
                "switch{} {}",
                if names.len() == 1 { "" } else { "es" },
                names.join(", ")
            ),
            format!("the ports break out {}; {why}", b.describe()),
            format!(
                "render breakouts for {}, or drop `breakout` from the inventory's [[switch]] and design again",
                Vendor::ALL
                    .into_iter()
                    .filter(|v| v.implementation().breakout(*b).is_ok())
                    .map(Vendor::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    for s in &plan.switch_list {
        if s.breakout.is_some_and(|b| refused.contains_key(&b)) {
            continue;
        }
        let Some(pattern) = s.port_name.as_deref() else {
            continue;
        };
        if !vendor.accepts_pattern(pattern) {
            // Not in this vendor's style: the vendor's own names are used.
            continue;
        }
        if let Some(p) = s
            .ports
            .iter()
            .find(|p| !vendor.accepts_interface(&vendor.port_name(s, p.port)))
        {
            problems.push(crate::Problem::at(
                None,
                format!("switch {} port {}", s.name, p.port),
                format!(
                    "the port name `{}` (from port_name `{pattern}`) is not a {} interface name",
                    vendor.port_name(s, p.port),
                    vendor.name()
                ),
                format!(
                    "{} takes {}; fix port_name in the inventory and design again",
                    vendor.name(),
                    vendor.interface_syntax()
                ),
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(plan.refusal(problems))
    }
}

/// The description of a port: the peer (`to sw02-l HundredGigE1/0/17`,
/// `node03 mlx5_1 (gpu1)`), or that it is free for growth; escaped and
/// cut to the vendor's length ([`names::description`]).
pub(crate) fn description(
    m: &Model<'_>,
    vendor: &dyn SwitchVendor,
    device: usize,
    port: u32,
) -> String {
    let Some(p) = m.port(device, port) else {
        return String::new();
    };
    // Names follow the name rule, but a description never carries a
    // control character or more than the vendor takes, whatever the plan.
    let text = match p.kind {
        PortKind::InterSwitch { link } => {
            let l = &m.links[link];
            format!(
                "to {} {}",
                m.name(l.to),
                vendor.port_name(&m.plan.switch_list[l.to], l.to_port)
            )
        }
        PortKind::SubNode { sub_node, nic_port } => {
            let sn = &m.plan.sub_node_list[sub_node];
            let nic = sn.port_label(usize::from(nic_port));
            match &sn.gpu {
                Some(g) => format!("{} {nic} ({g})", sn.server),
                None => format!("{} {nic}", sn.server),
            }
        }
        PortKind::Free => format!("free for growth in {}", m.name(p.domain)),
        PortKind::Reserved => String::new(),
    };
    names::description(&text, vendor.max_description())
}

/// A one-line summary of a switch for file headers: its model and halves,
/// escaped as a comment ([`names::comment`]).
pub(crate) fn summary(m: &Model<'_>, device: usize) -> String {
    let dev = &m.devices[device];
    let halves: Vec<String> = dev
        .domains
        .iter()
        .map(|&d| {
            format!(
                "{} ({}, VLAN {})",
                m.name(d),
                m.tier(d).as_str(),
                m.domains[d].vlan
            )
        })
        .collect();
    // One comment line whatever the names hold.
    names::comment(&format!(
        "{} ({}) of plan {} ({}): {}",
        dev.name,
        dev.model,
        m.plan.name,
        m.plan.describe(),
        halves.join(", ")
    ))
}

/// Priorities as `3,4`.
pub(crate) fn list(v: &[u8]) -> String {
    v.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
}

/// Milliseconds as seconds with no needless digits: `0.2`, `1`, `0.05`.
pub(crate) fn seconds(ms: u32) -> String {
    let s = format!("{}.{:03}", ms / 1000, ms % 1000);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests;
