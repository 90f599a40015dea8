//! The parameters of the packet-level mode: packet size, switch buffers,
//! PFC, ECN and DCQCN, each with its default and where it comes from (the
//! module documentation of [`crate::estimate::packet`] gives the
//! sources). They live beside the other parameters so that [`super::Params`]
//! holds them without importing the packet engine.

use serde::{Deserialize, Serialize};

use super::{bad_param, param_number};
use crate::error::{Error, Result};
use crate::estimate::ParamDoc;

/// The packet mode's parameters; `None` takes the plan's QoS intent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PacketParams {
    /// Payload bytes per packet; `None`: the RoCE MTU that fits the plan's
    /// port MTU.
    pub mtu_bytes: Option<u32>,
    /// Header bytes a packet carries on the wire besides its payload.
    pub header_bytes: u32,
    /// Buffer per switch port, KiB.
    pub buffer_kib: f64,
    /// PFC headroom per ingress port and lossless priority, KiB: XOFF is
    /// `buffer_kib - pfc_headroom_kib`.
    pub pfc_headroom_kib: f64,
    /// XON is XOFF minus this many KiB.
    pub pfc_hysteresis_kib: f64,
    /// From crossing XOFF (or XON) to the upstream port stopping (or
    /// restarting), µs.
    pub pfc_delay_us: f64,
    /// ECN marking starts above this queue depth, KiB; `None`: the plan's.
    pub ecn_kmin_kib: Option<f64>,
    /// Every packet is marked above this depth, KiB; `None`: the plan's.
    pub ecn_kmax_kib: Option<f64>,
    /// Marking probability at `ecn_kmax_kib`, 0 to 1; `None`: the plan's.
    pub ecn_pmax: Option<f64>,
    /// DCQCN rate control at the senders.
    pub dcqcn: bool,
    /// DCQCN α gain g.
    pub dcqcn_g: f64,
    /// DCQCN α update period, µs: α decays by `1 - g` every period without
    /// a CNP.
    pub dcqcn_alpha_us: f64,
    /// DCQCN rate-increase timer T, µs.
    pub dcqcn_timer_us: f64,
    /// DCQCN byte counter B, bytes.
    pub dcqcn_bytes: u64,
    /// DCQCN additive increase R_AI, Mbps.
    pub dcqcn_rai_mbps: f64,
    /// DCQCN hyper increase R_HAI, Mbps.
    pub dcqcn_rhai_mbps: f64,
    /// DCQCN fast-recovery steps F.
    pub dcqcn_f: u32,
    /// Smallest rate DCQCN cuts to, Mbps.
    pub dcqcn_min_mbps: f64,
    /// Every cut sets DCQCN's target rate to the current rate (Zhu et al.);
    /// off: only a cut after a rate increase does (ConnectX's default).
    pub dcqcn_clamp_target: bool,
    /// A receiver sends at most one CNP per flow per this many µs.
    pub cnp_interval_us: f64,
}

impl Default for PacketParams {
    /// [`PacketParams::zhu2015`]: the defaults stay the paper's until the
    /// model is checked against a reference with
    /// [`PacketParams::connectx`]'s values (docs/packet-sim.md, "Which
    /// NIC").
    fn default() -> Self {
        Self::zhu2015()
    }
}

impl PacketParams {
    /// `--param nic=connectx`: an NVIDIA ConnectX NIC's firmware defaults for DCQCN
    /// (ConnectX-4 and later; `mlxconfig` names in brackets), and every
    /// byte a frame takes on the wire. Sources: NVIDIA DOCA 3.4.0, "DCQCN
    /// CC Parameters" (networking-docs.nvidia.com/doca/archive/3-4-0/
    /// dcqcn-cc-parameters) for α and the rate cut; the rate-increase and
    /// notification-point values as `mlxconfig -q` prints them on
    /// ConnectX-6 Dx firmware (the same on both ports):
    ///
    /// - g = 1 - 1019/1024 [DCE_TCP_G 1019], α every 1 µs [DCE_TCP_RTT 1];
    /// - a cut is `rc (1 - α/2)` [RPG_GD 11, RPG_MIN_DEC_FAC 50 %];
    /// - a cut keeps the earlier target unless the rate rose since the last
    ///   cut [CLAMP_TGT_RATE 0, CLAMP_TGT_RATE_AFTER_TIME_INC 1];
    /// - T = 300 µs [RPG_TIME_RESET], B = 32,767 bytes [RPG_BYTE_RESET],
    ///   F = 1 [RPG_THRESHOLD], R_AI = 5 Mbps [RPG_AI_RATE], R_HAI = 50
    ///   Mbps [RPG_HAI_RATE], floor 1 Mbps [RPG_MIN_RATE];
    /// - a CNP per flow at most every 4 µs [MIN_TIME_BETWEEN_CNPS].
    ///
    /// Headers: RoCEv2's Ethernet header and FCS (18), IPv4 (20), UDP (8),
    /// BTH (12) and ICRC (4), plus the preamble and start delimiter (8) and
    /// the smallest inter-frame gap (12) of IEEE 802.3: 82 bytes per packet.
    pub fn connectx() -> Self {
        Self {
            mtu_bytes: None,
            header_bytes: 82,
            buffer_kib: 640.0,
            pfc_headroom_kib: 64.0,
            pfc_hysteresis_kib: 18.0,
            pfc_delay_us: 1.0,
            ecn_kmin_kib: None,
            ecn_kmax_kib: None,
            ecn_pmax: None,
            dcqcn: true,
            dcqcn_g: 5.0 / 1024.0,
            dcqcn_alpha_us: 1.0,
            dcqcn_timer_us: 300.0,
            dcqcn_bytes: 32_767,
            dcqcn_rai_mbps: 5.0,
            dcqcn_rhai_mbps: 50.0,
            dcqcn_f: 1,
            dcqcn_min_mbps: 1.0,
            dcqcn_clamp_target: false,
            cnp_interval_us: 4.0,
        }
    }

    /// The defaults (`--param nic=zhu2015`): the DCQCN of Zhu et al., "Congestion Control for
    /// Large-Scale RDMA Deployments", SIGCOMM 2015 (g = 1/256, timer and α
    /// period 55 µs, B = 10 MB, F = 5, R_AI = 40 Mbps, a CNP per 50 µs;
    /// R_HAI = 400 Mbps and a 100 Mbps floor assumed), on links that count
    /// payload only (no header bytes), as the fluid modes do.
    pub fn zhu2015() -> Self {
        Self {
            header_bytes: 0,
            dcqcn_g: 1.0 / 256.0,
            dcqcn_alpha_us: 55.0,
            dcqcn_timer_us: 55.0,
            dcqcn_bytes: 10_000_000,
            dcqcn_rai_mbps: 40.0,
            dcqcn_rhai_mbps: 400.0,
            dcqcn_f: 5,
            dcqcn_min_mbps: 100.0,
            dcqcn_clamp_target: true,
            cnp_interval_us: 50.0,
            // The switches' buffers, PFC and ECN are not the NIC's.
            ..Self::connectx()
        }
    }
}

/// The packet mode's parameters as `--param` documents them.
pub const PACKET_PARAMS: [ParamDoc; 21] = [
    ParamDoc {
        name: "nic",
        default: "zhu2015",
        meaning: "packet mode: sets header_bytes and every dcqcn_* and cnp_* value at once: `zhu2015` (Zhu et al., SIGCOMM 2015, on links that count payload only: the default) or `connectx` (an NVIDIA ConnectX NIC's firmware defaults, with 82 header bytes a packet); give it before the values it should not override",
    },
    ParamDoc {
        name: "mtu_bytes",
        default: "plan",
        meaning: "packet payload, bytes (`plan`: the largest RoCE MTU, 256 to 4096, that fits the plan's port MTU with headers: 4096 for 9216)",
    },
    ParamDoc {
        name: "header_bytes",
        default: "0",
        meaning: "bytes per packet on the wire besides its payload (0: link speeds count payload, as the other modes do; 82 with nic=connectx: RoCEv2's Ethernet header and FCS, IPv4, UDP, BTH and ICRC, 62, plus preamble, start delimiter and inter-frame gap, 20)",
    },
    ParamDoc {
        name: "buffer_kib",
        default: "640",
        meaning: "packet mode: buffer per switch port, KiB (Broadcom Tomahawk 2: 42 MB shared by 64 ports of 100 GbE)",
    },
    ParamDoc {
        name: "pfc_headroom_kib",
        default: "64",
        meaning: "packet mode: PFC headroom per ingress port and priority, KiB; XOFF = buffer_kib - this",
    },
    ParamDoc {
        name: "pfc_hysteresis_kib",
        default: "18",
        meaning: "packet mode: XON = XOFF - this, KiB (two 9216-byte frames)",
    },
    ParamDoc {
        name: "pfc_delay_us",
        default: "1.0",
        meaning: "packet mode: from crossing XOFF or XON to the upstream port pausing or resuming, µs",
    },
    ParamDoc {
        name: "ecn_kmin_kib",
        default: "plan",
        meaning: "packet mode: ECN marking starts above this egress queue depth, KiB (`plan`: the QoS intent's ecn min_kb)",
    },
    ParamDoc {
        name: "ecn_kmax_kib",
        default: "plan",
        meaning: "packet mode: every packet is marked above this depth, KiB (`plan`: ecn max_kb)",
    },
    ParamDoc {
        name: "ecn_pmax",
        default: "plan",
        meaning: "packet mode: marking probability at ecn_kmax_kib, 0 to 1 (`plan`: ecn probability / 100)",
    },
    ParamDoc {
        name: "dcqcn",
        default: "on",
        meaning: "packet mode: DCQCN rate control at the senders, on or off",
    },
    ParamDoc {
        name: "dcqcn_g",
        default: "0.00390625",
        meaning: "packet mode: DCQCN α gain g (Zhu et al.: 1/256; ConnectX: 1 - DCE_TCP_G/1024 = 5/1024)",
    },
    ParamDoc {
        name: "dcqcn_alpha_us",
        default: "55",
        meaning: "packet mode: DCQCN α update period, µs (Zhu et al.: the rate timer's 55; ConnectX: DCE_TCP_RTT, 1)",
    },
    ParamDoc {
        name: "dcqcn_timer_us",
        default: "55",
        meaning: "packet mode: DCQCN rate-increase timer, µs (Zhu et al.; ConnectX: RPG_TIME_RESET, 300)",
    },
    ParamDoc {
        name: "dcqcn_bytes",
        default: "10MB",
        meaning: "packet mode: DCQCN byte counter, a size (Zhu et al.; ConnectX: RPG_BYTE_RESET, 32767 bytes)",
    },
    ParamDoc {
        name: "dcqcn_rai_mbps",
        default: "40",
        meaning: "packet mode: DCQCN additive increase, Mbps (Zhu et al.; ConnectX: RPG_AI_RATE, 5)",
    },
    ParamDoc {
        name: "dcqcn_rhai_mbps",
        default: "400",
        meaning: "packet mode: DCQCN hyper increase, Mbps (an assumption, 10 x the additive step; ConnectX: RPG_HAI_RATE, 50)",
    },
    ParamDoc {
        name: "dcqcn_f",
        default: "5",
        meaning: "packet mode: DCQCN fast-recovery steps F (Zhu et al.; ConnectX: RPG_THRESHOLD, 1)",
    },
    ParamDoc {
        name: "dcqcn_min_mbps",
        default: "100",
        meaning: "packet mode: lowest rate DCQCN cuts a flow to, Mbps (an assumption; ConnectX: RPG_MIN_RATE, 1)",
    },
    ParamDoc {
        name: "dcqcn_clamp_target",
        default: "on",
        meaning: "packet mode: on: every DCQCN cut sets the target rate to the current rate (Zhu et al.); off: only a cut after a rate increase does (ConnectX: CLAMP_TGT_RATE 0, CLAMP_TGT_RATE_AFTER_TIME_INC 1)",
    },
    ParamDoc {
        name: "cnp_interval_us",
        default: "50",
        meaning: "packet mode: a receiver sends at most one CNP per flow per this many µs (Zhu et al.; ConnectX: MIN_TIME_BETWEEN_CNPS, 4)",
    },
];

impl PacketParams {
    /// Sets `name` from text; `Ok(false)` when `name` is not a packet
    /// parameter.
    pub fn set(&mut self, name: &str, value: &str) -> Result<bool> {
        let bad = |why: &str| bad_param(name, value, why);
        let number = || param_number(name, value);
        let positive = || -> Result<f64> {
            let v = number()?;
            if v == 0.0 {
                return Err(bad("the value must be above 0"));
            }
            Ok(v)
        };
        let plan = value.eq_ignore_ascii_case("plan");
        match name {
            "nic" => {
                let base = match value.to_ascii_lowercase().as_str() {
                    "connectx" => Self::connectx(),
                    "zhu2015" => Self::zhu2015(),
                    _ => return Err(bad("write connectx or zhu2015")),
                };
                self.header_bytes = base.header_bytes;
                self.dcqcn_g = base.dcqcn_g;
                self.dcqcn_alpha_us = base.dcqcn_alpha_us;
                self.dcqcn_timer_us = base.dcqcn_timer_us;
                self.dcqcn_bytes = base.dcqcn_bytes;
                self.dcqcn_rai_mbps = base.dcqcn_rai_mbps;
                self.dcqcn_rhai_mbps = base.dcqcn_rhai_mbps;
                self.dcqcn_f = base.dcqcn_f;
                self.dcqcn_min_mbps = base.dcqcn_min_mbps;
                self.dcqcn_clamp_target = base.dcqcn_clamp_target;
                self.cnp_interval_us = base.cnp_interval_us;
            }
            "mtu_bytes" => {
                self.mtu_bytes = if plan {
                    None
                } else {
                    let v = positive()?;
                    if v.fract() != 0.0 || !(64.0..=1_048_576.0).contains(&v) {
                        return Err(bad(
                            "a packet payload is a whole number of bytes from 64 to 1048576 (or `plan`)",
                        ));
                    }
                    Some(v as u32)
                };
            }
            "header_bytes" => {
                let v = number()?;
                if v.fract() != 0.0 || v > 1024.0 {
                    return Err(bad("header bytes are a whole number from 0 to 1024"));
                }
                self.header_bytes = v as u32;
            }
            "buffer_kib" => self.buffer_kib = positive()?,
            "pfc_headroom_kib" => self.pfc_headroom_kib = number()?,
            "pfc_hysteresis_kib" => self.pfc_hysteresis_kib = number()?,
            "pfc_delay_us" => self.pfc_delay_us = number()?,
            "ecn_kmin_kib" => self.ecn_kmin_kib = if plan { None } else { Some(number()?) },
            "ecn_kmax_kib" => self.ecn_kmax_kib = if plan { None } else { Some(number()?) },
            "ecn_pmax" => {
                self.ecn_pmax = if plan {
                    None
                } else {
                    let v = number()?;
                    if v > 1.0 {
                        return Err(bad("a probability is at most 1 (write 0.01 for 1%)"));
                    }
                    Some(v)
                };
            }
            "dcqcn" => {
                self.dcqcn = match value.to_ascii_lowercase().as_str() {
                    "on" | "true" | "1" => true,
                    "off" | "false" | "0" => false,
                    _ => return Err(bad("write on or off")),
                };
            }
            "dcqcn_g" => {
                let v = positive()?;
                if v > 1.0 {
                    return Err(bad("the gain g is above 0 and at most 1"));
                }
                self.dcqcn_g = v;
            }
            "dcqcn_alpha_us" => self.dcqcn_alpha_us = positive()?,
            "dcqcn_timer_us" => self.dcqcn_timer_us = positive()?,
            "dcqcn_bytes" => {
                let v = crate::estimate::parse_byte_count(value)
                    .map_err(|_| bad("the value is not a size (e.g. 10MB)"))?;
                if v == 0 {
                    return Err(bad("the byte counter must be above 0"));
                }
                self.dcqcn_bytes = v;
            }
            "dcqcn_rai_mbps" => self.dcqcn_rai_mbps = positive()?,
            "dcqcn_rhai_mbps" => self.dcqcn_rhai_mbps = positive()?,
            "dcqcn_f" => {
                let v = number()?;
                if v.fract() != 0.0 || v > 1000.0 {
                    return Err(bad("F is a whole number from 0 to 1000"));
                }
                self.dcqcn_f = v as u32;
            }
            "dcqcn_min_mbps" => self.dcqcn_min_mbps = positive()?,
            "dcqcn_clamp_target" => {
                self.dcqcn_clamp_target = match value.to_ascii_lowercase().as_str() {
                    "on" | "true" | "1" => true,
                    "off" | "false" | "0" => false,
                    _ => return Err(bad("write on or off")),
                };
            }
            "cnp_interval_us" => self.cnp_interval_us = number()?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Checks the parameters against each other.
    pub(crate) fn check(&self) -> Result<()> {
        let bad = |what: String| Err(Error::parameter("param", what));
        if self.pfc_headroom_kib >= self.buffer_kib {
            return bad(format!(
                "pfc_headroom_kib={} is not below buffer_kib={}: XOFF would be 0 or less; give a smaller headroom or a larger buffer",
                self.pfc_headroom_kib, self.buffer_kib
            ));
        }
        if let (Some(lo), Some(hi)) = (self.ecn_kmin_kib, self.ecn_kmax_kib)
            && lo > hi
        {
            return bad(format!(
                "ecn_kmin_kib={lo} is above ecn_kmax_kib={hi}; give Kmin <= Kmax"
            ));
        }
        Ok(())
    }
}

/// The largest RoCE MTU (256, 512, 1024, 2048 or 4096 bytes of payload)
/// whose packet fits a port MTU of `port_mtu` bytes with RoCEv2's headers
/// (IPv4 20, UDP 8, BTH 12, ICRC 4: 44 bytes inside the Ethernet MTU).
pub fn roce_mtu(port_mtu: u32) -> u32 {
    [4096, 2048, 1024, 512]
        .into_iter()
        .find(|&m| m + 44 <= port_mtu)
        .unwrap_or(256)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roce_mtu_fits_the_port_mtu() {
        assert_eq!(roce_mtu(9216), 4096);
        assert_eq!(roce_mtu(4200), 4096);
        assert_eq!(roce_mtu(4100), 2048);
        assert_eq!(roce_mtu(1500), 1024);
    }

    #[test]
    fn set_reads_names_and_refuses_bad_values() {
        let mut p = PacketParams::default();
        assert!(p.set("mtu_bytes", "1024").unwrap());
        assert_eq!(p.mtu_bytes, Some(1024));
        assert!(p.set("mtu_bytes", "plan").unwrap());
        assert_eq!(p.mtu_bytes, None);
        assert!(p.set("dcqcn", "off").unwrap());
        assert!(!p.dcqcn);
        assert!(p.set("dcqcn_bytes", "1MB").unwrap());
        assert_eq!(p.dcqcn_bytes, 1_000_000);
        assert!(!p.set("alpha_us", "1").unwrap());
        // `nic` sets the header and the DCQCN values together; values given
        // after it win.
        assert!(p.set("nic", "zhu2015").unwrap());
        assert!(p.set("dcqcn_timer_us", "70").unwrap());
        let zhu = PacketParams::zhu2015();
        assert_eq!(
            (p.header_bytes, p.dcqcn_g, p.dcqcn_f, p.dcqcn_timer_us),
            (0, zhu.dcqcn_g, 5, 70.0)
        );
        assert!(p.set("nic", "ConnectX").unwrap());
        assert_eq!(p.header_bytes, 82);
        assert_eq!(p.cnp_interval_us, 4.0);
        assert_eq!(p.dcqcn_bytes, 32_767);
        for (name, value) in [
            ("mtu_bytes", "10"),
            ("ecn_pmax", "2"),
            ("dcqcn", "maybe"),
            ("dcqcn_g", "0"),
            ("nic", "cx7"),
            ("dcqcn_alpha_us", "0"),
            ("buffer_kib", "-1"),
        ] {
            let e = p.set(name, value).unwrap_err().to_string();
            assert!(e.contains(name), "{e}");
        }
        p.buffer_kib = 32.0;
        assert!(p.check().is_err());
    }
}
