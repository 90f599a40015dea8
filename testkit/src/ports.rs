//! Loopback addresses for tests whose ranks bind ports of their own (the
//! probe's and the burn-in's meshes): each port handed out once per
//! process, and below the kernel's ephemeral range.
//!
//! A test that binds `127.0.0.1:0` to find a free port and then lets it go
//! races every other test running beside it: another test's `bind(0)`, or
//! an outgoing connection's source port, may take it before the rank binds
//! it. The ports handed out here lie below `net.ipv4.ip_local_port_range`,
//! where the kernel puts neither, and no two calls in one process get the
//! same port, so tests running at once never share one.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU32, Ordering};

/// The lowest port handed out.
const FLOOR: u16 = 10_000;

/// How many ports were handed out (or tried) in this process.
static TAKEN: AtomicU32 = AtomicU32::new(0);

/// The ports below the ephemeral range, `FLOOR` up to (not including) its
/// first port (`32768` by default); the default range when it cannot be
/// read or leaves nothing below it.
fn span() -> (u16, u32) {
    let first = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u16>().ok())
        .filter(|&lo| lo > FLOOR + 1_000)
        .unwrap_or(32_768);
    (FLOOR, u32::from(first - FLOOR))
}

/// `n` loopback addresses with ports free now, none handed out before in
/// this process. Different processes start at different places of the
/// span (by process id), so two test binaries at once rarely meet.
///
/// # Panics
/// When the whole span has been handed out (some 22,000 ports).
pub fn loopback(n: usize) -> Vec<SocketAddr> {
    let (floor, span) = span();
    let start = std::process::id() % span;
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let k = TAKEN.fetch_add(1, Ordering::Relaxed);
        assert!(
            k < span,
            "every loopback port from {floor} to {} was handed out",
            u32::from(floor) + span - 1
        );
        let port = floor + ((start + k) % span) as u16;
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        if TcpListener::bind(addr).is_ok() {
            out.push(addr);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ports are distinct, bindable, and below the ephemeral range.
    #[test]
    fn ports_are_distinct_free_and_below_the_ephemeral_range() {
        let (floor, span) = span();
        let a = loopback(16);
        let b = loopback(16);
        let mut all: Vec<u16> = a.iter().chain(&b).map(SocketAddr::port).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 32);
        for p in all {
            assert!(u32::from(p) >= u32::from(floor) && u32::from(p) < u32::from(floor) + span);
            TcpListener::bind((Ipv4Addr::LOCALHOST, p)).unwrap();
        }
    }
}
