//! The planner's size limits: one home for every bound checked on user
//! numbers before anything is allocated or expanded.
//!
//! Each limit covers every real deployment with room to spare (the
//! 131,072-sub-node benchmark of `docs/benchmarks.md` is well inside all of
//! them) and keeps the work a small input can ask for within seconds and
//! about 2 GB. `docs/cli.md` ("Limits") lists them with the same numbers
//! and reasons; a test holds the two equal.

/// A named upper bound on a user-supplied number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// What is counted, as the refusal names it (`sub-nodes`).
    pub what: &'static str,
    /// The largest value accepted.
    pub max: u64,
    /// Why the bound is where it is, for the refusal and the docs table.
    pub why: &'static str,
}

impl Limit {
    /// `Ok` when `value` is within the limit, else the refusal text: which
    /// limit, the value given and why.
    pub fn check(&self, value: u64) -> Result<(), String> {
        if value <= self.max {
            Ok(())
        } else {
            Err(self.refusal(value))
        }
    }

    /// [`Limit::check`] for a count computed as a product or sum that may
    /// itself overflow (`None`).
    pub fn check_opt(&self, value: Option<u64>) -> Result<(), String> {
        match value {
            Some(v) => self.check(v),
            None => Err(format!(
                "{} would exceed 2^64, above the limit of {} ({})",
                self.what, self.max, self.why
            )),
        }
    }

    /// The refusal text for `value`.
    pub fn refusal(&self, value: u64) -> String {
        format!(
            "{value} {} is above the limit of {} ({})",
            self.what, self.max, self.why
        )
    }
}

/// Sub-nodes (GPU-NIC pairs) of one design.
pub const SUB_NODES: Limit = Limit {
    what: "sub-nodes",
    max: 262_144,
    why: "twice the largest benchmarked design (131,072 sub-nodes); a plan this size takes about 2 GB",
};

/// Servers of one inventory.
pub const SERVERS: Limit = Limit {
    what: "servers",
    max: 262_144,
    why: "a server holds at least one sub-node, so no design has more servers than sub-nodes",
};

/// Racks of one inventory.
pub const RACKS: Limit = Limit {
    what: "racks",
    max: 65_536,
    why: "a rack holds at least a few servers or switches; 65,536 racks are beyond any site",
};

/// Switches of one inventory or design.
pub const SWITCHES: Limit = Limit {
    what: "switches",
    max: 65_536,
    why: "a 3-tier fat-tree of 128-port switches for 524,288 sub-nodes needs 20,480",
};

/// Ports of one switch.
pub const PORTS_PER_SWITCH: Limit = Limit {
    what: "ports per switch",
    max: 4096,
    why: "the largest switches and chassis have a few hundred ports",
};

/// Switch ports of one inventory or design, all switches together.
pub const SWITCH_PORTS: Limit = Limit {
    what: "switch ports in total",
    max: 4_194_304,
    why: "every port is a row of the plan; 20,480 switches of 128 ports are 2,621,440",
};

/// N of a BiGraph: switches of both parts together.
pub const BIGRAPH_N: Limit = Limit {
    what: "BiGraph switches (N)",
    max: 2048,
    why: "a BiGraph has N^2/4 switch-to-switch links; N = 2048 is 1,048,576 links and needs 1,024 + M ports per switch",
};

/// Sub-nodes per server of the shorthands.
pub const SERVER_SUB_NODES: Limit = Limit {
    what: "sub-nodes per server",
    max: 64,
    why: "servers carry 8 to 16 GPU-NIC pairs; each one is a GPU and a NIC of every server",
};

/// Memory the event-driven simulator may take for one schedule, estimated
/// from its sends before anything is built or allocated: each send costs
/// [`SIMULATOR_BYTES_PER_SEND`] (the stored schedule, who waits for whom
/// and when each send is ready).
pub const SIMULATOR_MEMORY: Limit = Limit {
    what: "bytes of simulator memory",
    max: 4 << 30,
    why: "4 GiB, about 96 bytes a send: 44,739,242 sends, an 8,192-GPU nccl-tree at 256 MiB (33,554,432) among them; a ring over 8,192 ranks (134,201,344) is over; the closed-form method takes larger jobs",
};

/// What one send of a schedule the simulator builds takes in memory, in
/// bytes, for [`SIMULATOR_MEMORY`]: about 45 in the schedule (sender,
/// receiver, size, delay, step, chunk, two dependencies) and 25 in the
/// event loop (dependants, the count each send waits for, its ready time),
/// with room for the vectors' growth. Measured: an 8,192-GPU nccl-tree of
/// 8,388,608 sends peaked at 647 MiB, 81 bytes a send with the plan.
pub const SIMULATOR_BYTES_PER_SEND: u64 = 96;

/// Node counts of one `simulate --scale` point.
pub const SCALE_NODES: Limit = Limit {
    what: "sub-nodes in a scale point",
    max: 16_384,
    why: "every point builds a BiGraph and a fat-tree plan and simulates them: 16,384 sub-nodes take about 2 s, 65,536 over 20 s; EFLOPS Fig. 16 stops at 1,024",
};

/// Layers of one `iteration` model.
pub const MODEL_LAYERS: Limit = Limit {
    what: "layers",
    max: 100_000,
    why: "the largest published models have a few thousand layers; every layer is a row of the schedule",
};

/// Parameters of one layer of an `iteration` model.
pub const LAYER_PARAMS: Limit = Limit {
    what: "parameters in one layer",
    max: 1_000_000_000_000,
    why: "10^12, more than the largest published model has in total; gradient bytes stay exact in 64 bits",
};

/// Measured time of one layer's forward or backward pass, milliseconds.
pub const LAYER_MS: Limit = Limit {
    what: "ms for one layer's pass",
    max: 3_600_000,
    why: "an hour; measured layer times are micro- to milliseconds, and the sums over layers must stay finite",
};

/// Work of one layer's forward or backward pass per sample, GFLOPs.
pub const LAYER_GFLOPS: Limit = Limit {
    what: "GFLOPs per sample for one layer's pass",
    max: 1_000_000_000,
    why: "10^18 FLOPs, beyond any layer; the sums over layers must stay finite",
};

/// Bytes of one gradient value.
pub const GRADIENT_BYTES: Limit = Limit {
    what: "bytes per gradient value",
    max: 8,
    why: "FP64 takes 8; FP32 4 and FP16 2",
};

/// Price of one catalog part, in the catalog's currency.
pub const PART_PRICE: Limit = Limit {
    what: "price of one part",
    max: 1_000_000_000_000,
    why: "a trillion, beyond any part; the purchase program's costs must stay well within floating point",
};

/// Power draw of one catalog part, in watts.
pub const PART_WATTS: Limit = Limit {
    what: "watts of one part",
    max: 10_000_000,
    why: "10 MW, beyond any part; the purchase program's costs must stay well within floating point",
};

/// An amount of memory, rounded for a message: `3.1 GiB`, `512 MiB`
/// (one decimal below 10 of the unit, none above).
pub fn format_memory(bytes: u64) -> String {
    let (value, unit) = [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")]
        .into_iter()
        .find(|&(shift, _)| bytes >= 1 << shift)
        .map_or((bytes as f64, "B"), |(shift, unit)| {
            (bytes as f64 / (1u64 << shift) as f64, unit)
        });
    if value < 10.0 && unit != "B" {
        format!("{value:.1} {unit}")
    } else {
        format!("{value:.0} {unit}")
    }
}

/// Every limit, for the docs table test.
pub const ALL: &[Limit] = &[
    SUB_NODES,
    SERVERS,
    RACKS,
    SWITCHES,
    PORTS_PER_SWITCH,
    SWITCH_PORTS,
    BIGRAPH_N,
    SERVER_SUB_NODES,
    SIMULATOR_MEMORY,
    SCALE_NODES,
    MODEL_LAYERS,
    LAYER_PARAMS,
    LAYER_MS,
    LAYER_GFLOPS,
    GRADIENT_BYTES,
    PART_PRICE,
    PART_WATTS,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_names_limit_value_and_reason() {
        let e = BIGRAPH_N.check(8192).unwrap_err();
        assert!(e.contains("8192 BiGraph switches (N)"), "{e}");
        assert!(e.contains("limit of 2048"), "{e}");
        assert!(e.contains("N^2/4"), "{e}");
        assert!(BIGRAPH_N.check(2048).is_ok());
        assert!(SUB_NODES.check_opt(None).is_err());
    }

    #[test]
    fn the_benchmarked_design_is_inside_every_limit() {
        // 131,072 sub-nodes as BiGraph 256x512 and as a 2-tier fat-tree of
        // 512-port switches (planner/benches/scale.rs).
        assert!(SUB_NODES.check(131_072).is_ok());
        assert!(BIGRAPH_N.check(512).is_ok());
        assert!(PORTS_PER_SWITCH.check(512).is_ok());
        assert!(SWITCH_PORTS.check((512 + 256) * 512).is_ok());
    }

    #[test]
    fn docs_table_lists_every_limit() {
        let docs = include_str!("../../docs/cli.md");
        for l in ALL {
            let max = l.max.to_string();
            let row = docs
                .lines()
                .find(|line| line.starts_with(&format!("| {} |", l.what)))
                .unwrap_or_else(|| panic!("docs/cli.md has no Limits row for `{}`", l.what));
            assert!(row.contains(&max), "row `{row}` should give {max}");
        }
    }
}
