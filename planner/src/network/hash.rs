//! The ECMP hash: FNV-1a 64 and the MurmurHash3 finaliser over a RoCEv2 flow's 5-tuple and a switch salt.
//!
//! A switch with n equal next hops takes the one at `h mod n`, where h is
//! [`ecmp_hash`] of the RoCEv2 5-tuple and the switch's index in the plan:
//!
//! - source and destination IP: `10.0.0.0 + i` for sub-node index i, as a
//!   32-bit number ([`sub_node_ip`]);
//! - protocol 17 (UDP) and destination port 4791 (RoCEv2);
//! - source port: 49152 to 65535 from the flow id and the seed
//!   ([`source_port`]), the way a RoCE NIC derives it from the queue pair;
//! - the switch index as a per-switch salt, so successive tiers do not make
//!   the same choice (hash polarisation).
//!
//! The bytes (all big-endian: source IP, destination IP, protocol, source
//! port, destination port, switch index, 17 bytes) go through FNV-1a 64 and
//! then the MurmurHash3 `fmix64` finaliser, because the low bits of plain
//! FNV-1a depend only on the low bits of the input bytes. Nothing here
//! depends on a process-random hash seed, so results are the same on every
//! run and machine.

/// IP protocol number of UDP.
pub const UDP: u8 = 17;

/// UDP destination port of RoCEv2.
pub const ROCE_V2_PORT: u16 = 4791;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a, 64 bits.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    fnv1a64_from(FNV_OFFSET, bytes)
}

/// FNV-1a continued from `state` (the hash of the bytes before `bytes`).
fn fnv1a64_from(state: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(state, |h, &b| (h ^ u64::from(b)).wrapping_mul(FNV_PRIME))
}

/// The MurmurHash3 64-bit finaliser: every input bit affects every output
/// bit.
pub fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

/// The IPv4 address a sub-node is given for hashing: `10.0.0.0` plus its
/// index, as a 32-bit number.
pub fn sub_node_ip(index: usize) -> u32 {
    0x0A00_0000u32.wrapping_add(index as u32)
}

/// The UDP source port of a flow: 49152 plus the low 14 bits of the hash
/// of the seed and the flow id (8 bytes each, big-endian).
pub fn source_port(flow: u64, seed: u64) -> u16 {
    PortSeed::new(seed).port(flow)
}

/// A seed's share of [`source_port`]: the FNV-1a state after the seed's
/// 8 bytes, which come first, so a proof that routes millions of flows
/// under one seed hashes them once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortSeed(u64);

impl PortSeed {
    /// The share of `seed`.
    pub fn new(seed: u64) -> Self {
        PortSeed(fnv1a64_from(FNV_OFFSET, &seed.to_be_bytes()))
    }

    /// [`source_port`] of `flow` under this seed.
    pub fn port(self, flow: u64) -> u16 {
        port_from(fnv1a64_from(self.0, &flow.to_be_bytes()))
    }

    /// The share of the hashes of every flow from source address `src_ip`
    /// whose flow id's high 32 bits are `flow_high` (a proof's flow id is
    /// its source rank's, shifted, and its destination rank's): what is
    /// the same for all of them, found once per rank instead of once per
    /// flow ([`SourceShare::prefix`] finishes it).
    pub fn source(self, src_ip: u32, flow_high: u32) -> SourceShare {
        SourceShare {
            ecmp: fnv1a64_from(FNV_OFFSET, &src_ip.to_be_bytes()),
            port: fnv1a64_from(self.0, &flow_high.to_be_bytes()),
        }
    }
}

/// The source port from the FNV-1a state after the seed and the flow id.
fn port_from(state: u64) -> u16 {
    0xC000 | (fmix64(state) & 0x3FFF) as u16
}

/// A source's share of its flows' hashes under one seed
/// ([`PortSeed::source`]): the FNV-1a state after its address (the ECMP
/// hash's first 4 bytes) and after the seed and the flow id's high half
/// (the source port's first 12 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceShare {
    ecmp: u64,
    port: u64,
}

impl SourceShare {
    /// [`EcmpPrefix::new`] of the flow from this source to `dst_ip` whose
    /// flow id's low 32 bits are `flow_low`, its source port included.
    pub fn prefix(self, dst_ip: u32, flow_low: u32) -> EcmpPrefix {
        let port = port_from(fnv1a64_from(self.port, &flow_low.to_be_bytes()));
        EcmpPrefix::after_source(self.ecmp, dst_ip, port)
    }
}

/// A flow's share of [`ecmp_hash`]: the FNV-1a state after its 13 bytes
/// before the switch's (addresses, protocol and ports), which are the same
/// at every switch of its route; [`EcmpPrefix::at`] adds the switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EcmpPrefix(u64);

impl EcmpPrefix {
    /// The share of the flow from `src_ip` to `dst_ip` with UDP source
    /// port `src_port`.
    pub fn new(src_ip: u32, dst_ip: u32, src_port: u16) -> Self {
        Self::after_source(
            fnv1a64_from(FNV_OFFSET, &src_ip.to_be_bytes()),
            dst_ip,
            src_port,
        )
    }

    /// The share from the FNV-1a state after the source address (the
    /// first 4 bytes) on: the other 9 bytes.
    fn after_source(state: u64, dst_ip: u32, src_port: u16) -> Self {
        let mut bytes = [0u8; 9];
        bytes[0..4].copy_from_slice(&dst_ip.to_be_bytes());
        bytes[4] = UDP;
        bytes[5..7].copy_from_slice(&src_port.to_be_bytes());
        bytes[7..9].copy_from_slice(&ROCE_V2_PORT.to_be_bytes());
        EcmpPrefix(fnv1a64_from(state, &bytes))
    }

    /// [`ecmp_hash`] of the flow at switch `switch`.
    pub fn at(self, switch: u32) -> u64 {
        fmix64(fnv1a64_from(self.0, &switch.to_be_bytes()))
    }
}

/// The ECMP hash of a RoCEv2 flow at switch `switch` (see the module
/// documentation for the byte layout).
pub fn ecmp_hash(src_ip: u32, dst_ip: u32, src_port: u16, switch: u32) -> u64 {
    EcmpPrefix::new(src_ip, dst_ip, src_port).at(switch)
}
