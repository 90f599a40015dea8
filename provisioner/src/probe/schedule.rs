//! The one adapter between the engine and the planner's schedules: what each rank sends, receives and keeps in each step of ring, halving-doubling (with the fold) and HDRM.
//!
//! Every use of the planner's schedule and algorithm API in the engine is
//! in this file. The engine derives the buffer ranges itself from the
//! step's phase, distance and partner (Rabenseifner's halving-doubling:
//! reduce-scatter halves the range at each distance, all-gather doubles it
//! back in the reverse order; fold and unfold move the whole buffer; ring:
//! P - 1 reduce-scatter and P - 1 all-gather steps of one chunk each) and
//! checks that the partner it computes is the one the planner's schedule
//! gives for that step, so what runs is what `planner verify-ranks`
//! proved.

use std::collections::BTreeSet;
use std::ops::Range;

use planner::algorithm::Command;
use planner::ranks::Schedule;
pub use planner::ranks::{Algorithm, Phase};

use super::error::{Error, Result};

/// What a rank does with the elements it receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Adds them to its own (reduce-scatter, fold).
    Sum,
    /// Takes them (all-gather, unfold).
    Replace,
}

/// One step of the allreduce as one rank runs it. Ranges are element
/// ranges of the rank's buffer; a rank that takes no part in the step
/// neither sends nor receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    /// The step's phase.
    pub phase: Phase,
    /// Position within the phase, from 1.
    pub number: usize,
    /// Rank distance of halving-doubling and of the fold; `None` for ring.
    pub distance: Option<usize>,
    /// The peer this rank sends to and the elements it sends.
    pub send: Option<(usize, Range<usize>)>,
    /// The peer this rank receives from, the elements it receives and
    /// what it does with them.
    pub recv: Option<(usize, Range<usize>, Combine)>,
}

impl Action {
    /// The step as people read it: `reduce-scatter 2`.
    pub fn name(&self) -> String {
        format!("{} {}", self.phase.as_str(), self.number)
    }

    /// The peer of the step: the one this rank receives from when it
    /// receives, else the one it sends to.
    pub fn partner(&self) -> Option<usize> {
        self.recv
            .as_ref()
            .map(|r| r.0)
            .or(self.send.as_ref().map(|s| s.0))
    }
}

/// The planner's schedule of `algorithm` over `world` ranks. HDRM and hd
/// share halving-doubling; they differ in the rank table only.
fn schedule(algorithm: Algorithm, world: usize) -> Result<Schedule> {
    algorithm.schedule(world).map_err(|source| Error::Schedule {
        algorithm: algorithm.as_str().to_string(),
        ranks: world,
        source: Box::new(source),
    })
}

/// The algorithm named `name` (`ring`, `hd` or `hdrm`).
pub fn algorithm(name: &str) -> Result<Algorithm> {
    Algorithm::parse(name, Command::Ranks).map_err(|_| {
        Error::parameter(
            "algorithm",
            format!(
                "`{name}` is not an algorithm; use {}",
                Algorithm::names(Command::Ranks)
            ),
        )
    })
}

/// Chunk `c` of `count` elements cut into `parts` near-equal chunks.
fn chunk(count: usize, parts: usize, c: usize) -> Range<usize> {
    c * count / parts..(c + 1) * count / parts
}

/// Every step of the allreduce of `count` elements as rank `rank` of
/// `world` runs it.
pub fn actions(
    algorithm: Algorithm,
    world: usize,
    rank: usize,
    count: usize,
) -> Result<Vec<Action>> {
    let schedule = schedule(algorithm, world)?;
    if rank >= world {
        return Err(Error::parameter(
            "rank",
            format!(
                "rank {rank} of {world}: ranks are numbered 0 to {}",
                world - 1
            ),
        ));
    }
    let mismatch = |what: String| {
        Error::Internal(format!(
            "rank {rank} of {world}, {}: {what}",
            algorithm.as_str()
        ))
    };
    let (core, extra) = schedule.fold().unwrap_or((world, 0));
    // The range rank `rank` owns, and the ranges it split (halving-doubling).
    let mut range = 0..count;
    let mut parents: Vec<(Range<usize>, bool)> = Vec::new();
    let mut out = Vec::with_capacity(schedule.steps.len());
    for step in &schedule.steps {
        let mut action = Action {
            phase: step.phase,
            number: step.number,
            distance: step.distance,
            send: None,
            recv: None,
        };
        let mut flows = [(0, 0); 2];
        let n = step.flows_of(rank, &mut flows);
        let flows = &flows[..n];
        match (algorithm, step.phase) {
            (Algorithm::Ring, phase) => {
                let next = (rank + 1) % world;
                let prev = (rank + world - 1) % world;
                if !flows.contains(&(rank, next)) || !flows.contains(&(prev, rank)) {
                    return Err(mismatch(format!(
                        "the ring step sends to {next} and receives from {prev}, the schedule's flows are {flows:?}"
                    )));
                }
                let s = step.number - 1;
                let (sent, got, combine) = if phase == Phase::ReduceScatter {
                    (
                        rank + world - s % world,
                        rank + 2 * world - s % world - 1,
                        Combine::Sum,
                    )
                } else {
                    (
                        rank + 1 + world - s % world,
                        rank + world - s % world,
                        Combine::Replace,
                    )
                };
                action.send = Some((next, chunk(count, world, sent % world)));
                action.recv = Some((prev, chunk(count, world, got % world), combine));
            }
            (_, Phase::Fold | Phase::Unfold) => {
                let whole = 0..count;
                if rank >= core {
                    let partner = rank - core;
                    if flows
                        .first()
                        .map(|f| if step.phase == Phase::Fold { f.1 } else { f.0 })
                        != Some(partner)
                    {
                        return Err(mismatch(format!(
                            "the extra rank's partner is {partner}, the schedule's flows are {flows:?}"
                        )));
                    }
                    if step.phase == Phase::Fold {
                        action.send = Some((partner, whole));
                    } else {
                        action.recv = Some((partner, whole, Combine::Replace));
                    }
                } else if rank < extra {
                    let partner = rank + core;
                    if step.peer(rank) != partner {
                        return Err(mismatch(format!(
                            "the core rank's partner is {partner}, the schedule says {}",
                            step.peer(rank)
                        )));
                    }
                    if step.phase == Phase::Fold {
                        action.recv = Some((partner, whole, Combine::Sum));
                    } else {
                        action.send = Some((partner, whole));
                    }
                } else if n != 0 {
                    return Err(mismatch(format!(
                        "rank takes no part in {} but the schedule gives it {flows:?}",
                        step.phase.as_str()
                    )));
                }
            }
            (_, phase) => {
                if rank >= core {
                    if n != 0 {
                        return Err(mismatch(format!(
                            "a folded rank has flows {flows:?} in {}",
                            phase.as_str()
                        )));
                    }
                    out.push(action);
                    continue;
                }
                let Some(d) = step.distance else {
                    return Err(mismatch(
                        "a halving-doubling step without a distance".to_string(),
                    ));
                };
                let partner = rank ^ d;
                if step.peer(rank) != partner || !flows.contains(&(rank, partner)) {
                    return Err(mismatch(format!(
                        "distance {d} gives partner {partner}, the schedule says {}",
                        step.peer(rank)
                    )));
                }
                if phase == Phase::ReduceScatter {
                    let mid = range.start + range.len() / 2;
                    let (keep, give) = if rank & d == 0 {
                        (range.start..mid, mid..range.end)
                    } else {
                        (mid..range.end, range.start..mid)
                    };
                    action.send = Some((partner, give));
                    action.recv = Some((partner, keep.clone(), Combine::Sum));
                    parents.push((std::mem::replace(&mut range, keep), rank & d == 0));
                } else {
                    let Some((parent, kept_lower)) = parents.pop() else {
                        return Err(mismatch(
                            "all-gather has more steps than reduce-scatter".to_string(),
                        ));
                    };
                    // Halves may be empty: the kept side says which is ours.
                    let sibling = if kept_lower {
                        range.end..parent.end
                    } else {
                        parent.start..range.start
                    };
                    action.send = Some((partner, range.clone()));
                    action.recv = Some((partner, sibling, Combine::Replace));
                    range = parent;
                }
            }
        }
        out.push(action);
    }
    if rank < core && range != (0..count) {
        return Err(mismatch(format!(
            "all-gather ends with {range:?} of 0..{count}"
        )));
    }
    Ok(out)
}

/// The ranks rank `rank` exchanges data with in some step.
pub fn peers(algorithm: Algorithm, world: usize, rank: usize) -> Result<BTreeSet<usize>> {
    Ok(actions(algorithm, world, rank, world)?
        .iter()
        .flat_map(|a| a.send.iter().map(|s| s.0).chain(a.recv.iter().map(|r| r.0)))
        .filter(|&p| p != rank)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs every rank's actions on plain vectors, step by step, as the
    /// engine does over TCP; returns every rank's final buffer.
    #[allow(clippy::needless_range_loop)] // step s reads two ranks' lists
    fn simulate(algorithm: Algorithm, world: usize, count: usize) -> Vec<Vec<f64>> {
        let mut bufs: Vec<Vec<f64>> = (0..world)
            .map(|r| (0..count).map(|i| (r * 1000 + i) as f64).collect())
            .collect();
        let all: Vec<Vec<Action>> = (0..world)
            .map(|r| actions(algorithm, world, r, count).unwrap())
            .collect();
        for s in 0..all[0].len() {
            let before = bufs.clone();
            for r in 0..world {
                if let Some((from, range, combine)) = all[r][s].recv.clone() {
                    let (to, sent) = all[from][s].send.clone().expect("the peer sends");
                    assert_eq!(to, r, "step {s}: {from} sends to {to}, not {r}");
                    assert_eq!(sent, range, "step {s}: ranges of {from} -> {r}");
                    for i in range {
                        bufs[r][i] = match combine {
                            Combine::Sum => bufs[r][i] + before[from][i],
                            Combine::Replace => before[from][i],
                        };
                    }
                }
                if let Some((to, _)) = &all[r][s].send {
                    assert!(all[*to][s].recv.as_ref().is_some_and(|x| x.0 == r));
                }
            }
        }
        bufs
    }

    #[test]
    fn every_algorithm_sums_every_element_on_every_rank() {
        for algorithm in Algorithm::accepted(Command::Ranks) {
            for world in [1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 16] {
                for count in [0, 1, 2, 7, 64, 129] {
                    let want: Vec<f64> = (0..count)
                        .map(|i| (0..world).map(|r| (r * 1000 + i) as f64).sum())
                        .collect();
                    for (r, b) in simulate(algorithm, world, count).iter().enumerate() {
                        assert_eq!(
                            b,
                            &want,
                            "{} {world} ranks, {count} elements, rank {r}",
                            algorithm.as_str()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn halving_doubling_halves_then_doubles_the_range() {
        let a = actions(Algorithm::Hd, 4, 1, 16).unwrap();
        // Distance 1: rank 1 keeps the upper half and sends the lower.
        assert_eq!(a[0].send, Some((0, 0..8)));
        assert_eq!(a[0].recv, Some((0, 8..16, Combine::Sum)));
        // Distance 2: with rank 3, it keeps 8..12.
        assert_eq!(a[1].send, Some((3, 12..16)));
        assert_eq!(a[1].recv, Some((3, 8..12, Combine::Sum)));
        assert_eq!(a[2].send, Some((3, 8..12)));
        assert_eq!(a[2].recv, Some((3, 12..16, Combine::Replace)));
        assert_eq!(a[3].recv, Some((0, 0..8, Combine::Replace)));
    }

    #[test]
    fn the_fold_moves_whole_buffers_between_extra_and_core_ranks() {
        let extra = actions(Algorithm::Hdrm, 6, 5, 10).unwrap();
        assert_eq!(extra.len(), 6);
        assert_eq!(extra[0].send, Some((1, 0..10)));
        assert!(
            extra[1..5]
                .iter()
                .all(|a| a.send.is_none() && a.recv.is_none())
        );
        assert_eq!(extra[5].recv, Some((1, 0..10, Combine::Replace)));
        let idle = actions(Algorithm::Hd, 6, 3, 10).unwrap();
        assert!(idle[0].send.is_none() && idle[0].recv.is_none());
        assert_eq!(
            peers(Algorithm::Hd, 6, 1).unwrap(),
            BTreeSet::from([0, 3, 5])
        );
    }

    #[test]
    fn a_ring_has_two_neighbours_and_two_phases() {
        let a = actions(Algorithm::Ring, 5, 2, 50).unwrap();
        assert_eq!(a.len(), 8);
        assert!(
            a.iter()
                .all(|x| x.send.as_ref().unwrap().0 == 3 && x.recv.as_ref().unwrap().0 == 1)
        );
        assert_eq!(peers(Algorithm::Ring, 1, 0).unwrap(), BTreeSet::new());
        assert!(actions(Algorithm::Ring, 4, 4, 8).is_err());
    }
}
