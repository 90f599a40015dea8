//! What a switch vendor is: the trait, the registry macro and what all vendors share.
//!
//! [`SwitchVendor`] is the trait each vendor file implements; the
//! `vendors!` table registers them as the [`Vendor`] enum; the rest is
//! shared: names on the command line, port names and their check.
//!
//! A vendor is one file (`render/<vendor>.rs`) with a unit struct that
//! implements [`SwitchVendor`], declared with `mod <vendor>;` and
//! registered with one row of the `vendors!` table in `render/mod.rs`.
//! Everything else that differs between vendors (the `--vendor` values,
//! their help and errors, file names, port names, description lengths, the
//! render itself) is read from the trait through [`Vendor`]; nothing else
//! matches on vendors.

use std::fmt;
use std::str::FromStr;

use super::Vendor;
use crate::error::{Error, Result};
use crate::network::{Bgp, Model};
use crate::plan::{Breakout, PlanSwitch};
use crate::text::or_list;

/// A switch operating system the planner renders configurations for. The
/// implementations are unit structs registered in the `vendors!` table.
pub(crate) trait SwitchVendor: Sync {
    /// The name on the command line, in manifests and in the golden
    /// folder: lowercase, unique among vendors (`comware`).
    fn name(&self) -> &'static str;

    /// Other names the parser accepts, lowercase (`h3c`).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// The system as people name it in tables (`H3C Comware 7`).
    fn title(&self) -> &'static str;

    /// What the files are, after the name in the list of vendors a user
    /// can choose from (`config_db.json` for `sonic (config_db.json)`).
    fn gist(&self) -> &'static str;

    /// The end of a configuration file's name after the switch's file
    /// stem, unique among vendors (`.comware.cfg`).
    fn file_suffix(&self) -> &'static str;

    /// Longest interface `description` the system takes.
    fn max_description(&self) -> usize;

    /// The system's usual name of port `port` (1-based) of a switch with
    /// `gbps` ports, used when the plan names ports otherwise. It passes
    /// [`SwitchVendor::accepts_interface`].
    fn default_port_name(&self, gbps: u32, port: u32) -> String;

    /// True when an inventory `port_name` pattern (`swp{p}`) is in this
    /// system's style, so its names are used (and checked) instead of the
    /// usual ones.
    fn accepts_pattern(&self, pattern: &str) -> bool;

    /// True when `name` is an interface name the system accepts.
    fn accepts_interface(&self, name: &str) -> bool;

    /// What the system takes as an interface name, for messages.
    fn interface_syntax(&self) -> &'static str;

    /// The configuration file of physical switch `device` of the model;
    /// `bgp` is the eBGP model when the plan routes with BGP.
    fn render(&self, m: &Model<'_>, bgp: Option<&Bgp>, device: usize) -> Result<String>;

    /// Reads back what [`SwitchVendor::render`] writes, for the round-trip
    /// tests (`render::parse`): the vendor module's `read` submodule,
    /// `render/<vendor>/read.rs`, built only for tests and the `parse`
    /// feature. `file` names the text in errors.
    #[cfg(any(test, feature = "parse"))]
    fn read_back(&self, text: &str, file: &str) -> Result<super::parse::ParsedConfig>;

    /// The interface that holds the sub-node gateways of plan switch
    /// `domain` (its VLAN interface, or FRR's bridge).
    fn gateway_interface(&self, m: &Model<'_>, domain: usize) -> String;

    /// True when the file configures routing only (addresses, routes, BGP,
    /// BFD) and leaves VLAN membership, MTU and QoS to the system's own
    /// network configuration (FRR on a Linux switch).
    fn routing_only(&self) -> bool {
        false
    }

    /// The VRF plan switch `domain` routes in on this system: the model's
    /// `Vrf<vlan>` unless the system keeps an unsplit switch in its default
    /// VRF (`default`).
    fn vrf_name(&self, m: &Model<'_>, domain: usize) -> String {
        m.domains[domain].vrf.clone()
    }

    /// Whether the system's breakout of a cage into `b` is documented
    /// (and so rendered); `Err` says why not, for the refusal. The
    /// default: not documented.
    fn breakout(&self, b: Breakout) -> std::result::Result<(), String> {
        Err(format!(
            "{} breakout ports are not rendered: this planner found no documented command for a {} breakout",
            self.title(),
            b.describe()
        ))
    }

    /// The interface name of lane `lane` (0-based) of the cage named
    /// `cage` (the system's whole-port name) broken out as `b`; only
    /// asked where [`SwitchVendor::breakout`] is `Ok`. The default is the
    /// Linux name, `<cage>s<lane>`.
    fn lane_name(&self, cage: &str, b: Breakout, lane: u32) -> String {
        let _ = b;
        format!("{cage}s{lane}")
    }

    /// The name of cage `cage` of a switch: the plan's `port_name`
    /// pattern when it is in this system's style, else the usual name at
    /// the cage's speed.
    fn cage_name(&self, s: &PlanSwitch, cage: u32) -> String {
        match s.port_name.as_deref() {
            Some(p) if self.accepts_pattern(p) => p.replace("{p}", &cage.to_string()),
            _ => self.default_port_name(s.breakout.map_or(s.port_gbps, |b| b.cage_gbps), cage),
        }
    }

    /// The interface name of a port: the cage's name
    /// ([`SwitchVendor::cage_name`]), or on a broken-out switch its
    /// lane's ([`SwitchVendor::lane_name`]).
    fn port_name(&self, s: &PlanSwitch, port: u32) -> String {
        match s.breakout {
            None => self.cage_name(s, port),
            Some(b) => {
                let (cage, lane) = b.cage_lane(port);
                self.lane_name(&self.cage_name(s, cage), b, lane)
            }
        }
    }
}

/// The breakout check of the systems that name lanes by their SerDes
/// lanes (EOS, SONiC): the cage's lanes must split evenly among the
/// logical ports ([`Breakout::electrical_per_lane`]).
pub(crate) fn even_serdes(b: Breakout) -> std::result::Result<(), String> {
    b.electrical_per_lane().map(|_| ()).ok_or_else(|| {
        format!(
            "a {} Gbps port has {} SerDes lanes, which {} logical ports do not share evenly",
            b.cage_gbps,
            b.electrical_lanes(),
            b.lanes
        )
    })
}

/// Declares the [`Vendor`] enum from the registry: one row per vendor,
/// `Variant => implementation,` with the variant's documentation. It
/// generates the enum, [`Vendor::ALL`] in row order and the lookup of a
/// variant's implementation, so a row is the only per-vendor code outside
/// the vendor's file.
macro_rules! vendors {
    ($($(#[$doc:meta])* $variant:ident => $imp:expr,)+) => {
        /// A switch operating system to render for: one row of the
        /// registry in `render/mod.rs`, whose file implements
        /// `SwitchVendor`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Vendor {
            $($(#[$doc])* $variant,)+
        }

        impl Vendor {
            /// Every vendor, in the order of the registry (the order the
            /// documentation lists them).
            pub const ALL: [Vendor; [$(stringify!($variant)),+].len()] =
                [$(Vendor::$variant),+];

            /// The vendor's implementation.
            fn imp(self) -> &'static dyn $crate::render::vendor::SwitchVendor {
                match self {
                    $(Vendor::$variant => &$imp,)+
                }
            }
        }
    };
}
pub(super) use vendors;

impl Vendor {
    /// The name on the command line (`comware`, `sonic`, ...).
    pub fn as_str(self) -> &'static str {
        self.imp().name()
    }

    /// The system as people name it (`H3C Comware 7`).
    pub fn title(self) -> &'static str {
        self.imp().title()
    }

    /// The vendor named `name` (its name or an alias, in any case).
    pub fn named(name: &str) -> Option<Vendor> {
        let name = name.to_ascii_lowercase();
        Vendor::ALL.into_iter().find(|v| {
            let imp = v.imp();
            imp.name() == name || imp.aliases().contains(&name.as_str())
        })
    }

    /// The vendors' names as a list to choose from: `comware, sonic, eos
    /// or nvue`.
    pub fn names() -> String {
        or_list(&Vendor::ALL.map(Vendor::as_str))
    }

    /// The vendors with what each renders, as a list to choose from:
    /// `comware (H3C Comware 7), sonic (config_db.json), ...`.
    pub fn choices() -> String {
        let each = Vendor::ALL.map(|v| format!("{} ({})", v.as_str(), v.imp().gist()));
        or_list(&each)
    }

    /// The file name of a switch's configuration
    /// (`<file stem>.comware.cfg`, ...).
    pub fn file_name(self, switch: &str) -> String {
        format!(
            "{}{}",
            crate::names::file_stem(switch),
            self.imp().file_suffix()
        )
    }

    /// The interface name of a port: the plan's `port_name` pattern when it
    /// is in this vendor's style, else the vendor's usual name (Comware
    /// `HundredGigE1/0/<p>` by speed, SONiC `Ethernet<4(p-1)>` or
    /// `Ethernet<8(p-1)>` at 400G and up, EOS `Ethernet<p>/1`, NVUE
    /// `swp<p>`). SONiC's names come from the platform's port table, so a
    /// switch whose ports are named otherwise needs `port_name` in the
    /// inventory.
    pub fn port_name(self, s: &PlanSwitch, port: u32) -> String {
        self.imp().port_name(s, port)
    }

    /// Longest interface `description` the vendor takes (Comware 7 and
    /// SONiC 255 characters, EOS 240, NVUE 255).
    pub fn max_description(self) -> usize {
        self.imp().max_description()
    }

    /// What this vendor takes as an interface name, for messages.
    pub fn interface_syntax(self) -> &'static str {
        self.imp().interface_syntax()
    }

    /// True when `name` is an interface name this vendor accepts: the
    /// check every port name passes at render time (the name rule already
    /// holds; this is the vendor's own syntax).
    pub fn accepts_interface(self, name: &str) -> bool {
        self.imp().accepts_interface(name)
    }

    /// The interface that holds the sub-node gateways of plan switch
    /// `domain` on this system (`Vlan101`, `vlan101`, `Vlan-interface101`,
    /// FRR's `br0` or `br-v101`).
    pub(crate) fn gateway_interface(self, m: &Model<'_>, domain: usize) -> String {
        self.imp().gateway_interface(m, domain)
    }

    /// True when the vendor's file configures routing only (addresses,
    /// routes, BGP, BFD) and leaves VLAN membership, MTU and QoS to the
    /// system's network configuration (`frr`).
    pub fn routing_only(self) -> bool {
        self.imp().routing_only()
    }

    /// The VRF plan switch `domain` of the model routes in on this system
    /// (`Vrf101`, or `default` where an unsplit switch keeps the default
    /// VRF).
    pub(crate) fn vrf_name(self, m: &Model<'_>, domain: usize) -> String {
        self.imp().vrf_name(m, domain)
    }

    /// The implementation, for the renderer.
    pub(super) fn implementation(self) -> &'static dyn SwitchVendor {
        self.imp()
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
        Vendor::named(s).ok_or_else(|| {
            Error::parameter(
                "vendor",
                format!("`{s}` is not a vendor; use {}", Vendor::names()),
            )
        })
    }
}

/// True when `s` is one or more groups of ASCII digits separated by `sep`
/// (`1/0/5` with `/`), the numbers of an interface name.
pub(crate) fn digit_groups(s: &str, sep: char) -> bool {
    !s.is_empty()
        && s.split(sep)
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// True when `s` is one number (ASCII digits, no separator).
pub(crate) fn number(s: &str) -> bool {
    digit_groups(s, '/') && !s.contains('/')
}
