//! The five ways of scheduling gradient communication, on per-layer times
//! and one allreduce cost `a + b·bytes`.
//!
//! Layers are indexed from the input side (index 0 is the paper's layer 1);
//! the backward pass runs from the last index down to 0, and layer `i`'s
//! gradients are ready when its backward step ends. Every schedule here
//! has one communication channel: allreduces run one after another, in the
//! order they are issued.

use crate::error::{Error, Result};

/// Per-layer forward and backward times and gradient sizes, layer 1 (the
/// input side) first.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// Forward time of each layer, µs.
    pub forward_us: Vec<f64>,
    /// Backward time of each layer, µs.
    pub backward_us: Vec<f64>,
    /// Gradient bytes of each layer.
    pub bytes: Vec<u64>,
}

impl Timing {
    /// Number of layers.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True when there is no layer.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// `t_f`, µs.
    pub fn forward_total(&self) -> f64 {
        self.forward_us.iter().sum()
    }

    /// `t_b`, µs.
    pub fn backward_total(&self) -> f64 {
        self.backward_us.iter().sum()
    }

    /// `t_f + t_b`: an iteration on one GPU, µs.
    pub fn compute(&self) -> f64 {
        self.forward_total() + self.backward_total()
    }

    /// When each layer's gradients are ready, counting from the start of
    /// the forward pass: `τ_b(l) + t_b(l)` of MG-WFBP eq. 6.
    pub fn ready(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.len()];
        let mut t = self.forward_total();
        for i in (0..self.len()).rev() {
            t += self.backward_us[i];
            out[i] = t;
        }
        out
    }

    /// Bytes of layers `lo..=hi`.
    pub fn bytes_of(&self, lo: usize, hi: usize) -> u64 {
        self.bytes[lo..=hi].iter().sum()
    }
}

/// The allreduce cost `T_ar(M) = a + b·M` of MG-WFBP eq. 9. Nothing to
/// send costs nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Linear {
    /// Start-up cost a, µs.
    pub a_us: f64,
    /// Cost per byte b, µs.
    pub b_us_per_byte: f64,
}

impl Linear {
    /// Parses `a=..,b=..` as `iteration --comm` gives it: `a` in µs and
    /// `b` in µs per byte (MG-WFBP eq. 9 with M in bytes; its 8-node 10GbE
    /// ring is about `a=633.64,b=0.0014`).
    pub fn parse(text: &str) -> Result<Linear> {
        let bad = |why: String| Error::parameter("comm", format!("`{text}`: {why}"));
        let (mut a, mut b) = (None, None);
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').ok_or_else(|| {
                bad(format!(
                    "`{pair}` is not name=value; write e.g. a=633.64,b=0.0014"
                ))
            })?;
            let v: f64 = value
                .trim()
                .parse()
                .map_err(|_| bad(format!("`{}` is not a number", value.trim())))?;
            if !v.is_finite() || v < 0.0 {
                return Err(bad(format!(
                    "{} must be a finite number of 0 or more",
                    name.trim()
                )));
            }
            match name.trim() {
                "a" => a = Some(v),
                "b" => b = Some(v),
                other => {
                    return Err(bad(format!(
                        "`{other}` is not a term of a + b·M; give a (µs) and b (µs per byte)"
                    )));
                }
            }
        }
        match (a, b) {
            (Some(a_us), Some(b_us_per_byte)) => Ok(Linear {
                a_us,
                b_us_per_byte,
            }),
            _ => Err(bad(
                "give both terms of a + b·M: a (µs) and b (µs per byte), e.g. a=633.64,b=0.0014"
                    .to_string(),
            )),
        }
    }

    /// The time of one allreduce of `bytes`, µs.
    pub fn time(&self, bytes: u64) -> f64 {
        if bytes == 0 {
            0.0
        } else {
            self.a_us + self.b_us_per_byte * bytes as f64
        }
    }
}

/// One allreduce of a schedule: layers `lo..=hi`, on the channel from
/// `start_us` to `end_us`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// First layer (input side).
    pub lo: usize,
    /// Last layer.
    pub hi: usize,
    /// Start, µs.
    pub start_us: f64,
    /// End, µs.
    pub end_us: f64,
}

/// What a strategy does in one iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// The time of one iteration in steady state, µs.
    pub iteration_us: f64,
    /// The allreduces in the order they run (empty ones left out).
    pub buckets: Vec<Span>,
    /// Forward step of each layer, `(start, end)` µs.
    pub forward: Vec<(f64, f64)>,
    /// Backward step of each layer, `(start, end)` µs.
    pub backward: Vec<(f64, f64)>,
    /// Where time 0 is: the start of the forward pass, or (C-Cube, whose
    /// next forward pass overlaps the communication) the start of the
    /// backward pass.
    pub from_backward: bool,
}

impl Schedule {
    /// Communication time, busy or not, µs.
    pub fn comm_total(&self) -> f64 {
        self.buckets.iter().map(|b| b.end_us - b.start_us).sum()
    }
}

/// Groups of layers `(lo, hi)` in the order they are communicated.
pub type Groups = Vec<(usize, usize)>;

/// `(start, end)` of each layer's step, µs.
type Steps = Vec<(f64, f64)>;

/// Forward steps from 0 and backward steps from `t_f`, as every
/// non-chained strategy runs them.
fn compute_steps(t: &Timing) -> (Steps, Steps) {
    let mut forward = Vec::with_capacity(t.len());
    let mut now = 0.0;
    for &f in &t.forward_us {
        forward.push((now, now + f));
        now += f;
    }
    let mut backward = vec![(0.0, 0.0); t.len()];
    for i in (0..t.len()).rev() {
        backward[i] = (now, now + t.backward_us[i]);
        now += t.backward_us[i];
    }
    (forward, backward)
}

/// Runs `groups` in order on the channel, each as soon as its gradients
/// are ready and the channel is free, but not before `not_before`.
pub fn run_groups(
    t: &Timing,
    cost: &Linear,
    groups: &[(usize, usize)],
    not_before: f64,
) -> Schedule {
    let ready = t.ready();
    let mut free = not_before;
    let mut buckets = Vec::with_capacity(groups.len());
    for &(lo, hi) in groups {
        let bytes = t.bytes_of(lo, hi);
        if bytes == 0 {
            continue;
        }
        let start = free.max(ready[lo]);
        free = start + cost.time(bytes);
        buckets.push(Span {
            lo,
            hi,
            start_us: start,
            end_us: free,
        });
    }
    let (forward, backward) = compute_steps(t);
    Schedule {
        iteration_us: free.max(t.compute()),
        buckets,
        forward,
        backward,
        from_backward: false,
    }
}

/// One group per layer, from the output side.
pub fn layer_groups(t: &Timing) -> Groups {
    (0..t.len()).rev().map(|i| (i, i)).collect()
}

/// Naive S-SGD (MG-WFBP eq. 3): every layer's allreduce after the whole
/// backward pass.
pub fn naive(t: &Timing, cost: &Linear) -> Schedule {
    run_groups(t, cost, &layer_groups(t), t.compute())
}

/// WFBP (eq. 6–8): each layer's allreduce as soon as its gradients are
/// ready and the channel is free.
pub fn wfbp(t: &Timing, cost: &Linear) -> Schedule {
    run_groups(t, cost, &layer_groups(t), 0.0)
}

/// SyncEASGD: one allreduce of every gradient after the backward pass.
pub fn single_bucket(t: &Timing, cost: &Linear) -> Schedule {
    if t.is_empty() {
        return run_groups(t, cost, &[], 0.0);
    }
    run_groups(t, cost, &[(0, t.len() - 1)], t.compute())
}

/// The merged-gradient groups of MG-WFBP Algorithm 1, as printed: from
/// layer L down to 2, layer l is merged into l − 1 when
/// `τ_b(l−2) − τ_c(l) < a` (Theorem 1, eq. 27), and the communication
/// start times are recomputed after each merge. `τ_b(l−2)` is the end of
/// layer l − 1's backward step (for l = 2, the end of the backward pass).
pub fn algorithm1_groups(t: &Timing, cost: &Linear) -> Groups {
    let l = t.len();
    if l == 0 {
        return Vec::new();
    }
    let ready = t.ready();
    let mut bytes = t.bytes.clone();
    let mut tc: Vec<f64> = bytes.iter().map(|&b| cost.time(b)).collect();
    // τ_c of every layer (eq. 20), index i = layer i + 1.
    let comm_start = |tc: &[f64]| {
        let mut out = vec![0.0; l];
        out[l - 1] = ready[l - 1];
        for i in (0..l - 1).rev() {
            out[i] = (out[i + 1] + tc[i + 1]).max(ready[i]);
        }
        out
    };
    let mut tau_c = comm_start(&tc);
    let mut merged = vec![false; l];
    for i in (1..l).rev() {
        // Layer i + 1 of the paper: τ_b(l − 2) is when layer i − 1 + 1 = i
        // (index i − 1) finishes its backward step.
        if ready[i - 1] - tau_c[i] < cost.a_us {
            merged[i] = true;
            bytes[i - 1] += bytes[i];
            bytes[i] = 0;
            tc[i] = 0.0;
            tc[i - 1] = cost.time(bytes[i - 1]);
            tau_c = comm_start(&tc);
        }
    }
    let mut groups = Vec::new();
    let mut hi = l - 1;
    for i in (0..l).rev() {
        if !merged[i] {
            groups.push((i, hi));
            hi = i.saturating_sub(1);
        }
    }
    groups
}

/// The optimal merged-gradient groups, by dynamic programming over
/// contiguous groups: `best[i]`, the earliest the channel can be free
/// having sent every layer from `i` up, is
/// `min over k >= i of max(best[k + 1], ready(i)) + T_ar(bytes i..=k)`.
/// A group's end is non-decreasing in the channel's free time, so keeping
/// only the earliest free time per `i` loses no plan: the result is exact.
/// Ties go to the smaller first group (fewer bytes waiting).
pub fn optimal_groups(t: &Timing, cost: &Linear) -> Groups {
    let l = t.len();
    if l == 0 {
        return Vec::new();
    }
    let ready = t.ready();
    let mut best = vec![0.0f64; l + 1];
    let mut choice = vec![0usize; l];
    for i in (0..l).rev() {
        let mut bytes = 0u64;
        let mut top = f64::INFINITY;
        for k in i..l {
            bytes += t.bytes[k];
            let end = best[k + 1].max(ready[i]) + cost.time(bytes);
            if end < top {
                top = end;
                choice[i] = k;
            }
        }
        best[i] = top;
    }
    let mut groups = Vec::new();
    let mut i = 0;
    while i < l {
        groups.push((i, choice[i]));
        i = choice[i] + 1;
    }
    groups.reverse();
    groups
}

/// MG-WFBP with the optimal groups of [`optimal_groups`].
pub fn mg_wfbp(t: &Timing, cost: &Linear) -> Schedule {
    run_groups(t, cost, &optimal_groups(t, cost), 0.0)
}

/// The groups a framework's size cap makes: layers taken from the output
/// side, a group closed as soon as it holds `cap` bytes or more (PyTorch
/// DDP's `bucket_cap_mb`, Horovod's fusion threshold).
pub fn cap_groups(t: &Timing, cap: u64) -> Groups {
    let mut groups = Vec::new();
    let mut hi = None;
    let mut held = 0u64;
    for i in (0..t.len()).rev() {
        let top = *hi.get_or_insert(i);
        held += t.bytes[i];
        if held >= cap.max(1) {
            groups.push((i, top));
            hi = None;
            held = 0;
        }
    }
    if let Some(top) = hi {
        groups.push((0, top));
    }
    groups
}

/// C-Cube-style chaining (C-Cube III-D): the backward pass runs without
/// communication; then the gradients are reduced in forward-layer order
/// and the next forward pass starts each layer as soon as its gradients
/// are back (gradient queuing). Time 0 is the start of the backward pass
/// and the iteration ends when the next forward pass does.
///
/// With an in-order algorithm (the trees, whose root finishes chunks in
/// order) the gradients stream: layer i is back at
/// `t_b + a + b·(bytes of layers up to i)`. Otherwise every group of
/// layers is its own allreduce, issued in forward order, and the groups
/// are the exact optimum of a dynamic programme over (layers sent, groups
/// used): with all gradients ready at `t_b`, the channel is free after j
/// non-empty groups covering layers `0..k` at `t_b + j·a + b·bytes(0..k)`.
pub fn c_cube(t: &Timing, cost: &Linear, in_order: bool) -> Schedule {
    let l = t.len();
    let tb = t.backward_total();
    let mut backward = vec![(0.0, 0.0); l];
    let mut now = 0.0;
    for i in (0..l).rev() {
        backward[i] = (now, now + t.backward_us[i]);
        now += t.backward_us[i];
    }
    // Arrival time of each layer's gradients and the allreduces.
    let mut arrival = vec![tb; l];
    let mut buckets = Vec::new();
    let total: u64 = t.bytes.iter().sum();
    if l > 0 && total > 0 {
        let groups = if in_order {
            let mut sent = 0u64;
            for (a, &bytes) in arrival.iter_mut().zip(&t.bytes) {
                sent += bytes;
                *a = if sent == 0 { tb } else { tb + cost.time(sent) };
            }
            vec![(0, l - 1)]
        } else {
            forward_groups(t, cost)
        };
        let mut free = tb;
        for &(lo, hi) in &groups {
            let bytes = t.bytes_of(lo, hi);
            let end = free + cost.time(bytes);
            if bytes > 0 {
                buckets.push(Span {
                    lo,
                    hi,
                    start_us: free,
                    end_us: end,
                });
            }
            if !in_order {
                for a in &mut arrival[lo..=hi] {
                    *a = end;
                }
            }
            free = end;
        }
    }
    let mut forward = Vec::with_capacity(l);
    let mut f = tb;
    for (&a, &step) in arrival.iter().zip(&t.forward_us) {
        let start = f.max(a);
        f = start + step;
        forward.push((start, f));
    }
    Schedule {
        iteration_us: f.max(buckets.last().map_or(0.0, |b| b.end_us)),
        buckets,
        forward,
        backward,
        from_backward: true,
    }
}

/// The forward-order groups that end the chained forward pass earliest
/// (see [`c_cube`]).
fn forward_groups(t: &Timing, cost: &Linear) -> Groups {
    let l = t.len();
    let tb = t.backward_total();
    let mut cum = vec![0u64; l + 1];
    let mut fwd = vec![0.0f64; l + 1];
    for i in 0..l {
        cum[i + 1] = cum[i] + t.bytes[i];
        fwd[i + 1] = fwd[i] + t.forward_us[i];
    }
    // end[k][j]: earliest end of the forward steps of layers 0..k with j
    // non-empty groups; from[k][j] the start of the last group.
    let inf = f64::INFINITY;
    let mut end = vec![vec![inf; l + 1]; l + 1];
    let mut from = vec![vec![0usize; l + 1]; l + 1];
    end[0][0] = tb;
    for k in 1..=l {
        for s in 0..k {
            let bytes = cum[k] - cum[s];
            let add = usize::from(bytes > 0);
            for j in 0..=s.min(l) {
                let prev = end[s][j];
                if !prev.is_finite() || j + add > l {
                    continue;
                }
                let jj = j + add;
                let free = tb + jj as f64 * cost.a_us + cost.b_us_per_byte * cum[k] as f64;
                let done = prev.max(free) + (fwd[k] - fwd[s]);
                if done < end[k][jj] {
                    end[k][jj] = done;
                    from[k][jj] = s;
                }
            }
        }
    }
    let mut best_j = 0;
    for j in 0..=l {
        if end[l][j] < end[l][best_j] {
            best_j = j;
        }
    }
    let mut groups = Vec::new();
    let (mut k, mut j) = (l, best_j);
    while k > 0 {
        let s = from[k][j];
        if cum[k] > cum[s] {
            j -= 1;
        }
        groups.push((s, k - 1));
        k = s;
    }
    groups.reverse();
    groups
}
