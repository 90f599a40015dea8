//! The allreduce algorithms: one enum, one parser, and the list of what
//! each algorithm is called, where it runs and which commands take it.
//!
//! Adding an algorithm is its module of `estimate/context/collectives/`
//! (its implementation and its `estimate::AlgorithmRow`) and one line of
//! `algorithm_list!` below, `Variant => Info, module::ROW;`: the list
//! makes the variant, its [`Info`] and the estimate's registry, so a
//! variant without its implementation (or a row without a variant) does
//! not compile. The listing order (`simulate --algorithm all`, help and
//! error texts) is the order of the list; `ranks` lists the algorithms it
//! takes in the order of [`Info::ranks`]. The tests hold every name (and
//! the estimate's, every plot colour) distinct.
//!
//! This module imports nothing else of the crate but the error type and
//! [`Topology`], so `ranks`, `estimate` and `iteration` can all read it.

use serde::{Serialize, Serializer};

use crate::error::{Error, Result};
use crate::plan::Topology;

/// Where an algorithm can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Runs {
    /// On any plan, with ranks in plan order.
    Anywhere,
    /// On a BiGraph only: its rank table is EFLOPS Algorithm 1, which
    /// places ranks on the two parts of a BiGraph.
    BiGraphMapping,
    /// On any plan whose ranks fill whole switches (the same number of
    /// ranks under every switch): a hierarchical decomposition.
    WholeSwitches,
    /// On any plan whose ranks fill whole servers (the same number of
    /// ranks on every server): NCCL-style rings and trees, per rail.
    WholeServers,
}

/// The per-step pattern of a schedule that `ranks` can route and verify
/// ([`crate::ranks::schedule`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RankSchedule {
    /// Halving-doubling, folded when the rank count is not a power of two.
    HalvingDoubling,
    /// Ring.
    Ring,
}

/// The commands that take an algorithm by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    /// `ranks`, `verify-ranks` and the provisioner's job files: the
    /// algorithms with a rank table and a [`RankSchedule`].
    Ranks,
    /// `simulate` and `iteration`: every algorithm.
    Simulate,
}

/// An algorithm's line of the list: what every layer reads of it (what
/// the estimate alone reads, its description, closed form, plot colour
/// and whether its chunks come back in order, is its
/// `estimate::AlgorithmRow`, in its module of
/// `estimate/context/collectives/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Info {
    /// The name on the command line and in JSON.
    pub name: &'static str,
    /// Where it runs.
    pub runs: Runs,
    /// Position in the list of algorithms `ranks` takes, or `None` when
    /// `ranks` does not take it.
    pub ranks: Option<u8>,
    /// The schedule `ranks` routes and verifies, or `None`.
    pub rank_schedule: Option<RankSchedule>,
}

impl Info {
    /// An algorithm `ranks` does not take.
    pub const fn new(name: &'static str, runs: Runs) -> Info {
        Info {
            name,
            runs,
            ranks: None,
            rank_schedule: None,
        }
    }

    /// An algorithm `ranks` takes: at `position` of its list, routed and
    /// verified as `schedule`.
    pub const fn ranked(
        name: &'static str,
        runs: Runs,
        position: u8,
        schedule: RankSchedule,
    ) -> Info {
        Info {
            name,
            runs,
            ranks: Some(position),
            rank_schedule: Some(schedule),
        }
    }
}

/// The list of algorithms, the one place an algorithm is registered: one
/// line each, `Variant => Info, module::ROW;`, its [`Info`] and the
/// `estimate::AlgorithmRow` in its module of
/// `estimate/context/collectives/` that holds its implementation.
///
/// `$then` is the macro that reads the list: `declare` here makes
/// [`Algorithm`] and [`Algorithm::info`] of it, and
/// `estimate/context/collectives/mod.rs` makes the registry of it. The
/// `module::ROW` paths are resolved there, where the list is read, never
/// here: this module imports nothing of the estimate, which sits above it.
macro_rules! algorithm_list {
    ($then:ident) => {
        $then! {
            /// Ring in plan order.
            Ring => Info::ranked("ring", Runs::Anywhere, 2, RankSchedule::Ring), ring::ROW;
            /// Halving-doubling in plan order.
            Hd => Info::ranked("hd", Runs::Anywhere, 1, RankSchedule::HalvingDoubling), hd::HD_ROW;
            /// Halving-doubling on the EFLOPS Algorithm 1 rank table.
            Hdrm => Info::ranked("hdrm", Runs::BiGraphMapping, 0, RankSchedule::HalvingDoubling), hd::HDRM_ROW;
            /// Binary tree, reduce then broadcast.
            Tree => Info::new("tree", Runs::Anywhere), trees::TREE_ROW;
            /// One binary tree, pipelined, reduce then broadcast: C-Cube's
            /// baseline (Fig. 5a, eq. 3-6).
            PipelinedTree => Info::new("pipelined-tree", Runs::Anywhere), trees::PIPELINED_TREE_ROW;
            /// NCCL's double binary tree, pipelined.
            DoubleTree => Info::new("double-tree", Runs::Anywhere), trees::DOUBLE_TREE_ROW;
            /// The C-Cube overlapped tree.
            OverlappedTree => Info::new("overlapped-tree", Runs::Anywhere), trees::OVERLAPPED_TREE_ROW;
            /// The C-Cube overlapped double tree (Fig. 6d): two mirrored trees,
            /// each overlapped.
            OverlappedDoubleTree => Info::new("overlapped-double-tree", Runs::Anywhere), trees::OVERLAPPED_DOUBLE_TREE_ROW;
            /// The BlueConnect topology-aware decomposition.
            BlueConnect => Info::new("blueconnect", Runs::WholeSwitches), hierarchical::BLUECONNECT_ROW;
            /// The 2D-torus (hierarchical) allreduce.
            TwoD => Info::new("2d", Runs::WholeSwitches), hierarchical::TWO_D_ROW;
            /// Gloo's two-level allreduce (BlueConnect eq. 4).
            TwoLevel => Info::new("two-level", Runs::WholeSwitches), two_level::ROW;
            /// Top-k sparsified allreduce by one flat all-gather.
            TopKAllGather => Info::new("topk-allgather", Runs::Anywhere), topk::ROW;
            /// A sharded parameter server, a server on every rank.
            ParameterServer => Info::new("ps", Runs::Anywhere), ps::ROW;
            /// HiTopKComm, sparsified with density ρ.
            HiTopK => Info::new("hitopk", Runs::WholeSwitches), hitopk::ROW;
            /// NCCL-style rings, one per rail, over NVLink inside a server.
            NcclRing => Info::new("nccl-ring", Runs::WholeServers), nccl_ring::ROW;
            /// NCCL's double binary tree between servers, a chain over NVLink
            /// inside each, one pair of trees per rail.
            NcclTree => Info::new("nccl-tree", Runs::WholeServers), nccl_tree::ROW;
        }
    };
}
pub(crate) use algorithm_list;

/// Declares [`Algorithm`] and [`Algorithm::info`] from the list.
macro_rules! declare {
    ($( $(#[$doc:meta])* $variant:ident => $info:expr, $row:path; )+) => {
        /// An allreduce algorithm.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Algorithm {
            $( $(#[$doc])* $variant, )+
        }

        impl Algorithm {
            /// Every algorithm, in the order of listings.
            pub const ALL: &'static [Algorithm] = &[$(Algorithm::$variant),+];

            /// The algorithm's line of the list.
            pub const fn info(self) -> &'static Info {
                match self {
                    $( Algorithm::$variant => {
                        const INFO: Info = $info;
                        &INFO
                    } )+
                }
            }
        }
    };
}

algorithm_list!(declare);

impl Algorithm {
    /// The three algorithms of EFLOPS Fig. 12 and 16.
    pub const EFLOPS: [Algorithm; 3] = [Algorithm::Ring, Algorithm::Hd, Algorithm::Hdrm];

    /// The name on the command line and in JSON.
    pub const fn as_str(self) -> &'static str {
        self.info().name
    }

    /// The `ranks` algorithm whose table the simulation places ranks with:
    /// its own for those `ranks` takes (`ring`, `hd` and `hdrm`), `ring`'s
    /// (plan order) otherwise.
    pub const fn rank_table(self) -> Algorithm {
        match self.info().ranks {
            Some(_) => self,
            None => Algorithm::Ring,
        }
    }

    /// True when the algorithm can run on a plan of this topology (HDRM's
    /// rank mapping needs a BiGraph).
    pub fn runs_on(self, topology: Topology) -> bool {
        self.info().runs != Runs::BiGraphMapping || topology == Topology::BiGraph
    }

    /// True when `command` takes this algorithm.
    pub fn accepted_by(self, command: Command) -> bool {
        match command {
            Command::Ranks => self.info().ranks.is_some(),
            Command::Simulate => true,
        }
    }

    /// The algorithms `command` takes, in the order it lists them.
    pub fn accepted(command: Command) -> Vec<Algorithm> {
        let mut out: Vec<Algorithm> = Algorithm::ALL
            .iter()
            .copied()
            .filter(|a| a.accepted_by(command))
            .collect();
        if command == Command::Ranks {
            out.sort_by_key(|a| a.info().ranks);
        }
        out
    }

    /// The names `command` takes, as its messages list them (`hdrm, hd or
    /// ring` for `ranks`, comma-separated for `simulate`).
    pub fn names(command: Command) -> String {
        let names: Vec<&str> = Algorithm::accepted(command)
            .into_iter()
            .map(Algorithm::as_str)
            .collect();
        match command {
            Command::Ranks => crate::text::or_list(&names),
            Command::Simulate => names.join(", "),
        }
    }

    /// The algorithm named `text` (any case, spaces around ignored) among
    /// those `command` takes.
    pub fn parse(text: &str, command: Command) -> Result<Algorithm> {
        Algorithm::ALL
            .iter()
            .copied()
            .filter(|a| a.accepted_by(command))
            .find(|a| a.as_str().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| {
                Error::parameter(
                    "algorithm",
                    format!(
                        "`{text}` is not an algorithm; use {}",
                        Algorithm::names(command)
                    ),
                )
            })
    }

    /// Parses a comma-separated list for `simulate` (`ring,hd,hdrm`, or
    /// `all`), without repeats, in the order given.
    pub fn parse_list(text: &str) -> Result<Vec<Algorithm>> {
        let mut out = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if item.eq_ignore_ascii_case("all") {
                out.extend_from_slice(Algorithm::ALL);
            } else {
                out.push(Algorithm::parse(item, Command::Simulate)?);
            }
        }
        if out.is_empty() {
            return Err(Error::parameter(
                "algorithm",
                "no algorithm given; write e.g. ring,hd,hdrm or all",
            ));
        }
        let mut seen = Vec::new();
        out.retain(|a| {
            let new = !seen.contains(a);
            seen.push(*a);
            new
        });
        Ok(out)
    }
}

impl Serialize for Algorithm {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_algorithm_has_one_line_with_its_own_name() {
        for (i, a) in Algorithm::ALL.iter().enumerate() {
            assert_eq!(*a as usize, i, "ALL lists the variants in order");
            for b in &Algorithm::ALL[i + 1..] {
                assert_ne!(a.as_str(), b.as_str());
            }
        }
    }

    #[test]
    fn ranks_takes_the_algorithms_with_a_rank_schedule() {
        assert_eq!(
            Algorithm::accepted(Command::Ranks),
            [Algorithm::Hdrm, Algorithm::Hd, Algorithm::Ring]
        );
        for &a in Algorithm::ALL {
            let info = a.info();
            assert_eq!(info.ranks.is_some(), info.rank_schedule.is_some(), "{a:?}");
            assert!(a.rank_table().accepted_by(Command::Ranks), "{a:?}");
            if a.accepted_by(Command::Ranks) {
                assert_eq!(a.rank_table(), a);
            } else {
                assert_eq!(a.rank_table(), Algorithm::Ring, "{a:?}: plan order");
            }
        }
        let positions: Vec<Option<u8>> = Algorithm::accepted(Command::Ranks)
            .iter()
            .map(|a| a.info().ranks)
            .collect();
        assert_eq!(positions, [Some(0), Some(1), Some(2)]);
    }

    #[test]
    fn parser_names_what_each_command_takes() {
        for &a in Algorithm::ALL {
            assert_eq!(Algorithm::parse(a.as_str(), Command::Simulate).unwrap(), a);
            let upper = a.as_str().to_ascii_uppercase();
            assert_eq!(Algorithm::parse(&upper, Command::Simulate).unwrap(), a);
            assert_eq!(
                Algorithm::parse(a.as_str(), Command::Ranks).is_ok(),
                a.accepted_by(Command::Ranks)
            );
        }
        let e = Algorithm::parse("tree", Command::Ranks).unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm: `tree` is not an algorithm; use hdrm, hd or ring"
        );
        let e = Algorithm::parse("nccl", Command::Simulate).unwrap_err();
        assert_eq!(
            e.to_string(),
            "algorithm: `nccl` is not an algorithm; use ring, hd, hdrm, tree, pipelined-tree, double-tree, overlapped-tree, overlapped-double-tree, blueconnect, 2d, two-level, topk-allgather, ps, hitopk, nccl-ring, nccl-tree"
        );
        assert_eq!(
            Algorithm::parse_list("ring, hd,ring").unwrap(),
            [Algorithm::Ring, Algorithm::Hd]
        );
        assert_eq!(Algorithm::parse_list("all").unwrap(), Algorithm::ALL);
        assert!(Algorithm::parse_list(" , ").is_err());
    }

    #[test]
    fn only_hdrm_needs_a_bigraph() {
        for &a in Algorithm::ALL {
            assert!(a.runs_on(Topology::BiGraph));
            assert_eq!(a.runs_on(Topology::FatTree), a != Algorithm::Hdrm);
        }
    }
}
