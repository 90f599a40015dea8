//! Send schedules: the textbook bytes, the fold, trees, levels and the
//! rank schedules' flows.

use super::*;
use crate::network::Policy;

// Schedules.

#[test]
fn schedules_move_the_textbook_bytes() {
    let p = 16;
    let n = 1 << 20;
    for sched in [
        schedules::ring(p, n, 0.0).unwrap(),
        schedules::halving_doubling(p, n, 0.0).unwrap(),
    ] {
        for r in 0..p {
            // 2(p - 1)/p · n bytes out of every rank.
            assert_eq!(sched.bytes_sent_by(r), 2 * (p as u64 - 1) * n / p as u64);
        }
    }
    let ring = schedules::ring(p, n, 0.0).unwrap();
    assert_eq!(ring.steps().len(), 2 * (p - 1));
    assert_eq!(ring.len(), 2 * (p - 1) * p);
    let hd = schedules::halving_doubling(p, n, 0.0).unwrap();
    assert_eq!(hd.steps().len(), 8);
    // Every send waits only for earlier sends.
    for s in [&ring, &hd] {
        for i in 0..s.len() {
            assert!(s.deps(i).iter().all(|&d| (d as usize) < i));
        }
    }
    assert!(schedules::halving_doubling(12, n, 0.0).is_err());
}

#[test]
fn folded_schedule_pairs_and_waits_as_the_rank_schedule_does() {
    let n: u64 = 1 << 20;
    let gamma = 0.001;
    for x in [3usize, 12, 24, 48] {
        let sched = schedules::folded_halving_doubling(x, n, gamma).unwrap();
        let ranks_sched = crate::ranks::folded_halving_doubling(x).unwrap();
        let (core, extra) = ranks_sched.fold().unwrap();
        // The same steps, phases and pairs as the rank tables are verified
        // with.
        assert_eq!(sched.steps().len(), ranks_sched.steps.len(), "x = {x}");
        for (s, (info, step)) in sched.steps().iter().zip(&ranks_sched.steps).enumerate() {
            assert_eq!(
                info.phase.as_str(),
                step.phase.as_str(),
                "x = {x}, step {s}"
            );
            let mut ours: Vec<(usize, usize)> = (0..sched.len())
                .filter(|&i| sched.step_of(i) == s)
                .map(|i| {
                    let (a, b, _) = sched.send(i);
                    (a, b)
                })
                .collect();
            let mut theirs: Vec<(usize, usize)> = step.flows().collect();
            ours.sort_unstable();
            theirs.sort_unstable();
            assert_eq!(ours, theirs, "x = {x}, step {s}");
        }
        let last = sched.steps().len() - 1;
        let sched = &sched;
        let sends_of = |step: usize| (0..sched.len()).filter(move |&i| sched.step_of(i) == step);
        for i in sends_of(0) {
            // Fold: an extra rank's whole buffer, at once.
            let (src, dst, bytes) = sched.send(i);
            assert_eq!((src - core, bytes), (dst, n), "x = {x}");
            assert!(sched.deps(i).is_empty(), "x = {x}");
            // The partner's first halving-doubling send waits for it and
            // reduces it first.
            let first = sends_of(1).find(|&j| sched.send(j).0 == dst).unwrap();
            assert!(sched.deps(first).contains(&(i as u32)), "x = {x}");
            assert_close(sched.delay_us[first], gamma * n as f64, "fold reduction");
        }
        for r in extra..core {
            // A core rank without a partner starts at once.
            let first = sends_of(1).find(|&j| sched.send(j).0 == r).unwrap();
            assert!(sched.deps(first).is_empty(), "x = {x}, rank {r}");
        }
        for i in sends_of(last) {
            // Unfold: the whole result back, after the partner's last
            // all-gather receive.
            let (src, dst, bytes) = sched.send(i);
            assert_eq!((src + core, bytes), (dst, n), "x = {x}");
            let received = (0..i)
                .filter(|&j| sched.step_of(j) == last - 1 && sched.send(j).1 == src)
                .collect::<Vec<_>>();
            assert_eq!(received.len(), 1, "x = {x}");
            assert!(sched.deps(i).contains(&(received[0] as u32)), "x = {x}");
            assert_eq!(sched.final_recv[dst], i as u32, "x = {x}");
        }
        for i in 0..sched.len() {
            assert!(sched.deps(i).iter().all(|&d| (d as usize) < i));
        }
        // An extra rank sends B; a partner sends B besides its 2(P' - 1)/P'
        // B of halving-doubling; the other core ranks only the latter.
        let hd = 2 * (core as u64 - 1) * n / core as u64;
        for r in 0..x {
            let want = if r >= core {
                n
            } else if r < extra {
                n + hd
            } else {
                hd
            };
            assert_eq!(sched.bytes_sent_by(r), want, "x = {x}, rank {r}");
        }
    }
    // A power of two is plain halving-doubling.
    assert_eq!(
        schedules::folded_halving_doubling(16, n, gamma).unwrap(),
        schedules::halving_doubling(16, n, gamma).unwrap()
    );
    assert!(schedules::folded_halving_doubling(0, n, gamma).is_err());
}

#[test]
fn folded_runs_use_the_rank_table_of_planner_ranks() {
    let plan = bigraph_plan(4, 16);
    let params = Params::default();
    for (a, order) in [
        (Algorithm::Hd, crate::ranks::Algorithm::Hd),
        (Algorithm::Hdrm, crate::ranks::Algorithm::Hdrm),
    ] {
        let ctx = Context::new(&plan, a, Some(24), &params).unwrap();
        let request = crate::ranks::Request {
            algorithm: order,
            ranks: Some(24),
            ..crate::ranks::Request::default()
        };
        let outcome = crate::ranks::plan_ranks(&plan, &request).unwrap();
        assert_eq!(ctx.table, outcome.table.ranks, "{}", a.as_str());
        // Powers of two keep the table they had.
        let ctx = Context::new(&plan, a, Some(16), &params).unwrap();
        let table = crate::ranks::rank_table(&plan, order, Some(16)).unwrap();
        assert_eq!(ctx.table, table.ranks, "{}", a.as_str());
    }
    // HDRM off a BiGraph is still refused, folded or not.
    let fat = fat_tree_plan("tiers=2,sub-nodes=64,ports=32");
    assert!(Context::new(&fat, Algorithm::Hdrm, Some(24), &params).is_err());
    assert!(Context::new(&fat, Algorithm::Hd, Some(24), &params).is_ok());
}

#[test]
fn folded_modes_agree_without_shared_links() {
    // Hops are free, so every flow pays the same latency; at a
    // latency-bound size the core ranks without a partner never send to a
    // partner while it still receives the fold, so no link is shared in
    // the event-driven mode either.
    let params = no_hop_latency();
    let size = 16 << 10;
    for (plan, a, x) in [
        (bigraph_plan(4, 16), Algorithm::Hdrm, 24),
        (bigraph_plan(4, 16), Algorithm::Hdrm, 12),
        (bigraph_plan(1, 16), Algorithm::Hd, 12),
        (bigraph_plan(4, 16), Algorithm::Hdrm, 48),
    ] {
        let what = format!("{} on {} at {x}", a.as_str(), plan.describe());
        let (s, _) = steps_and_turnaround(
            &plan,
            a,
            Some(x),
            size,
            &params,
            0,
            Policy::Ecmp,
            Method::Fast,
        )
        .unwrap();
        assert_eq!(s.first().unwrap().phase, StepPhase::Fold, "{what}");
        assert_eq!(s.last().unwrap().phase, StepPhase::Unfold, "{what}");
        assert!(s.iter().all(|s| s.max_link_flows <= 1), "{what}: shared");
        for method in [Method::Event, Method::Fast] {
            let e = estimate(&plan, a, Some(x), size, &params, &opts(method)).unwrap();
            assert_close(
                e.time_us,
                e.closed_form_us,
                &format!("{what} ({})", method.as_str()),
            );
        }
    }
}

#[test]
fn a_fold_costs_two_whole_buffer_sends_and_a_reduction() {
    let plan = bigraph_plan(4, 16);
    let params = Params::default();
    let n: u64 = 1 << 20;
    let nf = n as f64;
    let beta = 1.0 / params::bytes_per_us(100.0);
    for a in [Algorithm::Hd, Algorithm::Hdrm] {
        let fold = steps_and_turnaround(
            &plan,
            a,
            Some(24),
            n,
            &params,
            0,
            Policy::Ecmp,
            Method::Fast,
        )
        .unwrap()
        .0[0]
            .clone();
        assert_eq!(fold.phase, StepPhase::Fold);
        let cost = models::fold(nf, fold.max_latency_us, beta, params.gamma_us());
        let at = |x: usize, method: Method| {
            estimate(&plan, a, Some(x), n, &params, &opts(method)).unwrap()
        };
        let (x24, x16) = (at(24, Method::ClosedForm), at(16, Method::ClosedForm));
        if a == Algorithm::Hdrm {
            // The core ranks of the folded table pair across the parts as
            // Algorithm 1's do: the difference is the fold alone.
            assert_close(x24.time_us - x16.time_us, cost, "hdrm closed form");
            let (f24, f16) = (at(24, Method::Fast), at(16, Method::Fast));
            assert_close(f24.time_us - f16.time_us, cost, "hdrm fast");
        }
        // Simulated: about the fold's cost more (within 5%) on HDRM's
        // congestion-free tables; at least that on plan order, whose
        // steps share links at 24 ranks (`planner ranks` says up to 4).
        let (e24, e16) = (at(24, Method::Event), at(16, Method::Event));
        let extra = e24.time_us - e16.time_us;
        let upper = if a == Algorithm::Hdrm { 1.05 } else { 3.0 };
        assert!(
            extra > 0.95 * cost && extra < upper * cost,
            "{}: 24 ranks take {extra} µs more than 16, the fold costs {cost} µs",
            a.as_str()
        );
    }
}

#[test]
fn trees_are_binary_and_the_double_tree_is_complementary() {
    for p in [2usize, 3, 8, 13, 64, 100] {
        for parent in [schedules::btree(p), schedules::mirror_tree(p)] {
            let shape = schedules::shape(&parent).unwrap();
            assert!(shape.children.iter().all(|c| c.len() <= 2), "p = {p}");
            if p.is_power_of_two() {
                assert_eq!(shape.height[shape.root] as usize, p.ilog2() as usize);
            }
        }
        if p % 2 == 0 {
            // No rank is an inner node of both trees.
            let a = schedules::shape(&schedules::btree(p)).unwrap();
            let b = schedules::shape(&schedules::mirror_tree(p)).unwrap();
            for r in 0..p {
                assert!(
                    a.children[r].is_empty() || b.children[r].is_empty(),
                    "p = {p}, rank {r}"
                );
            }
        }
    }
    // A double tree of K chunks: every edge of both trees, both ways.
    let s = schedules::trees(
        8,
        vec![schedules::btree(8), schedules::mirror_tree(8)],
        1 << 20,
        4,
        false,
        0.0,
    )
    .unwrap();
    assert_eq!(s.len(), 2 * 2 * 7 * 4);
    assert_eq!(s.total_bytes(), 2 * 7 * (1 << 20));
}

#[test]
fn hierarchical_schedules_follow_the_levels() {
    // BlueConnect on a BiGraph of 4 per switch with powers of two at both
    // levels is halving-doubling in plan order.
    let plan = bigraph_plan(4, 16);
    let params = Params::default();
    let hd = send_schedule(&plan, Algorithm::Hd, None, 1 << 20, &params).unwrap();
    let blc = send_schedule(&plan, Algorithm::BlueConnect, None, 1 << 20, &params).unwrap();
    assert_eq!(hd.len(), blc.len());
    assert_eq!(hd.total_bytes(), blc.total_bytes());
    // 2D: 3 ring steps under a switch and 15 across, each way.
    let twod = send_schedule(&plan, Algorithm::TwoD, None, 1 << 20, &params).unwrap();
    assert_eq!(twod.steps().len(), 2 * (3 + 15));
    assert_eq!(twod.steps()[0].level, Some(0));
    assert_eq!(twod.steps()[3].level, Some(1));
    // HiTopKComm sends fewer bytes than a dense allreduce: the dense
    // reduce-scatter under a switch (3/4 of the buffer per rank), then
    // value-index pairs (at ρ = 0.01 over 16 switches, 0.16 of the shard's
    // elements at 8 bytes instead of 4), against about twice the buffer.
    let topk = send_schedule(&plan, Algorithm::HiTopK, None, 1 << 20, &params).unwrap();
    assert!(topk.total_bytes() < hd.total_bytes() * 3 / 5);
    // A rank count that does not fill whole switches cannot decompose.
    let e = estimate(
        &plan,
        Algorithm::TwoD,
        Some(6),
        1 << 20,
        &params,
        &opts(Method::ClosedForm),
    );
    assert!(matches!(e, Err(Error::Infeasible { .. })), "{e:?}");
}

#[test]
fn every_algorithm_simulates_on_both_topologies() {
    let params = Params::default();
    for plan in [
        bigraph_plan(4, 16),
        fat_tree_plan("tiers=2,sub-nodes=64,ports=32"),
        fat_tree_plan("k=8"),
    ] {
        for a in Algorithm::ALL
            .iter()
            .copied()
            .filter(|a| a.runs_on(plan.topology))
        {
            for method in [Method::ClosedForm, Method::Fast, Method::Event] {
                let e = estimate(&plan, a, None, 1 << 20, &params, &opts(method)).unwrap();
                assert!(e.time_us > 0.0 && e.time_us.is_finite(), "{e:?}");
                assert!(e.algbw_gbps > 0.0 && e.algbw_gbps <= 100.0 * 2.0, "{e:?}");
            }
        }
    }
    let ft = fat_tree_plan("tiers=2,sub-nodes=64,ports=32");
    assert!(matches!(
        estimate(
            &ft,
            Algorithm::Hdrm,
            None,
            1 << 20,
            &params,
            &opts(Method::Event)
        ),
        Err(Error::Infeasible { .. })
    ));
}

#[test]
fn fast_mode_bounds_the_event_driven_mode_on_these_cases() {
    let params = Params::default();
    let plan = bigraph_plan(4, 16);
    for a in [
        Algorithm::Ring,
        Algorithm::Hd,
        Algorithm::Hdrm,
        Algorithm::TwoD,
    ] {
        for size in [1 << 10, 1 << 20, 64 << 20] {
            let event = estimate(&plan, a, None, size, &params, &opts(Method::Event)).unwrap();
            let fast = estimate(&plan, a, None, size, &params, &opts(Method::Fast)).unwrap();
            assert!(
                fast.time_us >= event.time_us * (1.0 - 1e-9),
                "{} {size}: fast {} < event {}",
                a.as_str(),
                fast.time_us,
                event.time_us
            );
        }
    }
}

/// The sends of each step of a send schedule, as sorted `(src, dst)`
/// pairs, with the step's phase.
fn sends_by_step(s: &SendSchedule) -> Vec<(&'static str, Vec<(usize, usize)>)> {
    let mut out: Vec<(&'static str, Vec<(usize, usize)>)> = s
        .steps()
        .iter()
        .map(|info| (info.phase.as_str(), Vec::new()))
        .collect();
    for i in 0..s.len() {
        let (src, dst, _) = s.send(i);
        out[s.step_of(i)].1.push((src, dst));
    }
    for (_, pairs) in &mut out {
        pairs.sort_unstable();
    }
    out
}

/// The flows of each step of a rank schedule, the same way.
fn flows_by_step(s: &crate::ranks::Schedule) -> Vec<(&'static str, Vec<(usize, usize)>)> {
    s.steps
        .iter()
        .map(|step| {
            let mut pairs: Vec<(usize, usize)> = step.flows().collect();
            pairs.sort_unstable();
            (step.phase.as_str(), pairs)
        })
        .collect()
}

#[test]
fn simulated_sends_are_the_rank_schedules_flows() {
    for x in 1..=40usize {
        let ring = schedules::ring(x, 1 << 20, 0.0).unwrap();
        assert_eq!(
            sends_by_step(&ring),
            flows_by_step(&crate::ranks::ring(x).unwrap()),
            "ring over {x} ranks"
        );
        let folded = schedules::folded_halving_doubling(x, 1 << 20, 0.0).unwrap();
        let rank_schedule = crate::ranks::folded_halving_doubling(x).unwrap();
        assert_eq!(
            sends_by_step(&folded),
            flows_by_step(&rank_schedule),
            "halving-doubling over {x} ranks"
        );
        assert_eq!(folded.ranks(), rank_schedule.ranks);
        if x.is_power_of_two() {
            let hd = schedules::halving_doubling(x, 1 << 20, 0.0).unwrap();
            assert_eq!(
                sends_by_step(&hd),
                flows_by_step(&crate::ranks::halving_doubling(x).unwrap()),
                "plain halving-doubling over {x} ranks"
            );
        } else {
            assert!(rank_schedule.fold().is_some());
        }
    }
}

/// Issue #19: HiTopKComm counts the gradient's element width everywhere.
/// The simulated schedule of rank 0 sends exactly the bytes of the closed
/// form's terms ([`models::hitopk_sent`]): the dense reduce-scatter, the
/// selected elements as value and 4-byte index, and the accumulated shard
/// as value-index pairs; FP16 halves the dense part and sends twice the
/// elements of 6 bytes where FP32 sends 8.
#[test]
fn hitopk_counts_the_gradient_width_and_the_index() {
    let plan = bigraph_plan(4, 16);
    let (g, m, n) = (4u64, 16u64, 1u64 << 20);
    let mut sent = Vec::new();
    for w in [4u64, 2] {
        let params = Params {
            density: 1.0 / 64.0,
            gradient_bytes: w as u32,
            ..Params::default()
        };
        let s = send_schedule(&plan, Algorithm::HiTopK, None, n, &params).unwrap();
        // d = n / w elements; a shard is d / g of them.
        let shard_elements = n / w / g;
        let selected = shard_elements / 64;
        let pair = w + 4;
        let dense = (g - 1) * n / g;
        let gathered = (m - 1) * selected * pair;
        let accumulated = (g - 1) * (m * selected * pair).min(n / g);
        assert_eq!(
            s.bytes_sent_by(0),
            dense + gathered + accumulated,
            "w = {w}"
        );
        sent.push((gathered, accumulated));
        // The closed form's byte terms are the same (β = 1, α = 0, t2 = 0).
        let d = (n / w) as f64;
        let t = models::hitopk_sent(16, 4, d, 1.0 / 64.0, w as f64, (0.0, 1.0), (0.0, 1.0), 0.0);
        assert_close(
            t,
            (dense + gathered + accumulated) as f64,
            "closed form bytes",
        );
    }
    // FP16: twice the selected elements at 6 bytes instead of 8.
    assert_eq!(sent[1].0 * 4, sent[0].0 * 6);
}
