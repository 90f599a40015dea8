//! The allreduce algorithms: one enum, one parser and one table of what
//! each algorithm is, where it runs and which commands take it.
//!
//! Adding an algorithm is one entry of the `algorithms!` list below: the
//! variant and its [`Info`] row are written together, so a variant
//! without a row (or a row without a variant) does not compile. The
//! listing order (`simulate --algorithm all`, help and error texts) is
//! the order of the list; `ranks` lists the algorithms it takes in the
//! order of [`Info::ranks`]. The tests hold every name and every plot
//! colour distinct.
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

/// One row of the algorithm table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Info {
    /// The name on the command line and in JSON.
    pub name: &'static str,
    /// What is simulated, in words.
    pub description: &'static str,
    /// The closed form the estimates use.
    pub closed_form: &'static str,
    /// Where it runs.
    pub runs: Runs,
    /// Position in the list of algorithms `ranks` takes, or `None` when
    /// `ranks` does not take it.
    pub ranks: Option<u8>,
    /// The schedule `ranks` routes and verifies, or `None`.
    pub rank_schedule: Option<RankSchedule>,
    /// The `ranks` algorithm whose table the simulation places ranks with
    /// (its own for `ring`, `hd` and `hdrm`, plan order otherwise).
    pub rank_table: Algorithm,
    /// True when the reduced chunks come back in order (the trees), which
    /// C-Cube streams into the next forward pass.
    pub in_order: bool,
    /// The colour of its series in plots, RGB.
    pub colour: [u8; 3],
}

/// Declares [`Algorithm`] and its table from one list of
/// `Variant => Info { .. }` entries.
macro_rules! algorithms {
    ($( $(#[$doc:meta])* $variant:ident => $info:expr, )+) => {
        /// An allreduce algorithm.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Algorithm {
            $( $(#[$doc])* $variant, )+
        }

        impl Algorithm {
            /// Every algorithm, in the order of listings.
            pub const ALL: &'static [Algorithm] = &[$(Algorithm::$variant),+];

            /// The algorithm's row of the table.
            pub const fn info(self) -> &'static Info {
                match self {
                    $( Algorithm::$variant => &$info, )+
                }
            }
        }
    };
}

algorithms! {
    /// Ring in plan order.
    Ring => Info {
        name: "ring",
        description: "ring in plan order",
        closed_form: "MG-WFBP Table II ring",
        runs: Runs::Anywhere,
        ranks: Some(2),
        rank_schedule: Some(RankSchedule::Ring),
        rank_table: Algorithm::Ring,
        in_order: false,
        colour: [31, 119, 180],
    },
    /// Halving-doubling in plan order.
    Hd => Info {
        name: "hd",
        description: "halving-doubling in plan order, folded when the rank count is not a power of two",
        closed_form: "MG-WFBP Table II halving-doubling, per-step α and β, plus the fold",
        runs: Runs::Anywhere,
        ranks: Some(1),
        rank_schedule: Some(RankSchedule::HalvingDoubling),
        rank_table: Algorithm::Hd,
        in_order: false,
        colour: [255, 127, 14],
    },
    /// Halving-doubling on the EFLOPS Algorithm 1 rank table.
    Hdrm => Info {
        name: "hdrm",
        description: "halving-doubling on the EFLOPS Algorithm 1 rank table (`planner ranks`'s table when folded)",
        closed_form: "the same as hd, every step crossing the two parts",
        runs: Runs::BiGraphMapping,
        ranks: Some(0),
        rank_schedule: Some(RankSchedule::HalvingDoubling),
        rank_table: Algorithm::Hdrm,
        in_order: false,
        colour: [44, 160, 44],
    },
    /// Binary tree, reduce then broadcast.
    Tree => Info {
        name: "tree",
        description: "binary tree, reduce then broadcast, one chunk",
        closed_form: "MG-WFBP Table II binary tree with the NIC shared by two children (2β, 2γ)",
        runs: Runs::Anywhere,
        ranks: None,
        rank_schedule: None,
        rank_table: Algorithm::Ring,
        in_order: true,
        colour: [214, 39, 40],
    },
    /// One binary tree, pipelined, reduce then broadcast: C-Cube's
    /// baseline (Fig. 5a, eq. 3-6).
    PipelinedTree => Info {
        name: "pipelined-tree",
        description: "one binary tree, K chunks, the broadcast after the last chunk is reduced",
        closed_form: "C-Cube eq. 3–6 (with γ), K at its whole-number optimum; the NIC carries two chunks a step (2β), one per tree edge with channels=pair",
        runs: Runs::Anywhere,
        ranks: None,
        rank_schedule: None,
        rank_table: Algorithm::Ring,
        in_order: true,
        colour: [188, 189, 34],
    },
    /// NCCL's double binary tree, pipelined.
    DoubleTree => Info {
        name: "double-tree",
        description: "two mirrored binary trees, half the message each, K chunks",
        closed_form: "C-Cube eq. 3–6 (with γ), K at its whole-number optimum",
        runs: Runs::Anywhere,
        ranks: None,
        rank_schedule: None,
        rank_table: Algorithm::Ring,
        in_order: true,
        colour: [148, 103, 189],
    },
    /// The C-Cube overlapped tree.
    OverlappedTree => Info {
        name: "overlapped-tree",
        description: "one binary tree, broadcast of chunk c as soon as it is reduced",
        closed_form: "C-Cube eq. 7's step count `2 log P + K`; a step moves one chunk per tree edge (βN, eq. 7) with channels=pair, three chunks through one NIC (3βN) otherwise",
        runs: Runs::Anywhere,
        ranks: None,
        rank_schedule: None,
        rank_table: Algorithm::Ring,
        in_order: true,
        colour: [140, 86, 75],
    },
    /// The C-Cube overlapped double tree (Fig. 6d): two mirrored trees,
    /// each overlapped.
    OverlappedDoubleTree => Info {
        name: "overlapped-double-tree",
        description: "two mirrored binary trees, half the message each, broadcast of chunk c as soon as it is reduced",
        closed_form: "C-Cube eq. 7's step count `2 log P + K` on half the message per tree; βN/2 with channels=pair, 2βN through one NIC",
        runs: Runs::Anywhere,
        ranks: None,
        rank_schedule: None,
        rank_table: Algorithm::Ring,
        in_order: true,
        colour: [255, 187, 120],
    },
    /// The BlueConnect topology-aware decomposition.
    BlueConnect => Info {
        name: "blueconnect",
        description: "reduce-scatter per level (switch, pod, fabric), recursive for powers of two and ring otherwise, then all-gather back",
        closed_form: "BlueConnect eq. 6–7",
        runs: Runs::WholeSwitches,
        ranks: None,
        rank_schedule: None,
        rank_table: Algorithm::Ring,
        in_order: false,
        colour: [227, 119, 194],
    },
    /// The 2D-torus (hierarchical) allreduce.
    TwoD => Info {
        name: "2d",
        description: "2D-torus: ring reduce-scatter under each switch, ring allreduce across switches, ring all-gather",
        closed_form: "BlueConnect eq. 6 with `T_r` at both levels",
        runs: Runs::WholeSwitches,
        ranks: None,
        rank_schedule: None,
        rank_table: Algorithm::Ring,
        in_order: false,
        colour: [127, 127, 127],
    },
    /// Gloo's two-level allreduce (BlueConnect eq. 4).
    TwoLevel => Info {
        name: "two-level",
        description: "under each switch a ring reduce-scatter and a gather to the master rank, an allreduce among the masters (halving-doubling for a power of two, ring otherwise), then a scatter and a ring all-gather",
        closed_form: "BlueConnect eq. 4 (with γ), α per level",
        runs: Runs::WholeSwitches,
        ranks: None,
        rank_schedule: None,
        rank_table: Algorithm::Ring,
        in_order: false,
        colour: [174, 199, 232],
    },
    /// Top-k sparsified allreduce by one flat all-gather.
    TopKAllGather => Info {
        name: "topk-allgather",
        description: "top-k selection of ρ of the elements on every rank, one all-gather of the value-index pairs over all ranks (recursive doubling, ring when not a power of two), accumulation",
        closed_form: "the all-gather's α-β sum over ρ·d value-index pairs, plus selection and accumulation",
        runs: Runs::Anywhere,
        ranks: None,
        rank_schedule: None,
        rank_table: Algorithm::Ring,
        in_order: false,
        colour: [152, 223, 138],
    },
    /// A sharded parameter server, a server on every rank.
    ParameterServer => Info {
        name: "ps",
        description: "sharded parameter server with a server on every rank: every rank pushes shard j to rank j, server j reduces, every rank pulls shard j back",
        closed_form: "2α + 2·max((P-1)/P·Nβ, bytes leaving the switch / uplink share) + (P-1)/P·Nγ",
        runs: Runs::Anywhere,
        ranks: None,
        rank_schedule: None,
        rank_table: Algorithm::Ring,
        in_order: false,
        colour: [255, 152, 150],
    },
    /// HiTopKComm, sparsified with density ρ.
    HiTopK => Info {
        name: "hitopk",
        description: "HiTopKComm Algorithm 2 with nodes = switches",
        closed_form: "HiTopKComm eq. 7–10",
        runs: Runs::WholeSwitches,
        ranks: None,
        rank_schedule: None,
        rank_table: Algorithm::Ring,
        in_order: false,
        colour: [23, 190, 207],
    },
    /// NCCL-style rings, one per rail, over NVLink inside a server.
    NcclRing => Info {
        name: "nccl-ring",
        description: "NCCL-style rings, one per NIC of a server (C = ranks per server), each over every rank with 1/C of the message: inside a server over NVLink from the GPU of rail c through the others and back to it (PXN), between servers on rail c only",
        closed_form: "2(P-1) ring steps of N/(CP) bytes, each as slow as the slower of the NVLink hop (C rings share a GPU's NVLink) and the rail hop, plus one NVLink hand-over; α and β per level",
        runs: Runs::WholeServers,
        ranks: None,
        rank_schedule: None,
        rank_table: Algorithm::Ring,
        in_order: false,
        colour: [57, 59, 121],
    },
    /// NCCL's double binary tree between servers, a chain over NVLink
    /// inside each, one pair of trees per rail.
    NcclTree => Info {
        name: "nccl-tree",
        description: "NCCL-style double binary trees, one pair per NIC of a server (C = ranks per server), each tree with 1/(2C) of the message in NCCL's chunks: inside a server a chain over NVLink from the GPU of rail c through the others, between servers NCCL's two complementary binary trees over the servers' rail-c GPUs, reduce up and broadcast down at once",
        closed_form: "the first chunk's way up the deepest chain and tree and back down, each hop at its link's share of every tree's flows (NVLink for chain hops, the rail for tree hops), plus K - 1 periods of the most loaded link; α per hop",
        runs: Runs::WholeServers,
        ranks: None,
        rank_schedule: None,
        rank_table: Algorithm::Ring,
        in_order: true,
        colour: [140, 162, 82],
    },
}

impl Algorithm {
    /// The three algorithms of EFLOPS Fig. 12 and 16.
    pub const EFLOPS: [Algorithm; 3] = [Algorithm::Ring, Algorithm::Hd, Algorithm::Hdrm];

    /// The name on the command line and in JSON.
    pub const fn as_str(self) -> &'static str {
        self.info().name
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
        match (command, names.split_last()) {
            (Command::Ranks, Some((last, rest))) if !rest.is_empty() => {
                format!("{} or {last}", rest.join(", "))
            }
            _ => names.join(", "),
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
    fn every_algorithm_has_one_row_with_its_own_name_and_colour() {
        for (i, a) in Algorithm::ALL.iter().enumerate() {
            assert_eq!(*a as usize, i, "ALL lists the variants in order");
            for b in &Algorithm::ALL[i + 1..] {
                assert_ne!(a.as_str(), b.as_str());
                assert_ne!(a.info().colour, b.info().colour, "{a:?} and {b:?}");
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
            assert!(info.rank_table.accepted_by(Command::Ranks), "{a:?}");
            if a.accepted_by(Command::Ranks) {
                assert_eq!(info.rank_table, a);
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
