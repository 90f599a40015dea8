//! What the hosts mark: the traffic classes a RoCE collective engine puts
//! on each packet it sends, as `check-qos` models them.
//!
//! The per-direction proof (EFLOPS Sec. IV-B) holds when every lossless
//! packet carries the class of the part it is *sent from*. NCCL's IB/RoCE
//! transport (src/transport/net_ib/connect.cc, read at NCCL 2.30) marks:
//!
//! - **data** (the sender's RDMA writes): its `NCCL_IB_TC`, or the
//!   communicator's `trafficClass` (NCCL 2.26 and later) when the variable
//!   is not set; the variable wins over the communicator's value;
//! - **CTS writes and the RoCE ACKs** (sent by the receiver, on the
//!   receiver's queue pair): `NCCL_IB_FIFO_TC` when it is set (NCCL 2.22.3
//!   and later, NVIDIA/nccl#1194), otherwise the *sender's* traffic class,
//!   which the receiver adopts from the connection metadata
//!   (`rtrAttr->tc = remMeta->tc` on the accept side).
//!
//! `render --hosts` and `provisioner submit` give every rank the class of
//! its part in both variables, so every packet carries the class of the
//! part it leaves from ([`FifoTc::OwnClass`]). An older NCCL, or a host
//! without `NCCL_IB_FIFO_TC`, sends the receiver's answers in the sender's
//! class ([`FifoTc::Unset`]); a cluster-wide `NCCL_IB_TC` puts every rank
//! in one class. `check-qos` walks every such packet along the routes and
//! proves (or refutes) the graph with them.
//!
//! `NCCL_IB_SL` sets the service level, which an Ethernet fabric sees only
//! as the 802.1p bits of VLAN-tagged frames; the planner's switches and
//! hosts trust DSCP, so the SL does not enter the proof (and NCCL has no
//! FIFO counterpart: the receiver always adopts the sender's SL).
//!
//! # Open MPI over UCX
//!
//! Open MPI's `pml/ucx` (its choice on RoCE when built with UCX) moves
//! data over UCX's RC or DC transports. UCX marks by the *local*
//! configuration only, read at UCX 1.22.0:
//!
//! - `UCX_IB_TRAFFIC_CLASS` is the traffic class byte (DSCP << 2) of the
//!   interface (`src/uct/ib/base/ib_iface.c`, `TRAFFIC_CLASS`); `auto`
//!   (the default) takes the port's global class from
//!   `/sys/class/infiniband/<dev>/tc/<port>/traffic_class`, else 106
//!   (DSCP 26, `UCT_IB_DEFAULT_ROCEV2_DSCP`, `ib_device.c`);
//! - an RC queue pair's primary path carries that class
//!   (`uct_ib_iface_fill_ah_attr_from_gid_lid`; `rc_mlx5_devx.c`,
//!   `primary_address_path.tclass`), and so does a DC target
//!   (`dc_mlx5_devx.c`, `dctc.tclass` and `dctc.dscp`) and a DC
//!   initiator's address vector. UCX never takes the peer's class, unlike
//!   NCCL's receiver.
//!
//! A queue pair sends everything on its own path: its RDMA writes and
//! sends, its RDMA-read requests, and, as responder, the read responses
//! and the ACKs (InfiniBand Architecture Specification vol. 1, ch. 9: the
//! responder answers on its own queue pair; the same hardware behaviour
//! makes NCCL's receiver ACK in the class its queue pair was given). So
//! every packet leaves in the class of the rank that sends it: with each
//! rank's own class in `UCX_IB_TRAFFIC_CLASS`, as `provisioner submit`'s
//! `rank-env.sh` sets it, UCX keeps the per-direction proof whatever the
//! protocol (eager, rendezvous by RDMA write or by RDMA read). One value
//! on every rank (or `auto` everywhere) puts all of it in one class
//! ([`UcxTc::Fixed`]). `UCX_IB_SL` is RoCE v2's 802.1p priority, outside
//! the proof like `NCCL_IB_SL`. `check-qos` walks the union of what NCCL
//! and UCX mark: a job may run both (NCCL for GPU collectives, UCX for its
//! MPI traffic).

use serde::Serialize;

use crate::error::Error;

/// UCX's traffic class when `UCX_IB_TRAFFIC_CLASS` is `auto` and the port
/// has no global class (`UCT_IB_DEFAULT_ROCEV2_DSCP`, UCX 1.22.0).
pub const UCX_AUTO_TC: u8 = 106;

/// The first NCCL release with `NCCL_IB_FIFO_TC`.
pub const FIFO_TC_SINCE: (u32, u32, u32) = (2, 22, 3);

/// What every rank's NCCL marks, beyond what the plan's classes say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostMarking {
    /// `NCCL_IB_TC` given to every rank instead of its class's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tc: Option<u8>,
    /// What the receivers' CTS writes and ACKs carry.
    pub fifo_tc: FifoTc,
    /// Why the marking is what it is (the version or variable that made
    /// it so), for the report.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub because: Vec<String>,
    /// What Open MPI's UCX marks: everything a rank sends, in one class.
    pub ucx: UcxTc,
    /// False for an NCCL older than 2.22.3, which ignores
    /// `NCCL_IB_FIFO_TC`.
    #[serde(skip)]
    fifo_supported: bool,
}

/// The traffic class UCX puts on everything a rank's queue pairs send
/// (data, RDMA-read requests and responses, ACKs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "tc")]
pub enum UcxTc {
    /// The rank's own class (`UCX_IB_TRAFFIC_CLASS` = its class's DSCP << 2,
    /// as `provisioner submit` sets it).
    #[default]
    OwnClass,
    /// One traffic class on every rank (one value, or `auto`).
    Fixed(u8),
}

impl Default for HostMarking {
    /// As `render --hosts` and `provisioner submit` set it up.
    fn default() -> Self {
        HostMarking {
            tc: None,
            fifo_tc: FifoTc::OwnClass,
            because: Vec::new(),
            ucx: UcxTc::OwnClass,
            fifo_supported: true,
        }
    }
}

/// The traffic class of a receiver's CTS writes and ACKs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "tc")]
pub enum FifoTc {
    /// The receiver's own data class (`NCCL_IB_FIFO_TC` = its
    /// `NCCL_IB_TC`, as the planner and the provisioner set it).
    #[default]
    OwnClass,
    /// One traffic class on every rank.
    Fixed(u8),
    /// The data sender's class: NCCL before 2.22.3, or the variable unset.
    Unset,
}

impl HostMarking {
    /// Applies `NAME=VALUE` as every rank's environment would: the
    /// variables NCCL reads for its traffic classes. An empty value unsets
    /// the variable.
    pub fn set_env(&mut self, assignment: &str) -> Result<(), Error> {
        let Some((name, value)) = assignment.split_once('=') else {
            return Err(Error::parameter(
                "env",
                format!("`{assignment}` is not NAME=VALUE (e.g. NCCL_IB_TC=104)"),
            ));
        };
        let tc = |v: &str| -> Result<u8, Error> {
            v.trim().parse::<u8>().map_err(|_| {
                Error::parameter(
                    "env",
                    format!("{name}={v}: a traffic class is a number from 0 to 255 (DSCP << 2)"),
                )
            })
        };
        match name.trim() {
            "NCCL_IB_TC" if value.trim().is_empty() => self.tc = None,
            "NCCL_IB_TC" => self.tc = Some(tc(value)?),
            "NCCL_IB_FIFO_TC" if value.trim().is_empty() => self.fifo_tc = FifoTc::Unset,
            "NCCL_IB_FIFO_TC" => {
                let fixed = tc(value)?;
                // An NCCL older than 2.22.3 ignores the variable.
                if self.fifo_supported {
                    self.fifo_tc = FifoTc::Fixed(fixed);
                }
            }
            "UCX_IB_TRAFFIC_CLASS" if matches!(value.trim(), "" | "auto") => {
                // `auto`: the port's global class, else 106; the port's
                // class is not in the plan, so its default is modelled.
                self.ucx = UcxTc::Fixed(UCX_AUTO_TC);
                self.because.push(format!(
                    "UCX_IB_TRAFFIC_CLASS=auto (the port's global traffic class, else {UCX_AUTO_TC}: modelled as {UCX_AUTO_TC} on every rank)"
                ));
                return Ok(());
            }
            "UCX_IB_TRAFFIC_CLASS" => self.ucx = UcxTc::Fixed(tc(value)?),
            "NCCL_IB_SL" | "UCX_IB_SL" => {
                return Err(Error::parameter(
                    "env",
                    format!(
                        "{} does not change what a DSCP-trusting Ethernet fabric sees (the planner's switches and hosts trust DSCP); leave it out",
                        name.trim()
                    ),
                ));
            }
            other => {
                return Err(Error::parameter(
                    "env",
                    format!(
                        "{other}: check-qos models NCCL_IB_TC and NCCL_IB_FIFO_TC, the variables that decide what NCCL marks, and UCX_IB_TRAFFIC_CLASS, what Open MPI's UCX marks"
                    ),
                ));
            }
        }
        self.because
            .push(format!("{}={}", name.trim(), value.trim()));
        Ok(())
    }

    /// The marking of an NCCL release: before 2.22.3 there is no
    /// `NCCL_IB_FIFO_TC`, so the receivers answer in the sender's class.
    pub fn for_nccl_version(version: &str) -> Result<Self, Error> {
        let parsed = parse_version(version).ok_or_else(|| {
            Error::parameter(
                "nccl-version",
                format!("`{version}` is not an NCCL version such as 2.22.3"),
            )
        })?;
        Ok(if parsed < FIFO_TC_SINCE {
            HostMarking {
                tc: None,
                fifo_tc: FifoTc::Unset,
                because: vec![format!(
                    "NCCL {version} has no NCCL_IB_FIFO_TC (2.22.3 and later)"
                )],
                ucx: UcxTc::OwnClass,
                fifo_supported: false,
            }
        } else {
            HostMarking::default()
        })
    }

    /// One line for the report: what data and answers carry.
    pub fn describe(&self) -> (String, String) {
        let data = match self.tc {
            None => "the sending sub-node's class (NCCL_IB_TC = DSCP << 2 per class)".to_string(),
            Some(tc) => format!("NCCL_IB_TC={tc} (DSCP {}) on every rank", tc >> 2),
        };
        let mut answers = match self.fifo_tc {
            FifoTc::OwnClass => {
                "the receiver's own class (NCCL_IB_FIFO_TC = its NCCL_IB_TC, NCCL 2.22.3 and later)"
                    .to_string()
            }
            FifoTc::Fixed(tc) => format!("NCCL_IB_FIFO_TC={tc} (DSCP {}) on every rank", tc >> 2),
            FifoTc::Unset => {
                "the data sender's class (no NCCL_IB_FIFO_TC: the receiver adopts it)".to_string()
            }
        };
        // UCX in each rank's own class marks as NCCL does by default; said
        // only when it adds a class.
        if let UcxTc::Fixed(tc) = self.ucx {
            answers.push_str(&format!(
                "; Open MPI's UCX sends data, RDMA-read responses and ACKs in UCX_IB_TRAFFIC_CLASS={tc} (DSCP {}) on every rank",
                tc >> 2
            ));
        }
        (data, answers)
    }
}

/// `2.22.3` -> (2, 22, 3); `2.22` -> (2, 22, 0). Suffixes such as
/// `2.23.4-1` keep their numeric part.
fn parse_version(v: &str) -> Option<(u32, u32, u32)> {
    let core = v.trim().trim_start_matches('v');
    let core = core.split(['-', '+']).next()?;
    let mut parts = core.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let patch = match parts.next() {
        Some(p) => p.parse().ok()?,
        None => 0,
    };
    if parts.next().is_some() {
        return None;
    }
    Some((major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_before_2_22_3_answer_in_the_senders_class() {
        assert_eq!(
            HostMarking::for_nccl_version("2.22.2").unwrap().fifo_tc,
            FifoTc::Unset
        );
        assert_eq!(
            HostMarking::for_nccl_version("2.21.5-1").unwrap().fifo_tc,
            FifoTc::Unset
        );
        assert_eq!(
            HostMarking::for_nccl_version("2.22.3").unwrap().fifo_tc,
            FifoTc::OwnClass
        );
        assert_eq!(
            HostMarking::for_nccl_version("2.30").unwrap().fifo_tc,
            FifoTc::OwnClass
        );
        assert!(HostMarking::for_nccl_version("two").is_err());
        assert!(HostMarking::for_nccl_version("2.22.3.1").is_err());
    }

    #[test]
    fn environment_sets_what_nccl_reads() {
        let mut m = HostMarking::default();
        m.set_env("NCCL_IB_TC=106").unwrap();
        assert_eq!(m.tc, Some(106));
        m.set_env("NCCL_IB_FIFO_TC=").unwrap();
        assert_eq!(m.fifo_tc, FifoTc::Unset);
        m.set_env("NCCL_IB_FIFO_TC=136").unwrap();
        assert_eq!(m.fifo_tc, FifoTc::Fixed(136));
        let e = m.set_env("NCCL_IB_TC=300").unwrap_err().to_string();
        assert!(e.contains("0 to 255"), "{e}");
        let e = m.set_env("NCCL_ALGO=Ring").unwrap_err().to_string();
        assert!(e.contains("NCCL_IB_TC and NCCL_IB_FIFO_TC"), "{e}");
        assert!(m.set_env("NCCL_IB_TC").is_err());
    }

    /// UCX's variable: a value or `auto` (106 without a port class) puts
    /// every rank in one class; its SL is refused like NCCL's.
    #[test]
    fn environment_sets_what_ucx_reads() {
        let mut m = HostMarking::default();
        assert_eq!(m.ucx, UcxTc::OwnClass);
        m.set_env("UCX_IB_TRAFFIC_CLASS=136").unwrap();
        assert_eq!(m.ucx, UcxTc::Fixed(136));
        m.set_env("UCX_IB_TRAFFIC_CLASS=auto").unwrap();
        assert_eq!(m.ucx, UcxTc::Fixed(UCX_AUTO_TC));
        assert!(m.because[1].starts_with("UCX_IB_TRAFFIC_CLASS=auto"));
        let e = m.set_env("UCX_IB_SL=3").unwrap_err().to_string();
        assert!(e.contains("UCX_IB_SL does not change"), "{e}");
        let e = m.set_env("UCX_IB_TRAFFIC_CLASS=x").unwrap_err().to_string();
        assert!(e.contains("0 to 255"), "{e}");
    }

    fn eflops() -> crate::checked::CheckedPlan {
        crate::design::design(
            &crate::design::bundled_inventory("eflops-4x16"),
            &crate::design::DesignOptions::default(),
        )
        .unwrap()
    }

    /// UCX with each rank's own class (what `provisioner submit` sets): the
    /// EFLOPS proof holds, with no answer walk beyond the data's.
    #[test]
    fn ucx_in_each_ranks_own_class_keeps_the_proof() {
        let c = super::super::check_qos_marked(&eflops(), &HostMarking::default());
        assert!(c.ok, "{:?}", c.findings);
        assert_eq!(c.answer_flows, 0);
    }

    /// One UCX class on every rank (one value, or `auto`): the lower
    /// part's data, read responses and ACKs go in the upper part's
    /// priority, which closes EFLOPS Fig. 7's loop; the host setting is
    /// named with the ranks it misplaces, and the fix names the variable.
    #[test]
    fn ucx_in_one_class_breaks_the_proof_and_is_named() {
        for (value, tc) in [("104", 104), ("auto", UCX_AUTO_TC)] {
            let mut m = HostMarking::default();
            m.set_env(&format!("UCX_IB_TRAFFIC_CLASS={value}")).unwrap();
            let c = super::super::check_qos_marked(&eflops(), &m);
            assert!(!c.ok, "{value}");
            let kinds: Vec<&str> = c.findings.iter().map(|f| f.kind.as_str()).collect();
            assert_eq!(
                kinds,
                ["host-setting", "deadlock-cycle"],
                "{value}: {:?}",
                c.findings
            );
            assert_eq!(c.findings[0].object, format!("UCX_IB_TRAFFIC_CLASS={tc}"));
            assert!(
                c.findings[0].message.contains("32 sub-nodes of class roce-lower send data, RDMA-read responses and ACKs in DSCP 26"),
                "{}",
                c.findings[0].message
            );
            assert!(
                c.findings[1].fix.contains("UCX_IB_TRAFFIC_CLASS"),
                "{}",
                c.findings[1].fix
            );
            assert!(
                c.marking.answers.contains("Open MPI's UCX"),
                "{}",
                c.marking.answers
            );
        }
        // The lower part's class on every rank fails the same way, mirrored.
        let mut m = HostMarking::default();
        m.set_env("UCX_IB_TRAFFIC_CLASS=136").unwrap();
        let c = super::super::check_qos_marked(&eflops(), &m);
        assert!(!c.ok);
        assert!(
            c.findings[0]
                .message
                .contains("32 sub-nodes of class roce-upper"),
            "{}",
            c.findings[0].message
        );
    }

    #[test]
    fn an_old_nccl_ignores_the_fifo_variable() {
        let mut m = HostMarking::for_nccl_version("2.18.1").unwrap();
        m.set_env("NCCL_IB_FIFO_TC=104").unwrap();
        assert_eq!(m.fifo_tc, FifoTc::Unset);
    }
}
