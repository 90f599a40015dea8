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
