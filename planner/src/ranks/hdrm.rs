//! EFLOPS Algorithm 1: the rank mapping of Halving-Doubling with Rank
//! Mapping (HDRM) on an M x N BiGraph.
//!
//! # The algorithm as implemented
//!
//! Let H = N/2 be the number of switches in each part.
//!
//! 1. Pairs: for i in 0..min(H, X/2), `r_i = [2i; 2i+1]`; when i has an odd
//!    number of 1 bits the two elements are swapped, `r_i = [2i+1; 2i]`.
//! 2. When X <= N only these pairs are used: appending them column by column
//!    gives two vectors of X/2 ranks each, and that is the whole mapping.
//! 3. Otherwise the N/2 pairs form the base `B = [B0; B1]` (for N = 8,
//!    `B0 = [0,3,5,6]` and `B1 = [1,2,4,7]`). For every logical group j in
//!    0..min(M, X/N), R_j = B + j*N; when j has an odd number of 1 bits the
//!    two vectors of R_j are swapped; then the first vector of R_j is rotated
//!    cyclically to the left by j places (the element at index k moves to
//!    index (k - j) mod H, as `slice::rotate_left` does). The paper writes
//!    the rotation with shifts by j and N - j; the vectors have H elements,
//!    so the rotation here is over H.
//! 4. Merge: the rank at index k of vector v of every logical group goes to
//!    the same physical group, so a physical group collects one rank per
//!    logical group, in logical-group order.
//!
//! # Where the vectors go
//!
//! Vector 0 (the first vector, `[0,3,5,6]` in the 8-rank base) is the upper
//! part and vector 1 the lower part; index k of a vector is the k-th switch
//! of that part. Because every upper switch has a link to every lower
//! switch, any one-to-one assignment of indices to switches (and of parts to
//! vectors) gives the same loads; [`super::rank_table`] takes the switches of
//! each part in plan order.
//!
//! # Why every connection gets its own link
//!
//! Write a rank as r = j*N + b with b < N (so j is its logical group) and
//! i = b / 2 (its pair within the base). Following the steps above:
//!
//! - the number of 1 bits of b decides its vector in the base (pair i is
//!   swapped exactly when i has an odd number of 1 bits, and b = 2i + e), and
//!   swapping the vectors of group j adds the 1 bits of j; N being a power of
//!   two, r is in the upper part exactly when r has an even number of 1 bits;
//! - a lower rank sits on lower switch i; an upper rank sits on upper switch
//!   (i - j) mod H, because only the first vector (the upper one) is
//!   rotated.
//!
//! A halving-doubling step with distance d = 2^s pairs r with r XOR d; the
//! two differ in one bit, so they are in different parts and their flows
//! take the direct link between upper switch a and lower switch c, one flow
//! in each direction. Given (a, c), the pair is fixed: for d < N both ranks
//! are in the same group j, the lower rank has i = c, the upper one has
//! i' = c XOR d/2 (or c when d = 1), and j = (i' - a) mod H; for d >= N both
//! ranks share b and i = c, and the group of the upper rank is (c - a) mod H.
//! That inverse is unique because there are at most M <= H groups. So no
//! two pairs of a step share a link, in either direction.

use crate::error::{Error, Result};

/// The result of Algorithm 1: the ranks on every switch of each part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// Switches in each part (N/2).
    pub half: usize,
    /// `upper[k]`: the ranks on the k-th upper switch (vector 0), one per
    /// logical group in group order; empty when the switch is not used.
    pub upper: Vec<Vec<usize>>,
    /// `lower[k]`: the ranks on the k-th lower switch (vector 1).
    pub lower: Vec<Vec<usize>>,
}

impl Mapping {
    /// Number of ranks placed.
    pub fn ranks(&self) -> usize {
        self.upper.iter().chain(&self.lower).map(Vec::len).sum()
    }
}

/// True when `v` has an odd number of 1 bits.
fn odd_ones(v: usize) -> bool {
    v.count_ones() % 2 == 1
}

/// Checks that Algorithm 1 applies to X ranks on an M x N BiGraph; `input`
/// names the fabric in errors.
pub fn check(n: usize, m: usize, x: usize, input: &str) -> Result<()> {
    let infeasible = |reason: String, fix: String| Error::Infeasible {
        input: input.to_string(),
        topology: "rank mapping for HDRM".to_string(),
        reason,
        fix,
    };
    if n < 2 || !n.is_power_of_two() {
        return Err(infeasible(
            format!("N = {n} switches is not a power of two of 2 or more"),
            format!(
                "design the BiGraph with N = {} or {} switches",
                prev_power_of_two(n).max(2),
                n.next_power_of_two().max(2)
            ),
        ));
    }
    if m == 0 || m > n / 2 {
        return Err(infeasible(
            format!(
                "M = {m} sub-nodes per switch is not between 1 and N/2 = {}",
                n / 2
            ),
            format!(
                "design the BiGraph with 1 to {} sub-nodes per switch",
                n / 2
            ),
        ));
    }
    check_ranks(x, m * n)
}

/// Checks X ranks for halving-doubling on `p` sub-nodes: a power of two of
/// 1 or more that fits.
pub(super) fn check_ranks(x: usize, p: usize) -> Result<()> {
    if x == 0 {
        return Err(Error::parameter("ranks", "0 ranks: use 1 or more"));
    }
    if x > p {
        return Err(Error::parameter(
            "ranks",
            format!(
                "{x} ranks do not fit on {p} sub-nodes; use at most {}",
                prev_power_of_two(p)
            ),
        ));
    }
    if !x.is_power_of_two() {
        let below = prev_power_of_two(x);
        let above = x.next_power_of_two();
        let choice = if above <= p {
            format!("{below} or {above}")
        } else {
            below.to_string()
        };
        return Err(Error::parameter(
            "ranks",
            format!("{x} ranks is not a power of two, which halving-doubling needs; use {choice}"),
        ));
    }
    Ok(())
}

/// The largest power of two not above `v` (0 for 0).
pub(super) fn prev_power_of_two(v: usize) -> usize {
    if v == 0 { 0 } else { 1 << v.ilog2() }
}

/// Runs Algorithm 1 for X ranks on an M x N BiGraph (N switches, M
/// sub-nodes on each).
///
/// X = 1 is not covered by the published algorithm (it has no pair); the
/// single rank goes to the first upper switch.
pub fn algorithm1(n: usize, m: usize, x: usize) -> Result<Mapping> {
    check(n, m, x, &format!("a {m}x{n} BiGraph"))?;
    let half = n / 2;
    let mut upper = vec![Vec::new(); half];
    let mut lower = vec![Vec::new(); half];

    // The 2-node pairs, swapped when their number has an odd number of 1 bits.
    let pairs: Vec<[usize; 2]> = (0..half.min(x / 2))
        .map(|i| {
            let r = [2 * i, 2 * i + 1];
            if odd_ones(i) { [r[1], r[0]] } else { r }
        })
        .collect();

    if x <= n {
        if x == 1 {
            upper[0].push(0);
        }
        // Appending the pairs: index k of each vector is pair k.
        for (k, pair) in pairs.iter().enumerate() {
            upper[k].push(pair[0]);
            lower[k].push(pair[1]);
        }
        return Ok(Mapping { half, upper, lower });
    }

    let base: [Vec<usize>; 2] = [
        pairs.iter().map(|p| p[0]).collect(),
        pairs.iter().map(|p| p[1]).collect(),
    ];
    for j in 0..m.min(x / n) {
        let mut group: [Vec<usize>; 2] = [
            base[0].iter().map(|r| r + j * n).collect(),
            base[1].iter().map(|r| r + j * n).collect(),
        ];
        if odd_ones(j) {
            group.swap(0, 1);
        }
        group[0].rotate_left(j % half);
        // Merge: the same index of every group shares a physical group.
        for k in 0..half {
            upper[k].push(group[0][k]);
            lower[k].push(group[1][k]);
        }
    }
    Ok(Mapping { half, upper, lower })
}
