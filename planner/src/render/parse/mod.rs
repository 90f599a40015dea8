//! Readers of rendered switch configurations, for round-trip tests: the
//! library's unit tests and, with the `parse` feature (which the
//! workspace's test builds turn on), the integration tests. A release
//! build leaves them out.
//!
//! What a file says about VLANs and their ports, VRFs, interfaces
//! (descriptions, addresses, MTU, PFC), the DSCP map, static routes, BGP
//! and BFD, in one vendor-neutral form. Each vendor's reader lives in its
//! own module (`render/<vendor>/read.rs`), reached through
//! `SwitchVendor::read_back`; this module holds the form and the helpers
//! the readers share.
//!
//! They read what [`crate::render::render`] writes, line by line (Comware,
//! EOS, NVUE, FRR) or as JSON (SONiC), and reject commands they do not
//! know, so a round trip proves the files say what the plan says. They are
//! not general parsers of every configuration a switch can hold.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::render::Vendor;

/// What a configuration file says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedConfig {
    /// Host name.
    pub hostname: String,
    /// VLANs by id.
    pub vlans: BTreeMap<u16, ParsedVlan>,
    /// VRF names.
    pub vrfs: BTreeSet<String>,
    /// Physical interfaces by name.
    pub interfaces: BTreeMap<String, ParsedInterface>,
    /// Priority of each DSCP the file maps.
    pub dscp_map: BTreeMap<u8, u8>,
    /// Static routes.
    pub routes: BTreeSet<ParsedRoute>,
    /// BGP instances by VRF (`default` for FRR's default VRF).
    pub bgp: BTreeMap<String, ParsedBgp>,
    /// BFD timers the file sets, `(tx ms, rx ms, multiplier)`, wherever
    /// it sets them (per interface, per neighbour or in a profile).
    pub bfd: BTreeSet<(u32, u32, u32)>,
}

/// A BGP instance.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedBgp {
    /// Its ASN.
    pub asn: u32,
    /// Router ID.
    pub router_id: Option<String>,
    /// ECMP over paths of equal length through different ASNs.
    pub multipath_relax: bool,
    /// `maximum-paths` (eBGP).
    pub max_paths: Option<u32>,
    /// Announced prefixes, `a.b.c.d/len`.
    pub networks: BTreeSet<String>,
    /// Neighbours by address.
    pub neighbors: BTreeMap<String, ParsedNeighbor>,
}

/// A BGP neighbour.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedNeighbor {
    /// Its ASN.
    pub remote_as: u32,
    /// BFD on the session.
    pub bfd: bool,
    /// Description.
    pub description: String,
}

/// A VLAN.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedVlan {
    /// Its name, where the format has one.
    pub name: Option<String>,
    /// Untagged member ports.
    pub members: BTreeSet<String>,
    /// The VRF of its VLAN interface.
    pub vrf: Option<String>,
    /// The VLAN interface's addresses, `a.b.c.d/len`.
    pub addresses: BTreeSet<String>,
}

/// A physical interface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ParsedInterface {
    /// Description.
    pub description: String,
    /// Access VLAN.
    pub access_vlan: Option<u16>,
    /// VRF of a routed port.
    pub vrf: Option<String>,
    /// Address of a routed port, `a.b.c.d/len`.
    pub address: Option<String>,
    /// MTU.
    pub mtu: Option<u32>,
    /// Administratively down.
    pub shutdown: bool,
    /// Classifies by DSCP.
    pub trust_dscp: bool,
    /// PFC priorities.
    pub pfc: BTreeSet<u8>,
    /// BFD timers set on the interface: transmit ms, receive ms,
    /// multiplier.
    pub bfd: [Option<u32>; 3],
}

/// A static route.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ParsedRoute {
    /// VRF.
    pub vrf: String,
    /// Destination, `a.b.c.d/len`.
    pub prefix: String,
    /// Next-hop address.
    pub next_hop: String,
}

/// Reads a rendered configuration of `vendor`; `file` names it in errors.
pub fn parse(vendor: Vendor, text: &str, file: &str) -> Result<ParsedConfig> {
    vendor.implementation().read_back(text, file)
}

/// Collects the BFD timers set per interface into [`ParsedConfig::bfd`].
pub(in crate::render) fn interface_bfd(c: &mut ParsedConfig) {
    for i in c.interfaces.values() {
        if let [Some(tx), Some(rx), Some(m)] = i.bfd {
            c.bfd.insert((tx, rx, m));
        }
    }
}

/// The BGP instance of `vrf`, made with `asn` when new.
pub(in crate::render) fn bgp_of<'c>(
    c: &'c mut ParsedConfig,
    vrf: &str,
    asn: u32,
) -> &'c mut ParsedBgp {
    c.bgp.entry(vrf.to_string()).or_insert_with(|| ParsedBgp {
        asn,
        ..ParsedBgp::default()
    })
}

pub(in crate::render) fn syntax(file: &str, line: usize, message: impl Into<String>) -> Error {
    Error::Syntax {
        file: file.to_string(),
        line,
        column: 1,
        message: message.into(),
    }
}

pub(in crate::render) fn number<T: std::str::FromStr>(
    s: &str,
    file: &str,
    line: usize,
) -> Result<T> {
    s.parse()
        .map_err(|_| syntax(file, line, format!("`{s}` is not a number")))
}

/// `255.255.255.0` as a prefix length.
pub(in crate::render) fn mask_len(mask: &str, file: &str, line: usize) -> Result<u32> {
    let m: std::net::Ipv4Addr = mask
        .parse()
        .map_err(|_| syntax(file, line, format!("`{mask}` is not a netmask")))?;
    let bits = u32::from(m);
    if bits.leading_ones() + bits.trailing_zeros() != 32 {
        return Err(syntax(file, line, format!("`{mask}` is not a netmask")));
    }
    Ok(bits.leading_ones())
}

/// `0-3,5` as numbers.
pub(in crate::render) fn number_list(s: &str, file: &str, line: usize) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    for item in s.split(',') {
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (number(a, file, line)?, number(b, file, line)?);
                if b < a || b - a > 4096 {
                    return Err(syntax(file, line, format!("bad range `{item}`")));
                }
                out.extend(a..=b);
            }
            None => out.push(number(item, file, line)?),
        }
    }
    Ok(out)
}

pub(in crate::render) fn small(v: u32, file: &str, line: usize) -> Result<u8> {
    u8::try_from(v).map_err(|_| syntax(file, line, format!("{v} is out of range")))
}

/// Fills VLAN members from access ports.
pub(in crate::render) fn members(c: &mut ParsedConfig) {
    let access: Vec<(u16, String)> = c
        .interfaces
        .iter()
        .filter_map(|(n, i)| i.access_vlan.map(|v| (v, n.clone())))
        .collect();
    for (v, n) in access {
        c.vlans.entry(v).or_default().members.insert(n);
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::render) enum View {
    Global,
    Interface(String),
    VlanInterface(u16),
    Vlan(u16),
    Vrf,
    DscpMap,
    Other,
    /// A BGP process or instance (its ASN), in a VRF once one is named.
    Bgp(u32, Option<String>),
}
