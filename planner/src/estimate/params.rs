//! The cost parameters of the estimates: what the plan does not say.
//!
//! Link speeds come from the plan (`nic_gbps` of the sub-nodes and
//! `port_gbps` of the switches) and hop counts from its topology. The rest
//! is a small set of numbers with defaults, each of which the user can
//! override by name (`--param alpha_us=2`):
//!
//! | name | default | meaning |
//! |---|---|---|
//! | `alpha_us` | 1.0 | latency of one switch traversal, µs (α per hop) |
//! | `nic_us` | 5.0 | latency a message pays once at its two ends (NIC, PCIe, the library posting it), µs |
//! | `gamma_ns_per_byte` | 0.005 | time to reduce one byte into another, ns (γ) |
//! | `link_gbps` | plan | the speed of every link, Gbps, instead of the plan's |
//! | `density` | 0.01 | HiTopKComm density ρ (the fraction of elements sent) |
//! | `topk_ns_per_byte` | 0.05 | HiTopKComm top-k selection time per byte of a GPU's shard, ns |
//! | `gradient_bytes` | 4 | bytes per gradient element: 4 for FP32, 2 for FP16 or BF16 (HiTopKComm counts elements as bytes / this) |
//! | `eager_bytes` | 12288 | sends below this many bytes go at once (eager); larger ones wait for the receiver (rendezvous); `all`: every send eager |
//! | `channels` | fabric | `fabric`: every send crosses the plan's links (one NIC per rank); `pair`: the trees' sends each take a channel of their own between the two ranks (C-Cube's DGX-1) |
//!
//! A message between two sub-nodes whose route crosses h switches pays
//! `nic_us + h * alpha_us` before its bytes arrive. The two latency
//! defaults are calibrated on EFLOPS Fig. 16a: with 100 Gbps links, HDRM
//! on a BiGraph crosses 2 switches per step, so a step costs 7 µs plus the
//! bytes, and a 256 KiB allreduce takes 127 µs on 64 sub-nodes and 183 µs
//! on 1,024, against the paper's 130 µs and 181 µs. `gamma_ns_per_byte` is
//! an assumption (a GPU reducing 200 GB/s, a fraction of a V100's HBM2
//! bandwidth, since a reduction reads two operands and writes one), as is
//! `topk_ns_per_byte` (a few threshold passes of MSTopK, HiTopKComm
//! Algorithm 1, over the shard); measure both on the target GPUs. The
//! density default is the ρ = 0.01 of HiTopKComm Fig. 7.
//!
//! The packet-level mode (`--method packet`) has its own parameters
//! (packet size, buffers, PFC, ECN, DCQCN), set the same way; their table
//! and sources are in [`super::packet`] and `PACKET_PARAMS`.
//!
//! `eager_bytes` is the eager limit of MPI libraries: a message below it is
//! sent at once and buffered by the receiver, a larger one moves only once
//! the receiver has posted its receive (rendezvous). The default, 12,288
//! bytes (12 KiB), is Open MPI's `btl_openib_eager_limit` for RDMA
//! (InfiniBand and RoCE) in its openib BTL; MPICH's CH3 device switches at
//! `MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE`, 131,072 bytes. NCCL does not use
//! eager sends for its large transfers either: its proxies move a chunk once
//! the receiver has granted buffer credit. The event-driven simulator models
//! the rendezvous ([`super::sim`]); the step-synchronous mode has a barrier
//! after every step anyway.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

mod packet;
pub use packet::{PACKET_PARAMS, PacketParams, roce_mtu};

/// What the sends of a tree cross (`--param channels`).
///
/// C-Cube's eq. 7 (βN for the overlapped tree) holds on its DGX-1, where
/// every edge of the tree is an NVLink of its own, used in both directions
/// at once (Observation #2); its second tree takes detour routes over the
/// other NVLinks (Fig. 6d, 10). On a fabric where a rank has one NIC, an
/// inner node of the overlapped tree sends one chunk up and two down
/// through that NIC in every step (3βN), and the double tree shares the
/// NIC between its two trees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Channels {
    /// Every send crosses the plan's links: one NIC per rank.
    #[default]
    Fabric,
    /// Every ordered pair of ranks that a tree joins has a channel of its
    /// own at the ranks' link speed, with no switch on it (DGX-1's NVLinks
    /// as C-Cube maps its trees on them).
    Pair,
}

/// The cost parameters (see the module documentation for the defaults and
/// where they come from).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Latency of one switch traversal, µs.
    pub alpha_us: f64,
    /// Latency a message pays once at its ends (NIC, PCIe, software), µs.
    pub nic_us: f64,
    /// Time to reduce one byte, ns.
    pub gamma_ns_per_byte: f64,
    /// Speed of every link, Gbps; `None` takes the plan's speeds.
    pub link_gbps: Option<f64>,
    /// HiTopKComm density ρ, in (0, 1].
    pub density: f64,
    /// HiTopKComm top-k selection time per byte of a shard, ns.
    pub topk_ns_per_byte: f64,
    /// Bytes per gradient element (4 FP32, 2 FP16 or BF16): HiTopKComm
    /// selects elements, not bytes.
    pub gradient_bytes: u32,
    /// Sends of fewer bytes go at once (eager); larger ones wait for their
    /// receiver (rendezvous). `u64::MAX`: every send eager.
    pub eager_bytes: u64,
    /// What the trees' sends cross.
    pub channels: Channels,
    /// The packet-level mode's parameters ([`super::packet`]).
    pub packet: PacketParams,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            alpha_us: 1.0,
            nic_us: 5.0,
            gamma_ns_per_byte: 0.005,
            link_gbps: None,
            density: 0.01,
            topk_ns_per_byte: 0.05,
            gradient_bytes: 4,
            eager_bytes: DEFAULT_EAGER_BYTES,
            channels: Channels::Fabric,
            packet: PacketParams::default(),
        }
    }
}

/// One parameter as the help text and the JSON output describe it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParamDoc {
    /// The name `--param` takes.
    pub name: &'static str,
    /// The default, as text.
    pub default: &'static str,
    /// What it is.
    pub meaning: &'static str,
}

/// Open MPI's eager limit for RDMA (`btl_openib_eager_limit`, 12 KiB).
pub const DEFAULT_EAGER_BYTES: u64 = 12 * 1024;

/// Every parameter, in the order of the module documentation.
pub const PARAMS: [ParamDoc; 9] = [
    ParamDoc {
        name: "alpha_us",
        default: "1.0",
        meaning: "latency of one switch traversal, µs",
    },
    ParamDoc {
        name: "nic_us",
        default: "5.0",
        meaning: "latency a message pays once at its two ends (NIC, PCIe, library), µs",
    },
    ParamDoc {
        name: "gamma_ns_per_byte",
        default: "0.005",
        meaning: "time to reduce one byte, ns",
    },
    ParamDoc {
        name: "link_gbps",
        default: "plan",
        meaning: "speed of every link, Gbps (`plan`: the plan's NIC and port speeds)",
    },
    ParamDoc {
        name: "density",
        default: "0.01",
        meaning: "HiTopKComm density: the fraction of gradient elements sent, 0 < ρ <= 1",
    },
    ParamDoc {
        name: "topk_ns_per_byte",
        default: "0.05",
        meaning: "HiTopKComm top-k selection time per byte of a GPU's shard, ns",
    },
    ParamDoc {
        name: "gradient_bytes",
        default: "4",
        meaning: "bytes per gradient element: 4 (FP32), 2 (FP16, BF16), 1 or 8; HiTopKComm sends each selected element as its value and a 4-byte index",
    },
    ParamDoc {
        name: "eager_bytes",
        default: "12288",
        meaning: "sends below this size go at once, larger ones wait for the receiver (rendezvous; Open MPI's openib eager limit); a size (B; KB, MB, GB = 10^3, 10^6, 10^9 bytes; KiB, MiB, GiB = 2^10, 2^20, 2^30 bytes), or `all` for every send eager",
    },
    ParamDoc {
        name: "channels",
        default: "fabric",
        meaning: "`fabric`: sends cross the plan's links (one NIC per rank); `pair`: each tree edge is a channel of its own at the ranks' link speed, no switch (C-Cube's DGX-1 NVLinks; trees only)",
    },
];

impl Params {
    /// Sets the parameter `name` from text, as `--param name=value` gives
    /// it.
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        let name = name.trim();
        let value = value.trim();
        let bad = |why: &str| bad_param(name, value, why);
        let number = || param_number(name, value);
        match name {
            "alpha_us" => self.alpha_us = number()?,
            "nic_us" => self.nic_us = number()?,
            "gamma_ns_per_byte" => self.gamma_ns_per_byte = number()?,
            "topk_ns_per_byte" => self.topk_ns_per_byte = number()?,
            "link_gbps" => {
                if value.eq_ignore_ascii_case("plan") {
                    self.link_gbps = None;
                } else {
                    let v = number()?;
                    if v == 0.0 {
                        return Err(bad("a link speed must be above 0 (or `plan`)"));
                    }
                    self.link_gbps = Some(v);
                }
            }
            "gradient_bytes" => {
                self.gradient_bytes = match value {
                    "1" => 1,
                    "2" => 2,
                    "4" => 4,
                    "8" => 8,
                    _ => {
                        return Err(bad(
                            "bytes per gradient element are 1, 2 (FP16, BF16), 4 (FP32) or 8",
                        ));
                    }
                };
            }
            "eager_bytes" => {
                if value.eq_ignore_ascii_case("all") {
                    self.eager_bytes = u64::MAX;
                } else {
                    self.eager_bytes = super::sizes::parse_byte_count(value)
                        .map_err(|_| bad("the value is not a size (e.g. 12288, 64KiB) or `all`"))?;
                }
            }
            "channels" => {
                self.channels = match value.to_ascii_lowercase().as_str() {
                    "fabric" => Channels::Fabric,
                    "pair" => Channels::Pair,
                    _ => return Err(bad("use `fabric` or `pair`")),
                };
            }
            "density" => {
                let v = number()?;
                if v == 0.0 || v > 1.0 {
                    return Err(bad("the density must be above 0 and at most 1"));
                }
                self.density = v;
            }
            _ if self.packet.set(name, value)? => {}
            _ => {
                let names: Vec<&str> = PARAMS
                    .iter()
                    .chain(&PACKET_PARAMS)
                    .map(|p| p.name)
                    .collect();
                return Err(Error::parameter(
                    "param",
                    format!(
                        "`{name}` is not a parameter; use one of {}",
                        names.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Applies `name=value` overrides in order, as `--param` gives them
    /// (one per flag, or several separated by commas).
    pub fn with_overrides<S: AsRef<str>>(mut self, overrides: &[S]) -> Result<Self> {
        for item in overrides {
            for pair in item
                .as_ref()
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
            {
                let (name, value) = pair.split_once('=').ok_or_else(|| {
                    Error::parameter(
                        "param",
                        format!("`{pair}` is not name=value; write e.g. alpha_us=2"),
                    )
                })?;
                self.set(name, value)?;
            }
        }
        Ok(self)
    }

    /// γ in µs per byte.
    pub(crate) fn gamma_us(&self) -> f64 {
        self.gamma_ns_per_byte / 1000.0
    }

    /// Top-k selection time in µs per byte.
    pub(crate) fn topk_us(&self) -> f64 {
        self.topk_ns_per_byte / 1000.0
    }

    /// The latency of a message whose route crosses `switches` switches, µs.
    pub(crate) fn latency_us(&self, switches: usize) -> f64 {
        self.nic_us + self.alpha_us * switches as f64
    }
}

/// The error of `--param name=value`, saying why.
pub(crate) fn bad_param(name: &str, value: &str, why: &str) -> Error {
    Error::parameter("param", format!("{name}={value}: {why}"))
}

/// The value of `--param name=value` as a finite number of 0 or more.
pub(crate) fn param_number(name: &str, value: &str) -> Result<f64> {
    let v: f64 = value
        .parse()
        .map_err(|_| bad_param(name, value, "the value is not a number"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(bad_param(
            name,
            value,
            "the value must be a finite number of 0 or more",
        ));
    }
    Ok(v)
}

/// Converts Gbps into bytes per µs (1 Gbps = 125 bytes/µs).
pub(crate) fn bytes_per_us(gbps: f64) -> f64 {
    gbps * 125.0
}
