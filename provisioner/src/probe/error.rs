//! The collective engine's errors: bad input (exit code 2) apart from failures of the network and peers (exit code 1).

use std::io;

/// Errors of the collective engine.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter with a value the engine cannot use; `parameter` is the
    /// kebab-case name (`size`, `world-size`), shown by the binary as its
    /// flag.
    #[error("{parameter}: {message}")]
    Parameter {
        /// The parameter, in kebab case.
        parameter: String,
        /// What is wrong and what to give instead.
        message: String,
    },

    /// A rank table or host file that cannot be used.
    #[error("{file}: {message}")]
    Table {
        /// The file as the user named it.
        file: String,
        /// What is wrong, with the line when known.
        message: String,
    },

    /// A rank table from `planner ranks` that the planner's reader refused.
    #[error("reading the rank table {file}")]
    RankFile {
        /// The file as the user named it.
        file: String,
        /// What the planner's reader said.
        #[source]
        source: Box<planner::Error>,
    },

    /// The planner has no schedule for this algorithm and rank count.
    #[error("no {algorithm} schedule for {ranks} ranks")]
    Schedule {
        /// `ring`, `hd` or `hdrm`.
        algorithm: String,
        /// The world size.
        ranks: usize,
        /// What the planner said.
        #[source]
        source: Box<planner::Error>,
    },

    /// A peer runs with other settings (world size, algorithm, sizes,
    /// iterations, protocol version) or claims a rank it cannot have.
    #[error("rank {rank} ({addr}) {message}")]
    Mismatch {
        /// The peer's rank, as it says.
        rank: String,
        /// The peer's address.
        addr: String,
        /// What differs, both values named.
        message: String,
    },

    /// Another rank refused this one at the handshake and said why.
    #[error("rank {rank} ({addr}) refused this rank: {reason}")]
    Refused {
        /// The refusing rank.
        rank: usize,
        /// Its address.
        addr: String,
        /// Its reason.
        reason: String,
    },

    /// A peer that could not be reached within the connect timeout.
    #[error("cannot reach rank {rank} at {addr} within {seconds} s")]
    Unreachable {
        /// The peer's rank (`0` for the master).
        rank: usize,
        /// The address tried.
        addr: String,
        /// The connect timeout.
        seconds: u64,
        /// The last connect error.
        #[source]
        source: io::Error,
    },

    /// Peers that never connected within the connect timeout.
    #[error("no connection from rank{} {} within {seconds} s (listening on {listen}){}", if ranks.len() == 1 { "" } else { "s" }, list(ranks), refusals(refused))]
    Missing {
        /// The ranks that did not connect.
        ranks: Vec<usize>,
        /// Where this rank listened.
        listen: String,
        /// The connect timeout.
        seconds: u64,
        /// Connections refused meanwhile (`address: why`), which may
        /// explain the missing ranks.
        refused: Vec<String>,
    },

    /// A peer that sent a message the protocol does not allow there: the
    /// wrong kind, too large, or figures that are no measurement.
    #[error("rank {rank} ({addr}) broke the probe protocol in {step}: {message}")]
    Protocol {
        /// The peer's rank.
        rank: usize,
        /// The peer's address.
        addr: String,
        /// Where: the step, iteration and size, or the bootstrap.
        step: String,
        /// What it sent, in words (never its content).
        message: String,
    },

    /// A peer that could not prove it holds the run's job secret.
    #[error(
        "rank {rank} at {addr} could not prove it holds this run's job secret in {step}: it belongs to another run or was given another secret; give every rank the same --token-file or PROBE_TOKEN"
    )]
    Unauthenticated {
        /// The rank it should be.
        rank: usize,
        /// Its address.
        addr: String,
        /// Where.
        step: String,
    },

    /// A connection to a peer failed during the run: closed, reset or
    /// silent for longer than the timeout.
    #[error("rank {rank} ({addr}) {what} in {step}")]
    Peer {
        /// The peer's rank.
        rank: usize,
        /// The peer's address.
        addr: String,
        /// What happened (`closed the connection`, `sent nothing for 10 s`).
        what: String,
        /// Where: the step, iteration and size, or the bootstrap.
        step: String,
        /// The socket error.
        #[source]
        source: io::Error,
    },

    /// Rank 0 stopped the run because another rank failed.
    #[error("rank 0 ({addr}) stopped the run: {reason}")]
    Stopped {
        /// Rank 0's address.
        addr: String,
        /// Rank 0's error, naming the rank that failed.
        reason: String,
    },

    /// This rank could not listen on its address.
    #[error("cannot listen on {addr}")]
    Listen {
        /// The address.
        addr: String,
        /// The socket error.
        #[source]
        source: io::Error,
    },

    /// The step hook (a controller between steps) failed.
    #[error("the step hook failed after {step}")]
    Hook {
        /// Where.
        step: String,
        /// What the hook said.
        #[source]
        source: io::Error,
    },

    /// A bug in the engine.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// A parameter error: `parameter` in kebab case, `message` without
    /// flag names.
    pub fn parameter(parameter: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Parameter {
            parameter: parameter.into(),
            message: message.into(),
        }
    }

    /// True for the user's input mistakes (exit code 2): parameters, rank
    /// tables, peers started with other settings; false for failures of the
    /// network, the peers or this program (exit code 1).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Error::Parameter { .. }
                | Error::Table { .. }
                | Error::RankFile { .. }
                | Error::Schedule { .. }
                | Error::Mismatch { .. }
                | Error::Refused { .. }
                | Error::Unauthenticated { .. }
        )
    }
}

fn list(ranks: &[usize]) -> String {
    let shown: Vec<String> = ranks.iter().take(16).map(usize::to_string).collect();
    let more = ranks.len().saturating_sub(16);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

fn refusals(refused: &[String]) -> String {
    if refused.is_empty() {
        String::new()
    } else {
        format!("; refused meanwhile: {}", refused.join("; "))
    }
}

/// Shorthand for results of the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;
