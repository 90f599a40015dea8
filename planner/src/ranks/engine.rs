//! The collective engines a job runs its allreduce with, and the schedule
//! each really runs over a rank table: one home for what every engine does,
//! read from its source at the version named.
//!
//! - **`probe`** (`provisioner probe`): the planner's own schedules,
//!   [`folded_halving_doubling`] (the extra rank P' + i folds onto rank i)
//!   and [`ring`] (rank r sends to r + 1).
//! - **`openmpi`**: `coll/tuned` allreduce algorithm 6 (`rabenseifner`,
//!   `ompi_coll_base_allreduce_intra_redscat_allgather` in
//!   `ompi/mca/coll/base/coll_base_allreduce.c`, identical in v4.1.4,
//!   v4.1.6, v5.0.7 and v5.0.8: Debian 12 ships 4.1.4, Debian 13 5.0.7),
//!   which `mpi-launch.sh` forces. For r = X - P' extra ranks, ranks 2i and
//!   2i + 1 (i < r) first exchange half their buffers (`sendrecv`), then
//!   the odd rank sends its reduced half to the even one; the even ranks
//!   and ranks 2r.. (virtual rank v is rank 2v for v < r, v + r otherwise)
//!   run recursive halving then recursive doubling with partner v XOR
//!   mask; last, rank 2i sends the result to 2i + 1 ([`FoldStyle::OpenMpi`],
//!   [`Layout::PairsCoreEven`]). The ring (algorithm 4,
//!   `ompi_coll_base_allreduce_intra_ring`) sends to rank + 1. Algorithm 3
//!   (`recursive_doubling`) folds the other way round (the odd rank of a
//!   pair stays), so an `openmpi` table is for algorithm 6 only.
//! - **`mpich`**: `MPIR_Allreduce_intra_reduce_scatter_allgather`
//!   (`src/mpi/coll/allreduce/allreduce_intra_reduce_scatter_allgather.c`,
//!   the same fold in v4.1.2, v4.2.0, v4.3.0 and v5.0.1): rank 2i (i < r)
//!   sends its whole buffer to 2i + 1 and drops out, the odd ranks and
//!   ranks 2r.. run halving-doubling (virtual rank v is 2v + 1 for v < r,
//!   v + r otherwise), and 2i + 1 sends the result back
//!   ([`FoldStyle::Mpich`], [`Layout::PairsCoreOdd`]): not Open MPI's fold,
//!   so it has its own layout. Its ring (`allreduce_intra_ring.c`) sends to
//!   rank + 1.
//! - **`gloo`**: `gloo::allreduce` (`gloo/allreduce.cc`, facebookincubator/gloo
//!   as of May 2025) runs its ring unless the caller asks for `BCUBE`, and
//!   PyTorch's `ProcessGroupGloo` (`AsyncAllreduceWork::allreduce`,
//!   `torch/csrc/distributed/c10d/ProcessGroupGloo.cpp`) never sets an
//!   algorithm: a ring in which rank r sends to r - 1 and receives from
//!   r + 1 ([`ring_backward`]). No halving-doubling.
//! - **`nccl`**: rings and trees, no halving-doubling (NCCL 2.30.7,
//!   `src/init.cc` and `src/graph/connect.cc`). NCCL numbers the nodes
//!   (hosts) in the order of their first rank and links node n's ring end
//!   to node n + 1's ring start in every channel; inside a node the chain
//!   and the NIC of each channel come from its own topology search. The
//!   schedule checked is the ring in that node order, the ranks of a node
//!   in rank order ([`Engine::ring_order`]); NCCL's tree is not modelled
//!   (`NCCL_ALGO=Ring` makes NCCL run the ring).
//!
//! An engine that does not run an algorithm's schedule refuses it with the
//! alternative named ([`Engine::schedule`]).
//!
//! Adding an engine is one entry of the `engines!` list below: the
//! variant and its [`EngineInfo`] row (its fold, its ring, its ring's
//! order, the environment its ranks need and what starts it) are written
//! together, and everything that differs between engines, here and in the
//! provisioner's launch, reads the row.

use std::collections::HashMap;

use serde::Serialize;

use super::schedule::{FoldStyle, Schedule, folded_halving_doubling_as, ring, ring_backward};
#[cfg(doc)]
use super::schedule::{Layout, folded_halving_doubling};
use crate::algorithm::{Algorithm, RankSchedule};
use crate::error::{Error, Result};
use crate::plan::Plan;

/// Which way an engine's ring sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RingDirection {
    /// Rank r sends to r + 1 ([`ring`]).
    ToNext,
    /// Rank r sends to r - 1 ([`ring_backward`]).
    ToPrevious,
}

/// One row of the engine table: what the engine runs, read from its
/// source at the version named, and what it needs to run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineInfo {
    /// The name on the command line and in files.
    pub name: &'static str,
    /// What the engine runs for allreduce, and the version followed.
    pub runs: &'static str,
    /// How its halving-doubling folds, or `None` when it runs none (a
    /// halving-doubling algorithm is then refused).
    pub halving_doubling: Option<FoldStyle>,
    /// Which way its ring sends.
    pub ring: RingDirection,
    /// True when its ring visits the ranks server by server (servers in
    /// the order of their first rank, a server's ranks in rank order)
    /// rather than in rank order ([`Engine::ring_order`]).
    pub ring_by_server: bool,
    /// The environment every rank needs to run the schedule its table was
    /// made for (name, value).
    pub env: &'static [(&'static str, &'static str)],
    /// True when its ranks start without `mpirun` (a launcher that starts
    /// every rank itself can run it).
    pub starts_alone: bool,
    /// True when Open MPI's `mpirun` starts it.
    pub mpirun: bool,
}

/// Declares [`Engine`] and its table from one list of
/// `Variant => EngineInfo { .. }` entries.
macro_rules! engines {
    ($( $(#[$doc:meta])* $variant:ident => $info:expr, )+) => {
        /// A collective engine (see the module documentation).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
        #[serde(rename_all = "lowercase")]
        pub enum Engine {
            $( $(#[$doc])* $variant, )+
        }

        impl Engine {
            /// Every engine, in the order help and error texts list them.
            pub const ALL: [Engine; [$(Engine::$variant),+].len()] = [$(Engine::$variant),+];

            /// The engine's row of the table.
            pub const fn info(self) -> &'static EngineInfo {
                match self {
                    $( Engine::$variant => &$info, )+
                }
            }
        }
    };
}

engines! {
    /// `provisioner probe`: the planner's own schedules.
    #[default]
    Probe => EngineInfo {
        name: "probe",
        runs: "provisioner probe: the planner's halving-doubling (extra rank P'+i folded onto rank i) or ring (rank r sends to r+1)",
        halving_doubling: Some(FoldStyle::Planner),
        ring: RingDirection::ToNext,
        ring_by_server: false,
        env: &[],
        starts_alone: true,
        mpirun: false,
    },
    /// Open MPI 4.1 and 5.0, `coll/tuned` allreduce algorithm 6 (or 4 for
    /// a ring).
    OpenMpi => EngineInfo {
        name: "openmpi",
        runs: "Open MPI 4.1/5.0 coll/tuned allreduce algorithm 6 (Rabenseifner; ranks 2i and 2i+1 fold, the even one stays) or 4 (ring, rank r sends to r+1)",
        halving_doubling: Some(FoldStyle::OpenMpi),
        ring: RingDirection::ToNext,
        ring_by_server: false,
        env: &[],
        starts_alone: false,
        mpirun: true,
    },
    /// MPICH 4.1 to 5.0, reduce-scatter-allgather (or its ring).
    Mpich => EngineInfo {
        name: "mpich",
        runs: "MPICH 4.1-5.0 reduce-scatter-allgather (rank 2i folds onto 2i+1, the odd one stays) or ring (rank r sends to r+1)",
        halving_doubling: Some(FoldStyle::Mpich),
        ring: RingDirection::ToNext,
        ring_by_server: false,
        env: &[],
        starts_alone: false,
        mpirun: false,
    },
    /// NCCL's ring.
    Nccl => EngineInfo {
        name: "nccl",
        runs: "NCCL 2.30 ring: nodes in the order of their first rank, node n's ring end to node n+1's start; no halving-doubling",
        halving_doubling: None,
        ring: RingDirection::ToNext,
        ring_by_server: true,
        // The table is checked for NCCL's ring; its tree, NVLS and
        // CollNet would ignore the order (NCCL 2.30 env.html, NCCL_ALGO).
        env: &[("NCCL_ALGO", "Ring")],
        starts_alone: true,
        // NCCL programs such as nccl-tests are often started by mpirun.
        mpirun: true,
    },
    /// Gloo's ring (PyTorch's Gloo backend).
    Gloo => EngineInfo {
        name: "gloo",
        runs: "Gloo ring allreduce (what PyTorch's Gloo backend calls): rank r sends to r-1; no halving-doubling",
        halving_doubling: None,
        ring: RingDirection::ToPrevious,
        ring_by_server: false,
        env: &[],
        starts_alone: true,
        mpirun: false,
    },
}

impl Engine {
    /// The name on the command line and in files.
    pub fn as_str(self) -> &'static str {
        self.info().name
    }

    /// True for `probe` (the default, left out of JSON documents).
    pub fn is_probe(&self) -> bool {
        *self == Engine::Probe
    }

    /// True for the engines that run no halving-doubling (NCCL, Gloo).
    pub fn rings_only(self) -> bool {
        self.info().halving_doubling.is_none()
    }

    /// What the engine runs for allreduce, and the version followed.
    pub fn runs(self) -> &'static str {
        self.info().runs
    }

    /// The schedule the engine runs for `algorithm` over `ranks` ranks, in
    /// the engine's rank numbers; an algorithm the engine does not run is
    /// refused with the one it does named.
    pub fn schedule(self, algorithm: Algorithm, ranks: usize) -> Result<Schedule> {
        let info = self.info();
        match algorithm.info().rank_schedule {
            None => algorithm.schedule(ranks),
            Some(RankSchedule::HalvingDoubling) => match info.halving_doubling {
                Some(style) => folded_halving_doubling_as(ranks, style),
                None => Err(Error::parameter(
                    "algorithm",
                    format!(
                        "{} runs no halving-doubling ({}); {} is halving-doubling: use the ring (the ring algorithm, or the ring schedule with a rank file)",
                        self.as_str(),
                        self.runs(),
                        algorithm.as_str()
                    ),
                )),
            },
            Some(RankSchedule::Ring) => match info.ring {
                RingDirection::ToNext => ring(ranks),
                RingDirection::ToPrevious => ring_backward(ranks),
            },
        }
    }

    /// A table made for the planner's numbering of `algorithm`'s schedule
    /// (extra rank P' + i partnered with rank i) renumbered so that the
    /// engine's own fold partners the same sub-nodes.
    pub fn renumber(self, algorithm: Algorithm, canonical: &[usize]) -> Result<Vec<usize>> {
        Ok(self
            .schedule(algorithm, canonical.len())?
            .layout()
            .to_engine(canonical))
    }

    /// The order in which the engine's ring visits the ranks of `table`
    /// (rank -> sub-node of `plan`): NCCL groups the ranks of one server
    /// (node) together, nodes in the order of their first rank and a node's
    /// ranks in rank order ([`EngineInfo::ring_by_server`]); every other
    /// engine follows rank order. The result lists ranks of `table`.
    pub fn ring_order(self, plan: &Plan, table: &[usize]) -> Vec<usize> {
        if !self.info().ring_by_server {
            return (0..table.len()).collect();
        }
        let mut node_of: HashMap<&str, usize> = HashMap::new();
        let mut nodes: Vec<Vec<usize>> = Vec::new();
        for (rank, &sn) in table.iter().enumerate() {
            let server = plan.sub_node_list.get(sn).map_or("", |s| s.server.as_str());
            let n = *node_of.entry(server).or_insert_with(|| {
                nodes.push(Vec::new());
                nodes.len() - 1
            });
            nodes[n].push(rank);
        }
        nodes.into_iter().flatten().collect()
    }

    /// The names of the engines `pick` keeps, as a message lists them
    /// (`a, b or c`).
    pub fn names(pick: impl Fn(&EngineInfo) -> bool) -> String {
        let names: Vec<&str> = Engine::ALL
            .iter()
            .map(|e| e.info())
            .filter(|i| pick(i))
            .map(|i| i.name)
            .collect();
        crate::text::or_list(&names)
    }
}

impl std::str::FromStr for Engine {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let names: Vec<&str> = Engine::ALL.iter().map(|e| e.as_str()).collect();
        Engine::ALL
            .into_iter()
            .find(|e| e.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                Error::parameter(
                    "engine",
                    format!("`{s}` is not an engine; use {}", names.join(", ")),
                )
            })
    }
}

impl std::fmt::Display for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::tests::bigraph_plan;
    use crate::ranks::schedule::folded_halving_doubling;
    use crate::ranks::{RankTable, Request, plan_ranks};

    #[test]
    fn probe_is_the_planners_schedule() {
        for x in [1, 2, 3, 12, 16, 24] {
            assert_eq!(
                Engine::Probe.schedule(Algorithm::Hd, x).unwrap(),
                folded_halving_doubling(x).unwrap()
            );
            assert_eq!(
                folded_halving_doubling_as(x, FoldStyle::Planner).unwrap(),
                folded_halving_doubling(x).unwrap()
            );
        }
    }

    /// Open MPI's rank numbers for 12 ranks (r = 4): virtual rank v is
    /// rank 2v for v < 4 and v + 4 above, as
    /// `ompi_coll_base_allreduce_intra_redscat_allgather` computes `dest`;
    /// MPICH's is 2v + 1 for v < 4.
    #[test]
    fn fold_layouts_follow_the_sources() {
        let ompi = Engine::OpenMpi.schedule(Algorithm::Hd, 12).unwrap();
        let phases: Vec<&str> = ompi.steps.iter().map(|s| s.phase.as_str()).collect();
        assert_eq!(
            phases,
            [
                "fold",
                "fold",
                "reduce-scatter",
                "reduce-scatter",
                "reduce-scatter",
                "all-gather",
                "all-gather",
                "all-gather",
                "unfold"
            ]
        );
        let flows = |i: usize| {
            let mut f: Vec<(usize, usize)> = ompi.steps[i].flows().collect();
            f.sort_unstable();
            f
        };
        // Exchange: 2i <-> 2i+1; then the odd rank sends to the even one.
        assert_eq!(
            flows(0),
            [
                (0, 1),
                (1, 0),
                (2, 3),
                (3, 2),
                (4, 5),
                (5, 4),
                (6, 7),
                (7, 6)
            ]
        );
        assert_eq!(flows(1), [(1, 0), (3, 2), (5, 4), (7, 6)]);
        // Distance 1 between virtual ranks: 0<->1 is rank 0 <-> rank 2,
        // 4<->5 is rank 8 <-> rank 9.
        assert!(flows(2).contains(&(0, 2)) && flows(2).contains(&(8, 9)));
        // Distance 4: virtual 0 <-> 4 is rank 0 <-> rank 8.
        assert!(flows(4).contains(&(0, 8)));
        assert_eq!(flows(8), [(0, 1), (2, 3), (4, 5), (6, 7)]);
        let mpich = Engine::Mpich.schedule(Algorithm::Hd, 12).unwrap();
        let mut fold: Vec<(usize, usize)> = mpich.steps[0].flows().collect();
        fold.sort_unstable();
        assert_eq!(fold, [(0, 1), (2, 3), (4, 5), (6, 7)]);
        assert!(mpich.steps[1].flows().any(|f| f == (1, 3)));
        // Every rank's own flows are the step's flows that touch it.
        for s in ompi.steps.iter().chain(&mpich.steps) {
            for r in 0..12 {
                let mut buf = [(0, 0); 2];
                let n = s.flows_of(r, &mut buf);
                let mut mine: Vec<_> = buf[..n].to_vec();
                mine.sort_unstable();
                let mut all: Vec<_> = s.flows().filter(|&(a, b)| a == r || b == r).collect();
                all.sort_unstable();
                assert_eq!(mine, all, "{:?} rank {r}", s.phase);
            }
        }
    }

    /// Every row has its own name, which parses back; the engines that
    /// run no halving-doubling refuse it and run their ring; the launch
    /// lists the provisioner's job file names read from the rows.
    #[test]
    fn every_engine_has_one_row_that_its_behaviour_follows() {
        for (i, e) in Engine::ALL.iter().enumerate() {
            assert_eq!(*e as usize, i, "ALL lists the variants in order");
            assert_eq!(e.as_str().parse::<Engine>().unwrap(), *e);
            for f in &Engine::ALL[i + 1..] {
                assert_ne!(e.as_str(), f.as_str());
            }
            assert_eq!(
                e.schedule(Algorithm::Hd, 12).is_err(),
                e.rings_only(),
                "{e}"
            );
            let ring = e.schedule(Algorithm::Ring, 4).unwrap();
            let first: Vec<(usize, usize)> = ring.steps[0].flows().collect();
            let to = match e.info().ring {
                RingDirection::ToNext => 1,
                RingDirection::ToPrevious => 3,
            };
            assert!(first.contains(&(0, to)), "{e}: {first:?}");
        }
        assert_eq!(Engine::names(|i| i.starts_alone), "probe, nccl or gloo");
        assert_eq!(Engine::names(|i| i.mpirun), "openmpi or nccl");
        assert_eq!(
            Engine::names(|i| i.halving_doubling.is_none()),
            "nccl or gloo"
        );
    }

    #[test]
    fn powers_of_two_need_no_renumbering() {
        for e in Engine::ALL {
            let t: Vec<usize> = (0..16).rev().collect();
            let alg = if matches!(e, Engine::Nccl | Engine::Gloo) {
                Algorithm::Ring
            } else {
                Algorithm::Hd
            };
            assert_eq!(e.renumber(alg, &t).unwrap(), t, "{e}");
        }
        let t: Vec<usize> = (100..112).collect();
        let o = Engine::OpenMpi.renumber(Algorithm::Hd, &t).unwrap();
        // Core rank i < 4 at rank 2i, its partner (canonical 8 + i) at
        // 2i + 1, core ranks 4..8 at 8..12.
        assert_eq!(
            o,
            [100, 108, 101, 109, 102, 110, 103, 111, 104, 105, 106, 107]
        );
        let m = Engine::Mpich.renumber(Algorithm::Hd, &t).unwrap();
        assert_eq!(
            m,
            [108, 100, 109, 101, 110, 102, 111, 103, 104, 105, 106, 107]
        );
    }

    #[test]
    fn ring_engines_refuse_halving_doubling() {
        for e in [Engine::Nccl, Engine::Gloo] {
            for a in [Algorithm::Hd, Algorithm::Hdrm] {
                let m = e.schedule(a, 16).unwrap_err().to_string();
                assert!(m.contains("use the ring (the ring algorithm"), "{m}");
                assert!(m.contains(e.as_str()), "{m}");
            }
        }
        let g = Engine::Gloo.schedule(Algorithm::Ring, 4).unwrap();
        let f: Vec<_> = g.steps[0].flows().collect();
        assert_eq!(f, [(0, 3), (1, 0), (2, 1), (3, 2)]);
        assert_eq!("OpenMPI".parse::<Engine>().unwrap(), Engine::OpenMpi);
        let e = "mvapich".parse::<Engine>().unwrap_err().to_string();
        assert!(e.contains("probe, openmpi, mpich, nccl, gloo"), "{e}");
    }

    /// The worst inter-switch load of what `engine` runs over `table`.
    fn worst(plan: &crate::checked::CheckedPlan, table: &RankTable, engine: Engine) -> usize {
        crate::ranks::verify_engine(plan, table, engine, &[], 0, crate::ranks::Policy::Ecmp)
            .unwrap()
            .iter()
            .map(|s| s.max_load)
            .max()
            .unwrap_or(0)
    }

    fn request(algorithm: Algorithm, x: usize, engine: Engine) -> Request {
        Request {
            algorithm,
            ranks: Some(x),
            engine,
            ..Request::default()
        }
    }

    /// A table is a permutation: X distinct sub-nodes of the plan.
    fn assert_permutation(plan: &crate::checked::CheckedPlan, t: &RankTable, x: usize) {
        assert_eq!(t.ranks.len(), x);
        let mut seen = t.ranks.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), x, "a sub-node twice: {:?}", t.ranks);
        assert!(t.ranks.iter().all(|&i| i < plan.sub_node_list.len()));
    }

    /// Issue 32: on BiGraphs, HDRM tables made for Open MPI and MPICH keep
    /// every step of the engine's own schedule (fold steps included) at
    /// one flow per directed inter-switch link, at rank counts that are
    /// not powers of two too; the planner's own table (its fold) and the
    /// plan order, run by Open MPI, share links.
    #[test]
    fn engine_tables_keep_one_flow_per_link_issue_32() {
        for (m, n, xs) in [
            (2, 8, &[12, 16][..]),
            (4, 8, &[12, 24, 32][..]),
            (4, 16, &[24, 48][..]),
        ] {
            let plan = bigraph_plan(m, n);
            for &x in xs {
                for engine in [Engine::OpenMpi, Engine::Mpich, Engine::Probe] {
                    let o = plan_ranks(&plan, &request(Algorithm::Hdrm, x, engine)).unwrap();
                    assert_permutation(&plan, &o.table, x);
                    assert_eq!(o.engine, engine);
                    assert_eq!(
                        worst(&plan, &o.table, engine),
                        1,
                        "{engine} {x} ranks on {m}x{n}"
                    );
                    assert_eq!(o.worst_load, 1, "{engine} {x} ranks on {m}x{n}");
                }
            }
        }
    }

    /// What the issue saw in the lab: the planner's 12-rank table and the
    /// plan order, under Open MPI's fold, put two flows on a link; the
    /// table renumbered for Open MPI does not.
    #[test]
    fn planner_fold_and_plan_order_share_links_under_open_mpi() {
        let plan = bigraph_plan(2, 8);
        let probe = plan_ranks(&plan, &request(Algorithm::Hdrm, 12, Engine::Probe)).unwrap();
        assert_eq!(worst(&plan, &probe.table, Engine::Probe), 1);
        assert!(worst(&plan, &probe.table, Engine::OpenMpi) > 1);
        let plain = plan_ranks(&plan, &request(Algorithm::Hd, 12, Engine::OpenMpi)).unwrap();
        assert_eq!(plain.method, "plan-order");
        assert!(worst(&plan, &plain.table, Engine::OpenMpi) > 1);
        // Renumbering the planner's table for Open MPI's fold partners the
        // same sub-nodes, but Open MPI's fold also exchanges both ways in
        // one step, so the engine's own table is searched for, not just
        // renumbered; a power of two needs neither.
        let t16 = plan_ranks(&plan, &request(Algorithm::Hdrm, 16, Engine::Probe)).unwrap();
        assert_eq!(worst(&plan, &t16.table, Engine::OpenMpi), 1);
        let o16 = plan_ranks(&plan, &request(Algorithm::Hdrm, 16, Engine::OpenMpi)).unwrap();
        assert_eq!(o16.table, t16.table);
    }

    /// NCCL and Gloo: a ring table, loads of the ring they run; HDRM is
    /// refused with the ring named.
    #[test]
    fn ring_engines_get_ring_tables() {
        let plan = crate::design::bundled("eflops-4x16", None);
        for engine in [Engine::Nccl, Engine::Gloo] {
            let e = plan_ranks(&plan, &request(Algorithm::Hdrm, 16, engine))
                .unwrap_err()
                .to_string();
            assert!(e.contains("the ring algorithm"), "{e}");
            let o = plan_ranks(&plan, &request(Algorithm::Ring, 24, engine)).unwrap();
            assert_permutation(&plan, &o.table, 24);
            assert_eq!(o.worst_load, worst(&plan, &o.table, engine));
        }
        // NCCL's table visits each server's ranks together, servers in the
        // order of their first rank.
        let o = plan_ranks(&plan, &request(Algorithm::Ring, 24, Engine::Nccl)).unwrap();
        let servers: Vec<&str> = o
            .table
            .ranks
            .iter()
            .map(|&i| plan.sub_node_list[i].server.as_str())
            .collect();
        let mut runs = servers.clone();
        runs.dedup();
        let mut distinct = runs.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(
            runs.len(),
            distinct.len(),
            "a server visited twice: {servers:?}"
        );
        assert_eq!(
            Engine::Nccl.ring_order(&plan, &o.table.ranks),
            (0..24).collect::<Vec<_>>()
        );
        // A table that interleaves servers is run in NCCL's order.
        let mut mixed = o.table.ranks.clone();
        mixed.swap(1, 23);
        let order = Engine::Nccl.ring_order(&plan, &mixed);
        assert_ne!(order, (0..24).collect::<Vec<_>>());
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..24).collect::<Vec<_>>());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

        /// Any rank count on a 4x8 BiGraph: every engine's table is a
        /// permutation, and the MPI engines' HDRM tables keep one flow
        /// per link under their own schedules.
        #[test]
        fn engine_tables_are_permutations(x in 2usize..=32) {
            let plan = bigraph_plan(4, 8);
            for engine in [Engine::OpenMpi, Engine::Mpich] {
                let o = plan_ranks(&plan, &request(Algorithm::Hdrm, x, engine)).unwrap();
                assert_permutation(&plan, &o.table, x);
                proptest::prop_assert!(worst(&plan, &o.table, engine) <= 1, "{} {}", engine, x);
            }
            for engine in [Engine::Nccl, Engine::Gloo] {
                let o = plan_ranks(&plan, &request(Algorithm::Ring, x, engine)).unwrap();
                assert_permutation(&plan, &o.table, x);
            }
        }
    }
}
