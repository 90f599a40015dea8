//! The fabric vocabulary every layer shares; it imports nothing else of the crate.
//!
//! BiGraph parts, switch tiers, topologies, switch roles, port roles, cable
//! kinds, media and NVLink domain kinds: the words `inventory`, `qos` and `plan` all speak, kept
//! here so that none of them has to import another for them.

use serde::{Deserialize, Serialize};

/// The part of a BiGraph a switch belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Part {
    /// The upper part.
    Upper,
    /// The lower part.
    Lower,
}

impl Part {
    /// The other part.
    pub fn other(self) -> Part {
        match self {
            Part::Upper => Part::Lower,
            Part::Lower => Part::Upper,
        }
    }

    /// `upper` or `lower`.
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Upper => "upper",
            Part::Lower => "lower",
        }
    }
}

/// The role a switch template is reserved for in fat-tree designs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchRole {
    /// Leaf (2-tier) or edge/aggregation (3-tier).
    Leaf,
    /// Spine (2-tier) or core (3-tier).
    Spine,
    /// Core (3-tier) only.
    Core,
}

/// The kind of topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Topology {
    /// EFLOPS BiGraph.
    #[serde(rename = "bigraph")]
    BiGraph,
    /// Leaf-spine (2 tiers) or k-ary fat-tree (3 tiers).
    #[serde(rename = "fat-tree")]
    FatTree,
    /// Rail-optimized leaf-spine: server NIC `i` goes to rail switch `i`
    /// of its server group; spines above the rail switches.
    #[serde(rename = "rail-optimized")]
    RailOptimized,
    /// Alibaba HPN: two planes of rail-optimized ToRs under an aggregation
    /// tier per plane; every NIC has two ports, port 0 on its rail's ToR
    /// of plane A and port 1 on that of plane B (dual-ToR).
    #[serde(rename = "hpn")]
    Hpn,
}

impl Topology {
    /// `bigraph`, `fat-tree`, `rail-optimized` or `hpn`, as on the
    /// command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Topology::BiGraph => "bigraph",
            Topology::FatTree => "fat-tree",
            Topology::RailOptimized => "rail-optimized",
            Topology::Hpn => "hpn",
        }
    }

    /// The name people read in reports: `BiGraph`, `fat-tree`,
    /// `rail-optimized`, `HPN`.
    pub fn label(self) -> &'static str {
        match self {
            Topology::BiGraph => "BiGraph",
            Topology::FatTree => "fat-tree",
            Topology::RailOptimized => "rail-optimized",
            Topology::Hpn => "HPN",
        }
    }

    /// True for the fabrics whose servers have rails: NIC `i` of every
    /// server of a group on the same switch (rail-optimized and HPN).
    pub fn has_rails(self) -> bool {
        matches!(self, Topology::RailOptimized | Topology::Hpn)
    }

    /// True for the fabrics built as leaf-spine or fat-tree tiers (the
    /// plan has a `fat_tree` table): everything but BiGraph.
    pub fn is_tiered(self) -> bool {
        !matches!(self, Topology::BiGraph)
    }
}

/// The part (BiGraph) or tier (fat-tree) of a switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// BiGraph upper part.
    Upper,
    /// BiGraph lower part.
    Lower,
    /// Leaf of a 2-tier fat-tree.
    Leaf,
    /// Spine of a 2-tier fat-tree.
    Spine,
    /// Edge of a 3-tier fat-tree.
    Edge,
    /// Aggregation of a 3-tier fat-tree.
    Aggregation,
    /// Core of a 3-tier fat-tree.
    Core,
}

impl Tier {
    /// The tier's name as in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Upper => "upper",
            Tier::Lower => "lower",
            Tier::Leaf => "leaf",
            Tier::Spine => "spine",
            Tier::Edge => "edge",
            Tier::Aggregation => "aggregation",
            Tier::Core => "core",
        }
    }

    /// The BiGraph part, for `Upper` and `Lower`.
    pub fn part(self) -> Option<Part> {
        match self {
            Tier::Upper => Some(Part::Upper),
            Tier::Lower => Some(Part::Lower),
            _ => None,
        }
    }
}

impl From<Part> for Tier {
    fn from(p: Part) -> Self {
        match p {
            Part::Upper => Tier::Upper,
            Part::Lower => Tier::Lower,
        }
    }
}

/// What a port is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortRole {
    /// Cabled to another switch.
    InterSwitch,
    /// Cabled to a sub-node's NIC.
    SubNode,
    /// Not cabled; room to grow.
    Free,
    /// Reserved in the inventory (management, external uplinks).
    Reserved,
}

/// What a cable connects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CableKind {
    /// Switch to switch.
    InterSwitch,
    /// Switch to a sub-node's NIC.
    SubNode,
}

/// Cable media.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Media {
    /// Direct-attach copper, within a rack.
    Dac,
    /// Optics (transceivers and fibre, or AOC), between racks.
    Optical,
}

impl Media {
    /// `dac` or `optical`.
    pub fn as_str(self) -> &'static str {
        match self {
            Media::Dac => "dac",
            Media::Optical => "optical",
        }
    }
}

/// How the GPUs of an NVLink domain are joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NvlinkKind {
    /// Every GPU has its bandwidth into NVSwitches that reach every other
    /// GPU (DGX/HGX A100 and H100).
    Nvswitch,
    /// GPUs joined by direct NVLink links (DGX-1's hybrid cube-mesh, a
    /// POWER8 S822LC's GPU pairs): the bandwidth is each GPU's links
    /// together, which a ring over the links reaches.
    Mesh,
}

impl NvlinkKind {
    /// The word the inventory uses.
    pub fn as_str(self) -> &'static str {
        match self {
            NvlinkKind::Nvswitch => "nvswitch",
            NvlinkKind::Mesh => "mesh",
        }
    }
}

/// How every port (cage) of a switch splits into lanes: `2x200G` on a
/// 400G switch is two 200G logical ports per cage. The plan numbers a
/// broken-out switch's logical ports from 1 in cage order, lane by lane
/// (cage 1 lanes 0 and 1 are ports 1 and 2, cage 2 lane 0 is port 3), so
/// every layer that counts ports counts lanes; [`Breakout::cage_lane`]
/// and [`Breakout::port`] convert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Breakout {
    /// Lanes (logical ports) per cage: 2, 4 or 8.
    pub lanes: u32,
    /// Speed of the whole cage in Gbps (`port_gbps` of the inventory).
    pub cage_gbps: u32,
}

impl Breakout {
    /// The lane counts switch systems offer for a breakout (NVUE `2x`,
    /// `4x`, `8x`; EOS, SONiC and Comware the same or fewer).
    pub const LANES: [u32; 3] = [2, 4, 8];

    /// Parses the inventory's `breakout = "2x200G"` for cages of
    /// `cage_gbps`: the lane count (2, 4 or 8), `x`, the lane speed in
    /// Gbps with an optional `G`; lanes times their speed must be the
    /// cage's speed. The error says what is wrong, for the inventory
    /// check to name the file, line and switch.
    pub fn parse(text: &str, cage_gbps: u32) -> Result<Breakout, String> {
        let t = text.trim();
        let Some((n, g)) = t.split_once(['x', 'X']) else {
            return Err(format!(
                "breakout `{text}` is not lanes x speed (such as \"2x200G\")"
            ));
        };
        let g = g.strip_suffix(['G', 'g']).unwrap_or(g);
        let (Ok(lanes), Ok(gbps)) = (n.trim().parse::<u32>(), g.trim().parse::<u32>()) else {
            return Err(format!(
                "breakout `{text}` is not lanes x speed (such as \"2x200G\")"
            ));
        };
        if !Self::LANES.contains(&lanes) {
            return Err(format!(
                "breakout `{text}` splits a port into {lanes} lanes; switch systems split into 2, 4 or 8"
            ));
        }
        if u64::from(lanes) * u64::from(gbps) != u64::from(cage_gbps) {
            return Err(format!(
                "breakout `{text}` is {} Gbps in all, but the ports are {cage_gbps} Gbps",
                u64::from(lanes) * u64::from(gbps)
            ));
        }
        Ok(Breakout { lanes, cage_gbps })
    }

    /// Speed of one lane in Gbps.
    pub fn lane_gbps(self) -> u32 {
        self.cage_gbps / self.lanes.max(1)
    }

    /// The cage (1-based) and lane (0-based) of logical port `port`
    /// (1-based).
    pub fn cage_lane(self, port: u32) -> (u32, u32) {
        let i = port.saturating_sub(1);
        (i / self.lanes.max(1) + 1, i % self.lanes.max(1))
    }

    /// The logical port (1-based) of lane `lane` of cage `cage`.
    pub fn port(self, cage: u32, lane: u32) -> u32 {
        (cage.saturating_sub(1)) * self.lanes + lane + 1
    }

    /// The name of logical port `port` where no switch system is known
    /// (the plan, `cables`, host files): the `port_name` pattern's name of
    /// the port (`{p}` the number), or the number; on a broken-out switch
    /// the cage's name and the lane as Linux switches name it, `s<lane>`
    /// from 0 (`swp5s1`, `5s1`). Each vendor's own lane names are in
    /// `render/`.
    pub fn generic_name(pattern: Option<&str>, breakout: Option<Breakout>, port: u32) -> String {
        let named = |n: u32| match pattern {
            Some(p) => p.replace("{p}", &n.to_string()),
            None => n.to_string(),
        };
        match breakout {
            None => named(port),
            Some(b) => {
                let (cage, lane) = b.cage_lane(port);
                format!("{}s{lane}", named(cage))
            }
        }
    }

    /// Electrical (SerDes) lanes of a cage, which EOS and SONiC number
    /// lanes by: 8 at 400G and up (QSFP-DD and OSFP: 8 x 50G or 8 x 100G),
    /// 4 below (QSFP28, QSFP56). The same rule as SONiC's whole-port names
    /// (`Ethernet<8(p-1)>` at 400G and up, else `Ethernet<4(p-1)>`).
    pub fn electrical_lanes(self) -> u32 {
        if self.cage_gbps >= 400 { 8 } else { 4 }
    }

    /// Electrical lanes per logical port, when the lanes split evenly
    /// (not for 8 logical ports on a 4-lane cage).
    pub fn electrical_per_lane(self) -> Option<u32> {
        let e = self.electrical_lanes();
        (self.lanes <= e && e.is_multiple_of(self.lanes)).then(|| e / self.lanes)
    }

    /// The first electrical lane (1-based) of logical lane `lane` (0-based):
    /// EOS names a lane of `Ethernet5/1` by it (`Ethernet5/5` is the second
    /// 200G lane of an 8-lane 400G cage).
    pub fn first_electrical(self, lane: u32) -> Option<u32> {
        Some(1 + lane * self.electrical_per_lane()?)
    }

    /// The logical lane (0-based) whose first electrical lane is `first`
    /// (1-based), the inverse of [`Breakout::first_electrical`].
    pub fn eos_lane_of(self, first: u32) -> Option<u32> {
        let per = self.electrical_per_lane()?;
        let i = first.checked_sub(1)?;
        (i.is_multiple_of(per) && i / per < self.lanes).then_some(i / per)
    }

    /// The inventory's form, `2x200G`.
    pub fn describe(self) -> String {
        format!("{}x{}G", self.lanes, self.lane_gbps())
    }
}
