//! Switch and host configurations rendered from a plan, and the proof that
//! the plan's priorities cannot deadlock.
//!
//! - [`render`]: one configuration file per physical switch for H3C
//!   Comware 7 (the S9850 of EFLOPS Sec. VI), SONiC (`config_db.json`),
//!   Arista EOS and NVIDIA Cumulus Linux (NVUE `nv set` commands). Comware,
//!   EOS and NVUE come from the askama templates in the workspace's
//!   `templates/` folder; SONiC's JSON is built with serde.
//! - [`render_hosts`]: per server, a shell file and a JSON file with each
//!   sub-node's address, the DSCP it must mark and the collective runtime's
//!   environment.
//! - [`check_qos`]: the per-priority buffer-dependency graph of every route
//!   the plan allows, proved acyclic or with its cycle reported, and the
//!   agreement of both ends of every link.
//! - [`apply_qos_overrides`]: a QoS overrides file (the inventory's
//!   `[qos]` table) applied to a designed plan.
//! - [`parse`]: readers of the rendered files, for round-trip tests and
//!   for checking what is on a switch.
//!
//! Everything derives from the plan through one vendor-neutral model
//! (`model.rs`, which documents the VLAN, addressing and routing rules).
//! The library does no I/O: files come back as `(name, contents)` pairs.

mod check;
mod comware;
mod eos;
mod hosts;
pub(crate) mod model;
mod nvue;
mod overrides;
pub mod parse;
mod sonic;

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

pub use check::{
    CycleLink, DeadlockCycle, PriorityGraph, QosCheck, QosFinding, check_qos, render_qos_table,
};
pub use hosts::{HostFile, HostSlot, host_files, render_hosts};
pub use overrides::apply_qos_overrides;

use crate::error::{Error, Result};
use crate::names;
use crate::plan::PlanSwitch;
use crate::checked::CheckedPlan;
use model::{Model, PortKind};

/// A switch operating system to render for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Vendor {
    /// H3C Comware 7 (S9850 and kin): a configuration file.
    Comware,
    /// SONiC: a `config_db.json` to merge with `config load`.
    Sonic,
    /// Arista EOS: a configuration file.
    Eos,
    /// NVIDIA Cumulus Linux 5: a shell script of `nv set` commands.
    Nvue,
}

impl Vendor {
    /// Every vendor, in the order the documentation lists them.
    pub const ALL: [Vendor; 4] = [Vendor::Comware, Vendor::Sonic, Vendor::Eos, Vendor::Nvue];

    /// `comware`, `sonic`, `eos` or `nvue`.
    pub fn as_str(self) -> &'static str {
        match self {
            Vendor::Comware => "comware",
            Vendor::Sonic => "sonic",
            Vendor::Eos => "eos",
            Vendor::Nvue => "nvue",
        }
    }

    /// The file name of a switch's configuration.
    pub fn file_name(self, switch: &str) -> String {
        let stem = file_stem(switch);
        match self {
            Vendor::Comware => format!("{stem}.comware.cfg"),
            Vendor::Sonic => format!("{stem}.config_db.json"),
            Vendor::Eos => format!("{stem}.eos.cfg"),
            Vendor::Nvue => format!("{stem}.nvue.sh"),
        }
    }

    /// The interface name of a port: the plan's `port_name` pattern when it
    /// is in this vendor's style, else the vendor's usual name (Comware
    /// `HundredGigE1/0/<p>` by speed, SONiC `Ethernet<4(p-1)>` or
    /// `Ethernet<8(p-1)>` at 400G and up, EOS `Ethernet<p>/1`, NVUE
    /// `swp<p>`). SONiC's names come from the platform's port table, so a
    /// switch whose ports are named otherwise needs `port_name` in the
    /// inventory.
    pub fn port_name(self, s: &PlanSwitch, port: u32) -> String {
        let own = s
            .port_name
            .as_deref()
            .filter(|p| self.accepts_pattern(p))
            .map(|p| p.replace("{p}", &port.to_string()));
        if let Some(name) = own {
            return name;
        }
        match self {
            Vendor::Comware => format!("{}1/0/{port}", comware_type(s.port_gbps)),
            Vendor::Sonic => {
                let lanes = if s.port_gbps >= 400 { 8 } else { 4 };
                format!("Ethernet{}", lanes * port.saturating_sub(1))
            }
            Vendor::Eos => format!("Ethernet{port}/1"),
            Vendor::Nvue => format!("swp{port}"),
        }
    }

    /// Longest interface `description` the vendor takes (Comware 7 and
    /// SONiC 255 characters, EOS 240, NVUE 255).
    pub fn max_description(self) -> usize {
        match self {
            Vendor::Eos => 240,
            Vendor::Comware | Vendor::Sonic | Vendor::Nvue => 255,
        }
    }

    /// What this vendor takes as an interface name, for messages.
    pub fn interface_syntax(self) -> &'static str {
        match self {
            Vendor::Comware => {
                "a Comware interface type (HundredGigE, FortyGigE, ...) followed by numbers separated by `/`, with an optional `:N` breakout (HundredGigE1/0/5)"
            }
            Vendor::Sonic => "`Ethernet` followed by a number (Ethernet0)",
            Vendor::Eos => "`Ethernet` followed by numbers separated by `/` (Ethernet5/1)",
            Vendor::Nvue => {
                "`swp` followed by a number, with an optional `sN` breakout (swp5, swp5s1)"
            }
        }
    }

    /// True when `name` is an interface name this vendor accepts: the
    /// check every port name passes at render time (the name rule already
    /// holds; this is the vendor's own syntax).
    pub fn accepts_interface(self, name: &str) -> bool {
        fn numbers(s: &str, sep: char) -> bool {
            !s.is_empty()
                && s.split(sep)
                    .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        }
        match self {
            Vendor::Comware => COMWARE_TYPES.iter().any(|(_, t)| {
                name.strip_prefix(t).is_some_and(|rest| {
                    let (slots, breakout) = match rest.split_once(':') {
                        Some((s, b)) => (s, Some(b)),
                        None => (rest, None),
                    };
                    numbers(slots, '/')
                        && breakout.is_none_or(|b| numbers(b, '/') && !b.contains('/'))
                })
            }),
            Vendor::Sonic => name
                .strip_prefix("Ethernet")
                .is_some_and(|n| numbers(n, '/') && !n.contains('/')),
            Vendor::Eos => name
                .strip_prefix("Ethernet")
                .is_some_and(|n| numbers(n, '/')),
            Vendor::Nvue => {
                name.strip_prefix("swp")
                    .is_some_and(|rest| match rest.split_once('s') {
                        Some((p, b)) => {
                            numbers(p, '/')
                                && !p.contains('/')
                                && numbers(b, '/')
                                && !b.contains('/')
                        }
                        None => numbers(rest, '/') && !rest.contains('/'),
                    })
            }
        }
    }

    fn accepts_pattern(self, p: &str) -> bool {
        match self {
            Vendor::Comware => COMWARE_TYPES.iter().any(|(_, t)| p.starts_with(t)),
            Vendor::Sonic => p.starts_with("Ethernet") && !p.contains('/'),
            Vendor::Eos => p.starts_with("Ethernet"),
            Vendor::Nvue => p.starts_with("swp"),
        }
    }
}

impl fmt::Display for Vendor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Vendor {
    type Err = Error;

    fn from_str(s: &str) -> Result<Vendor> {
        match s.to_ascii_lowercase().as_str() {
            "comware" | "h3c" => Ok(Vendor::Comware),
            "sonic" => Ok(Vendor::Sonic),
            "eos" | "arista" => Ok(Vendor::Eos),
            "nvue" | "cumulus" => Ok(Vendor::Nvue),
            _ => Err(Error::option(
                "--vendor",
                format!("`{s}` is not a vendor; use comware, sonic, eos or nvue"),
            )),
        }
    }
}

/// A device name as a file name: characters other than letters, digits,
/// `-`, `_` and `.` become `_`. Host files are `<stem>.env` and
/// `<stem>.json`.
pub fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Comware interface types by speed, fastest first.
const COMWARE_TYPES: [(u32, &str); 8] = [
    (400, "FourHundredGigE"),
    (200, "TwoHundredGigE"),
    (100, "HundredGigE"),
    (50, "FiftyGigE"),
    (40, "FortyGigE"),
    (25, "Twenty-FiveGigE"),
    (10, "Ten-GigabitEthernet"),
    (1, "GigabitEthernet"),
];

fn comware_type(gbps: u32) -> &'static str {
    COMWARE_TYPES
        .iter()
        .find(|(g, _)| gbps >= *g)
        .map_or("GigabitEthernet", |(_, t)| t)
}

/// Renders one configuration file per physical switch, in plan order:
/// `(file name, contents)`.
pub fn render(plan: &CheckedPlan, vendor: Vendor) -> Result<Vec<(String, String)>> {
    check_port_names(plan, vendor)?;
    let m = Model::build(plan)?;
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
        let text = match vendor {
            Vendor::Comware => comware::render(&m, d)?,
            Vendor::Sonic => sonic::render(&m, d)?,
            Vendor::Eos => eos::render(&m, d)?,
            Vendor::Nvue => nvue::render(&m, d)?,
        };
        out.push((name, text));
    }
    Ok(out)
}

/// Refuses a plan whose `port_name` pattern, in this vendor's style, gives
/// a port a name the vendor does not accept (`swp{p};touch X;`): every
/// problem names the switch, the port and what the vendor takes.
fn check_port_names(plan: &CheckedPlan, vendor: Vendor) -> Result<()> {
    let mut problems = Vec::new();
    for s in &plan.switch_list {
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
                    "the port name `{}` (from port_name `{pattern}`) is not a {vendor} interface name",
                    vendor.port_name(s, p.port)
                ),
                format!(
                    "{vendor} takes {}; fix port_name in the inventory and design again",
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
pub(crate) fn description(m: &Model<'_>, vendor: Vendor, device: usize, port: u32) -> String {
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
        PortKind::SubNode { sub_node } => {
            let sn = &m.plan.sub_node_list[sub_node];
            match &sn.gpu {
                Some(g) => format!("{} {} ({g})", sn.server, sn.nic),
                None => format!("{} {}", sn.server, sn.nic),
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
