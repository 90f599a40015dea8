//! The baselines: Gloo's and Horovod's two-level allreduce (`two-level`)
//! and a sharded parameter server with a server on every rank (`ps`).

use super::builder::Builder;
use super::{Kind, NONE, SendSchedule, StepPhase, check_sends, split};
use crate::error::Result;

/// Gloo's two-level allreduce (BlueConnect eq. 4): in every group (the
/// ranks under one switch, `groups`, the first of each its master) a ring
/// reduce-scatter and a binomial gather of the shards to the master (the
/// reduce, `T_r + T_c`); an allreduce among the masters (`masters`),
/// halving-doubling when their count is a power of two and ring otherwise;
/// then a binomial scatter from the master and a ring all-gather in every
/// group (the broadcast, `T_c + T_r`).
pub(crate) fn two_level(
    p: usize,
    groups: &[Vec<u32>],
    masters: &[u32],
    n: u64,
    gamma_us: f64,
) -> Result<SendSchedule> {
    let g = groups.first().map_or(1, Vec::len).max(1);
    let m = masters.len().max(1);
    check_sends(p, 4 * p as u128 * g as u128 + 2 * m as u128 * m as u128)?;
    let mut b = Builder::new(p, gamma_us)?;
    b.held.fill(n);
    b.ring_phase(groups, true, Some(0))?;
    // Position i owns chunk (i + 1) mod g of `split(n, g)` after the
    // reduce-scatter.
    let sizes = split(n, g);
    let owned = |i: usize| sizes[(i + 1) % g];
    let rounds = g.next_power_of_two().trailing_zeros() as usize;
    // Gather: in round k, position i with i mod 2^(k+1) = 2^k sends the
    // shards of positions i..i + 2^k to i - 2^k.
    for k in 0..rounds {
        let d = 1usize << k;
        let step = b.step(b.s.steps.len(), StepPhase::Gather, Some(0));
        let mut ids = Vec::new();
        for group in groups {
            for i in (d..g).step_by(2 * d) {
                let bytes: u64 = (i..(i + d).min(g)).map(owned).sum();
                ids.push(b.program_send(group[i], group[i - d], bytes, step));
            }
        }
        for id in ids {
            b.deliver(id, false)?;
        }
    }
    let kind = if m.is_power_of_two() {
        Kind::HalvingDoubling
    } else {
        Kind::Ring
    };
    let top = vec![masters.to_vec()];
    for &r in masters {
        b.held[r as usize] = n;
    }
    b.phase(kind, &top, true, Some(1))?;
    b.phase(kind, &top, false, Some(1))?;
    // Scatter: the gather's rounds backwards.
    for k in (0..rounds).rev() {
        let d = 1usize << k;
        let step = b.step(b.s.steps.len(), StepPhase::Scatter, Some(0));
        let mut ids = Vec::new();
        for group in groups {
            for i in (d..g).step_by(2 * d) {
                let bytes: u64 = (i..(i + d).min(g)).map(owned).sum();
                ids.push(b.program_send(group[i - d], group[i], bytes, step));
            }
        }
        for id in ids {
            b.deliver(id, false)?;
        }
    }
    for group in groups {
        for (i, &r) in group.iter().enumerate() {
            b.held[r as usize] = owned(i);
        }
    }
    b.ring_phase(groups, false, Some(0))?;
    b.finish()
}

/// A sharded parameter server with a server on every rank (colocated, as
/// BytePS and ps-lite run one server per worker machine): rank j holds
/// shard j of `split(n, p)`. Every rank pushes shard j to rank j, all at
/// once; server j reduces the p - 1 pushes it receives (γ a byte) and then
/// every worker pulls its copy of shard j, all at once.
pub(crate) fn parameter_server(p: usize, n: u64, gamma_us: f64) -> Result<SendSchedule> {
    check_sends(p, 2 * p as u128 * p as u128)?;
    let mut b = Builder::new(p, gamma_us)?;
    if p == 1 {
        return b.finish();
    }
    let shards = split(n, p);
    let push = b.step(0, StepPhase::Push, None);
    let mut into: Vec<Vec<u32>> = vec![Vec::with_capacity(p - 1); p];
    for r in 0..p {
        for (j, incoming) in into.iter_mut().enumerate() {
            if j != r {
                incoming.push(b.push(r as u32, j as u32, shards[j], push, &[], 0.0));
            }
        }
    }
    let pull = b.step(1, StepPhase::Pull, None);
    let mut last = vec![NONE; p];
    for (j, incoming) in into.iter().enumerate() {
        let reduce = gamma_us * ((p - 1) as u64 * shards[j]) as f64;
        for (r, slot) in last.iter_mut().enumerate() {
            if r != j {
                *slot = b.push(j as u32, r as u32, shards[j], pull, incoming, reduce);
            }
        }
    }
    b.last_recv = last;
    b.finish()
}
