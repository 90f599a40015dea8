//! The sparse allreduces: HiTopKComm (`hitopk`) and the flat top-k
//! all-gather it is measured against (`topk-allgather`), with the element
//! and value-index pair widths both count.

use super::builder::Builder;
use super::{Kind, SendSchedule, check_sends};
use crate::error::Result;

/// HiTopKComm (Algorithm 2) with `rows` the GPUs of each node (the
/// intra-node groups) and `cols` the j-th GPU of every node: a ring
/// reduce-scatter in every row (eq. 7), top-k selection of ρ·d/n elements,
/// an all-gather in every column of the selected values and their indices
/// (`w` + 4 bytes per element, `w` the gradient's element width), their
/// accumulation, and an all-gather in every row of the accumulated shard,
/// sent as value-index pairs (ρ·m of the shard's elements) while that is
/// smaller than the dense shard, dense otherwise, as
/// [`crate::estimate::models::hitopk_sent`] counts them (at
/// most the whole shard). The all-gathers are recursive doubling when the
/// group is a power of two (the `α log m` of eq. 9 and `α log n` of
/// eq. 10), ring otherwise.
#[allow(clippy::too_many_arguments)]
pub(crate) fn hitopk(
    p: usize,
    rows: &[Vec<u32>],
    cols: &[Vec<u32>],
    n: u64,
    density: f64,
    element_bytes: u32,
    gamma_us: f64,
    topk_us: f64,
) -> Result<SendSchedule> {
    let (w, pair) = element_and_pair_bytes(element_bytes);
    let kind = |groups: &[Vec<u32>]| {
        if groups.first().is_some_and(|g| g.len().is_power_of_two()) {
            Kind::HalvingDoubling
        } else {
            Kind::Ring
        }
    };
    // A ring reduce-scatter and all-gather over the rows and an
    // all-gather over the columns, each at most g - 1 or m - 1 steps of p
    // sends.
    let (g, m) = (
        rows.first().map_or(1, Vec::len) as u128,
        cols.first().map_or(1, Vec::len) as u128,
    );
    check_sends(p, (2 * g + m) * p as u128)?;
    let mut b = Builder::new(p, gamma_us)?;
    b.held.fill(n);
    b.ring_phase(rows, true, Some(0))?;
    let m = cols.first().map_or(1, Vec::len);
    let g = rows.first().map_or(1, Vec::len).max(1);
    for r in 0..p {
        let shard = b.held[r];
        // Top-k selection over the shard, then k = ρ·(shard / w) elements
        // of w + 4 bytes (value and index) to gather.
        b.pending_us[r] += topk_us * shard as f64;
        let k = (density * (shard / w) as f64).ceil() as u64;
        b.held[r] = pair * k;
    }
    b.phase(kind(cols), cols, false, Some(1))?;
    for r in 0..p {
        let shard = n / g as u64;
        // Accumulating the m sets of k values into the shard.
        b.pending_us[r] += gamma_us * (b.held[r] / pair * w) as f64;
        let elements = (density * m as f64 * (shard / w) as f64).ceil() as u64;
        b.held[r] = (elements * pair).min(shard);
    }
    b.phase(kind(rows), rows, false, Some(0))?;
    b.finish()
}

/// Top-k sparse allreduce by one flat all-gather (the baseline HiTopKComm
/// improves on): every rank selects `k = ⌈ρ·n/w⌉` of its `n/w` elements of
/// `w` bytes (the top-k selection costs `topk_us` a byte of the whole
/// buffer), all-gathers them as value-index pairs (`w + 4` bytes each),
/// by recursive doubling when `p` is a power of two and ring otherwise,
/// and accumulates the `p·k` pairs (γ per value byte).
pub(crate) fn topk_allgather(
    p: usize,
    n: u64,
    density: f64,
    element_bytes: u32,
    gamma_us: f64,
    topk_us: f64,
) -> Result<SendSchedule> {
    let (w, pair) = element_and_pair_bytes(element_bytes);
    check_sends(p, p as u128 * p as u128)?;
    let mut b = Builder::new(p, gamma_us)?;
    let k = topk_elements(n, density, element_bytes);
    for r in 0..p {
        b.pending_us[r] += topk_us * n as f64;
        b.held[r] = pair * k;
    }
    let kind = if p.is_power_of_two() {
        Kind::HalvingDoubling
    } else {
        Kind::Ring
    };
    b.phase(kind, &[(0..p as u32).collect()], false, None)?;
    for r in 0..p {
        b.pending_us[r] += gamma_us * (w * k * p as u64) as f64;
    }
    b.finish()
}

/// The bytes of a gradient element of `element_bytes` (at least 1), and
/// of a selected element sent with its index.
fn element_and_pair_bytes(element_bytes: u32) -> (u64, u64) {
    let w = u64::from(element_bytes.max(1));
    (w, w + crate::estimate::models::INDEX_BYTES as u64)
}

/// The elements a top-k selection keeps of `n` bytes of `element_bytes`
/// wide elements at density ρ: `⌈ρ·n/w⌉`.
pub(crate) fn topk_elements(n: u64, density: f64, element_bytes: u32) -> u64 {
    (density * (n / u64::from(element_bytes.max(1))) as f64).ceil() as u64
}
