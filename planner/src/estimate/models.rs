//! Closed-form α-β(-γ) models of allreduce, as the papers write them.
//!
//! Units throughout: times in µs, sizes in bytes, `beta` and `gamma` in µs
//! per byte, bandwidths `w` in bytes per µs. `p` is the number of ranks and
//! `n` the message size. Every function is a plain transcription of the
//! equation it names; [`super`] decides which α, β and γ a plan gives each
//! algorithm.
//!
//! | function | source |
//! |---|---|
//! | [`ring`], [`recursive_doubling`], [`halving_doubling`], [`binary_tree`] | MG-WFBP Table II (a + bM) |
//! | [`fold`] | the non-power-of-two case of Rabenseifner's algorithm (Thakur, Rabenseifner and Gropp 2005) |
//! | [`t_rc`] | BlueConnect eq. 1 |
//! | [`ring_one_level`] | BlueConnect eq. 3 |
//! | [`two_level`] | BlueConnect eq. 4 (the hierarchical two-level scheme, Gloo's) |
//! | [`topk_allgather`] | the flat top-k all-gather (recursive doubling or ring over value-index pairs) |
//! | [`parameter_server`] | a sharded parameter server, push then pull, a server on every rank |
//! | [`blueconnect`] | BlueConnect eq. 6–7 |
//! | [`pipelined_tree`], [`tree_optimal_chunks`], [`tree_optimal`] | C-Cube eq. 3–6 |
//! | [`overlapped_tree_eq7`] | C-Cube eq. 7 |
//! | [`pipeline`] | the step-count form behind C-Cube eq. 3–7, minimised over whole chunk counts |
//! | [`hitopk`] | HiTopKComm eq. 7–10 |

/// log2 of `p`, as a real number (0 for p <= 1).
pub fn lg(p: usize) -> f64 {
    if p <= 1 { 0.0 } else { (p as f64).log2() }
}

/// Ring allreduce, MG-WFBP Table II:
/// `2(p-1)α + (2(p-1)/p β + (p-1)/p γ) n`.
pub fn ring(p: usize, n: f64, alpha: f64, beta: f64, gamma: f64) -> f64 {
    if p <= 1 {
        return 0.0;
    }
    let p = p as f64;
    2.0 * (p - 1.0) * alpha + (2.0 * (p - 1.0) / p * beta + (p - 1.0) / p * gamma) * n
}

/// Recursive doubling, MG-WFBP Table II: `α log2 p + (β + γ) n log2 p`.
pub fn recursive_doubling(p: usize, n: f64, alpha: f64, beta: f64, gamma: f64) -> f64 {
    let l = lg(p);
    alpha * l + (beta + gamma) * l * n
}

/// Recursive halving and doubling (Rabenseifner), MG-WFBP Table II:
/// `2α log2 p + (2β - (2β + γ)/p + γ) n`.
pub fn halving_doubling(p: usize, n: f64, alpha: f64, beta: f64, gamma: f64) -> f64 {
    if p <= 1 {
        return 0.0;
    }
    let pf = p as f64;
    2.0 * alpha * lg(p) + (2.0 * beta - (2.0 * beta + gamma) / pf + gamma) * n
}

/// Halving-doubling where step k (distance 2^k, k from 0) of each phase
/// has its own `(alpha, beta)`: `Σ_k 2α_k + (n / 2^(k+1)) (2β_k + γ)`.
/// With one α and β for every step this is [`halving_doubling`].
pub fn halving_doubling_steps(p: usize, n: f64, steps: &[(f64, f64)], gamma: f64) -> f64 {
    let k = p.max(1).ilog2() as usize;
    (0..k)
        .map(|s| {
            let (a, b) = steps.get(s).copied().unwrap_or((0.0, 0.0));
            2.0 * a + n / 2f64.powi(s as i32 + 1) * (2.0 * b + gamma)
        })
        .sum()
}

/// What folding adds to halving-doubling over P' ranks when the job has
/// X ranks, P' < X < 2P' (the standard analysis of Rabenseifner's
/// allreduce for a rank count that is not a power of two, Thakur,
/// Rabenseifner and Gropp, "Optimization of Collective Communication
/// Operations in MPICH", 2005): each of the X - P' extra ranks sends its
/// whole buffer to a core partner, which reduces it (`α + nβ + nγ`), and
/// after halving-doubling among the P' core ranks the partner sends the
/// result back (`α + nβ`): `2(α + nβ) + nγ` in all, with α and β those of
/// the slowest fold pair.
pub fn fold(n: f64, alpha: f64, beta: f64, gamma: f64) -> f64 {
    2.0 * (alpha + beta * n) + gamma * n
}

/// Binary tree (reduce to the root, then broadcast, not pipelined),
/// MG-WFBP Table II: `2α log2 p + (2β + γ) n log2 p`.
pub fn binary_tree(p: usize, n: f64, alpha: f64, beta: f64, gamma: f64) -> f64 {
    let l = lg(p);
    2.0 * alpha * l + (2.0 * beta + gamma) * l * n
}

/// BlueConnect eq. 1: one reduce-scatter (or all-gather) over `p` ranks,
/// recursive (`T_c`) when p is a power of two, ring (`T_r`) otherwise.
pub fn t_rc(p: usize, n: f64, alpha: f64, w: f64) -> f64 {
    if p <= 1 {
        return 0.0;
    }
    let pf = p as f64;
    let bandwidth = (pf - 1.0) / pf * n / w;
    if p.is_power_of_two() {
        lg(p) * alpha + bandwidth
    } else {
        (pf - 1.0) * alpha + bandwidth
    }
}

/// BlueConnect eq. 1, ring form `T_r`, whatever `p` is.
pub fn t_r(p: usize, n: f64, alpha: f64, w: f64) -> f64 {
    if p <= 1 {
        return 0.0;
    }
    let pf = p as f64;
    (pf - 1.0) * alpha + (pf - 1.0) / pf * n / w
}

/// BlueConnect eq. 3, one-level ring: `2(|P| - 1)(α + (N/|P|) / min W)`.
pub fn ring_one_level(p: usize, n: f64, alpha: f64, w_min: f64) -> f64 {
    if p <= 1 {
        return 0.0;
    }
    let pf = p as f64;
    2.0 * (pf - 1.0) * (alpha + n / pf / w_min)
}

/// BlueConnect eq. 4, the two-level scheme (reduce to a master learner
/// per node, allreduce among the masters, broadcast):
/// `2T_c(p0, N, α, w0) + 2T_r(p0, N, α, w0) + 2T_r/c(p1, N, α, min W)`,
/// with the latency `alpha0` inside a node and `alpha1` between the
/// masters (eq. 4 has one α; with `alpha0 = alpha1` it is eq. 4).
pub fn two_level(
    p0: usize,
    p1: usize,
    n: f64,
    (alpha0, alpha1): (f64, f64),
    w0: f64,
    w_min: f64,
) -> f64 {
    let t_c = |p: usize| {
        if p <= 1 {
            0.0
        } else {
            lg(p) * alpha0 + (p as f64 - 1.0) / p as f64 * n / w0
        }
    };
    2.0 * t_c(p0) + 2.0 * t_r(p0, n, alpha0, w0) + 2.0 * t_rc(p1, n, alpha1, w_min)
}

/// A flat top-k all-gather over `p` ranks: the selection `t2`, an
/// all-gather of `m` bytes a rank (`k` value-index pairs) whose step s
/// (from 0) moves `2^s m` bytes at `steps[s] = (α, β)` (recursive
/// doubling, `log2 p` steps; the distances from p/2 down, as
/// halving-doubling's all-gather), or a ring of `p - 1` steps of `m` bytes
/// when `steps` has one entry and p is not a power of two; then `gamma_acc`
/// to accumulate the `p·k` values.
pub fn topk_allgather(p: usize, m: f64, steps: &[(f64, f64)], t2: f64, gamma_acc: f64) -> f64 {
    if p <= 1 {
        return 0.0;
    }
    let gather: f64 = if p.is_power_of_two() {
        steps
            .iter()
            .enumerate()
            .map(|(s, &(a, b))| a + 2f64.powi(s as i32) * m * b)
            .sum()
    } else {
        let (a, b) = steps.first().copied().unwrap_or((0.0, 0.0));
        (p as f64 - 1.0) * (a + m * b)
    };
    t2 + gather + gamma_acc
}

/// A sharded parameter server with a server on every rank: every rank
/// pushes `(p - 1)/p · n` bytes (a shard to each other rank) and pulls the
/// same back, each phase at the slower of the NIC (`beta`) and the rank's
/// share of its switch's uplinks for the part that leaves the switch
/// (`cross_bytes · beta_up`), and each server reduces `p - 1` shards:
/// `2α + 2 max((p-1)/p n β, cross β_up) + (p-1)/p n γ`.
pub fn parameter_server(
    p: usize,
    n: f64,
    alpha: f64,
    beta: f64,
    (cross_bytes, beta_up): (f64, f64),
    gamma: f64,
) -> f64 {
    if p <= 1 {
        return 0.0;
    }
    let pf = p as f64;
    let per_rank = (pf - 1.0) / pf * n;
    let phase = (per_rank * beta).max(cross_bytes * beta_up);
    2.0 * alpha + 2.0 * phase + per_rank * gamma
}

/// One level of a topology-aware decomposition: `p` ranks per group, the
/// latency of a message between them and the bandwidth of the switch type
/// the level crosses (`w_i` of BlueConnect, shared by every rank under it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Level {
    /// Ranks per group at this level (`p_i`).
    pub p: usize,
    /// Latency of one message at this level, µs.
    pub alpha: f64,
    /// Bandwidth per rank at this level, bytes/µs (`w_i / Π_{k<i} p_k`).
    pub w: f64,
}

/// BlueConnect eq. 6–7: `2 Σ_i T_r/c(p_i, N / Π_{j<i} p_j, α_i, min_{j<=i} w_j)`,
/// plus the reductions `γ (p_i - 1)/p_i n_i` of each reduce-scatter (the
/// paper has no γ; with `gamma = 0` this is eq. 7). Eq. 7 prints the
/// minimum over `j < i`, which is empty at i = 0; eq. 6 shows `j <= i`,
/// which is what this takes. `ring_only` uses `T_r` at every level, the
/// 2D-torus decomposition.
pub fn blueconnect(levels: &[Level], n: f64, gamma: f64, ring_only: bool) -> f64 {
    let mut size = n;
    let mut w_min = f64::INFINITY;
    let mut total = 0.0;
    for level in levels {
        w_min = w_min.min(level.w);
        let t = if ring_only {
            t_r(level.p, size, level.alpha, w_min)
        } else {
            t_rc(level.p, size, level.alpha, w_min)
        };
        if level.p > 1 {
            let pf = level.p as f64;
            total += 2.0 * t + gamma * (pf - 1.0) / pf * size;
        }
        size /= level.p.max(1) as f64;
    }
    total
}

/// C-Cube eq. 3 and 5: a pipelined tree of depth `depth` with `chunks`
/// chunks, reduction then broadcast: `2 (log P + K)(α + βN/K)`.
pub fn pipelined_tree(depth: f64, n: f64, chunks: f64, alpha: f64, beta: f64) -> f64 {
    2.0 * (depth + chunks) * (alpha + beta * n / chunks)
}

/// C-Cube eq. 4: the optimal chunk count `sqrt(log P β N / α)`.
pub fn tree_optimal_chunks(depth: f64, n: f64, alpha: f64, beta: f64) -> f64 {
    (depth * beta * n / alpha).sqrt()
}

/// C-Cube eq. 6: the pipelined tree at the optimal chunk count,
/// `2α log P + 2βN + 4 sqrt(αβN log P)`.
pub fn tree_optimal(depth: f64, n: f64, alpha: f64, beta: f64) -> f64 {
    2.0 * depth * alpha + 2.0 * beta * n + 4.0 * (alpha * beta * n * depth).sqrt()
}

/// C-Cube eq. 7, the overlapped tree as printed:
/// `2α log P + βN + 3 sqrt(αβN log P)`.
///
/// The paper's step count, `2 log P + K` steps of `α + βN/K`, gives
/// `2α log P + βN + 2 sqrt(2 αβN log P)` at its best K (see
/// [`pipeline`]); eq. 7 rounds 2√2 ≈ 2.83 up to 3. The estimates use the
/// step-count form.
pub fn overlapped_tree_eq7(depth: f64, n: f64, alpha: f64, beta: f64) -> f64 {
    2.0 * depth * alpha + beta * n + 3.0 * (alpha * beta * n * depth).sqrt()
}

/// A pipeline of `fixed + K` steps of `a + b/K` each, at the whole chunk
/// count K that minimises it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pipeline {
    /// The time at the best K, µs.
    pub time_us: f64,
    /// The best K.
    pub chunks: usize,
    /// The continuous optimum `sqrt(fixed · b / a)`.
    pub continuous_chunks: f64,
    /// The time at the continuous optimum, `fixed·a + b + 2 sqrt(fixed·a·b)`.
    pub continuous_time_us: f64,
}

/// Minimises `(fixed + K)(a + b/K)` over whole K from 1 to `max_chunks`
/// (at least 1). C-Cube eq. 3–6 is `fixed = log P`, `a = 2α`, `b = 2βN`;
/// its overlapped tree (eq. 7) is `fixed = 2 log P`, `a = α`, `b = βN`.
pub fn pipeline(fixed: f64, a: f64, b: f64, max_chunks: usize) -> Pipeline {
    let max_chunks = max_chunks.max(1);
    let time = |k: f64| (fixed + k) * (a + b / k);
    let continuous = if a > 0.0 {
        (fixed * b / a).sqrt()
    } else {
        max_chunks as f64
    };
    let continuous_time = fixed * a + b + 2.0 * (fixed * a * b).sqrt();
    let lo = (continuous.floor().max(1.0) as usize).min(max_chunks);
    let hi = (continuous.ceil().max(1.0) as usize).min(max_chunks);
    let (chunks, time_us) =
        [lo, hi]
            .into_iter()
            .map(|k| (k, time(k as f64)))
            .fold(
                (1, time(1.0)),
                |best, c| if c.1 < best.1 { c } else { best },
            );
    Pipeline {
        time_us,
        chunks,
        continuous_chunks: continuous,
        continuous_time_us: continuous_time,
    }
}

/// Bytes of the index sent with every selected element (a 32-bit element
/// index).
pub const INDEX_BYTES: f64 = 4.0;

/// HiTopKComm as `planner` simulates it: eqs. 7-10 with `w` bytes per
/// gradient element (4 for FP32, 2 for FP16 or BF16) and every selected
/// element sent as its value and its index ([`INDEX_BYTES`]), where eqs. 9
/// and 10 count 4 bytes, the FP32 value alone. The accumulated shard of eq.
/// 10 holds up to ρ·m·d/n elements and is sent as value-index pairs while
/// that is smaller than the dense shard, dense otherwise. `d` is the
/// element count (bytes / w). The simulated schedule
/// ([`super::schedules::hitopk`]) moves the same bytes, and its two
/// all-gathers take `log2` steps by recursive doubling where the group
/// size is a power of two and a ring of `size - 1` steps otherwise, which
/// is the α counted here (eqs. 9 and 10 print `log`).
#[allow(clippy::too_many_arguments)]
pub fn hitopk_sent(
    m: usize,
    g: usize,
    d: f64,
    rho: f64,
    w: f64,
    intra: (f64, f64),
    inter: (f64, f64),
    t2: f64,
) -> f64 {
    let pair = w + INDEX_BYTES;
    let bytes = HiTopKBytes {
        dense: w,
        selected: pair,
        accumulated: (rho * m as f64 * pair).min(w),
    };
    let steps = |p: usize| {
        if p.is_power_of_two() {
            lg(p)
        } else {
            p as f64 - 1.0
        }
    };
    hitopk_terms(m, g, d, rho, bytes, (steps(m), steps(g)), intra, inter, t2)
}

/// Bytes per element of HiTopKComm's three transfers: the dense
/// reduce-scatter, each selected element of the inter-node all-gather, and
/// each element of the accumulated shard of the intra-node all-gather.
#[derive(Debug, Clone, Copy)]
struct HiTopKBytes {
    dense: f64,
    selected: f64,
    accumulated: f64,
}

/// Eqs. 7, 9 and 10 of HiTopKComm with the bytes per element of `bytes`
/// and the step counts of the inter- and intra-node all-gathers
/// (`gathers`), plus `t2`.
#[allow(clippy::too_many_arguments)]
fn hitopk_terms(
    m: usize,
    g: usize,
    d: f64,
    rho: f64,
    bytes: HiTopKBytes,
    (inter_steps, intra_steps): (f64, f64),
    intra: (f64, f64),
    inter: (f64, f64),
    t2: f64,
) -> f64 {
    let (alpha_intra, beta_intra) = intra;
    let (alpha_inter, beta_inter) = inter;
    let (mf, gf) = (m as f64, g as f64);
    let t1 = (gf - 1.0) * alpha_intra + bytes.dense * (gf - 1.0) * d / gf * beta_intra;
    let t3 = alpha_inter * inter_steps + bytes.selected * (mf - 1.0) * rho * d / gf * beta_inter;
    let t4 = alpha_intra * intra_steps + (gf - 1.0) * bytes.accumulated * d / gf * beta_intra;
    t1 + t2 + t3 + t4
}

/// HiTopKComm on `m` nodes of `g` GPUs (the paper's n), `d` FP32 elements,
/// density ρ: the sum of eq. 7 (intra-node ring reduce-scatter), `t2`
/// (top-k selection, eq. 8 gives only its order), eq. 9 (inter-node
/// all-gather) and eq. 10 (intra-node all-gather), all as printed.
#[allow(clippy::too_many_arguments)]
pub fn hitopk(
    m: usize,
    g: usize,
    d: f64,
    rho: f64,
    intra: (f64, f64),
    inter: (f64, f64),
    t2: f64,
) -> f64 {
    // 4 bytes an FP32 element everywhere; eq. 10's shard holds ρ·m of
    // its elements.
    let bytes = HiTopKBytes {
        dense: 4.0,
        selected: 4.0,
        accumulated: 4.0 * rho * m as f64,
    };
    hitopk_terms(m, g, d, rho, bytes, (lg(m), lg(g)), intra, inter, t2)
}
