//! The lab's errors: bad input and a machine that cannot run a lab (exit code 2) apart from failures of the commands the lab runs (exit code 1).

use std::io;

/// Errors of the lab.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter with a value the lab cannot use; `parameter` is the
    /// kebab-case name (`rate`, `name`), shown by the binary as its flag.
    #[error("{parameter}: {message}")]
    Parameter {
        /// The parameter, in kebab case.
        parameter: String,
        /// What is wrong and what to give instead.
        message: String,
    },

    /// The machine lacks something a lab needs (root, `ip`, `tc`).
    #[error("{what} is missing: {fix}")]
    Missing {
        /// What is missing.
        what: String,
        /// How to get it.
        fix: String,
    },

    /// The plan cannot be built as a lab.
    #[error("building the lab of {file}")]
    Plan {
        /// The plan as the user named it.
        file: String,
        /// What the planner said.
        #[source]
        source: Box<planner::Error>,
    },

    /// A lab of this name already runs (`lab up` twice).
    #[error(
        "lab {name} is already up (state file {state}); run `provisioner lab down --name {name}` first, or give another --name"
    )]
    AlreadyUp {
        /// The lab's name.
        name: String,
        /// Its state file.
        state: String,
    },

    /// A state file that names something the lab did not make: `lab
    /// down` refuses it whole before it removes anything.
    #[error(
        "the state file {file} names {object}, which lab down will not touch: {why}; correct or remove the state file"
    )]
    Foreign {
        /// The state file.
        file: String,
        /// What it names (`namespace x`, `directory /y`).
        object: String,
        /// Why it is not the lab's.
        why: String,
    },

    /// A namespace a new lab would make exists, and no state file of this
    /// state directory lists it.
    #[error(
        "namespace {namespace} exists, but no lab {name} is up in {state_dir}: it was made with another --state-dir, or its state file was removed; give that --state-dir to `lab down`, or remove the namespaces named efl-{name}-* with `ip netns del` if nothing uses them"
    )]
    Leftover {
        /// The lab's name.
        name: String,
        /// The namespace found.
        namespace: String,
        /// The state directory looked in.
        state_dir: String,
    },

    /// No lab of this name runs.
    #[error("no lab {name} is up (no state file {state}); run `provisioner lab up PLAN` first")]
    NotUp {
        /// The lab's name.
        name: String,
        /// The state file looked for.
        state: String,
    },

    /// A lab whose `lab up` did not finish (it was killed half-way).
    #[error(
        "lab {name} is half-built (its `lab up` did not finish); run `provisioner lab down --name {name}` and `lab up` again"
    )]
    NotReady {
        /// The lab's name.
        name: String,
    },

    /// A state file that cannot be read.
    #[error(
        "the lab's state file {file} cannot be read: {message}; remove the namespaces named efl-<name>-* with `ip netns del` and then the file"
    )]
    State {
        /// The state file.
        file: String,
        /// What is wrong.
        message: String,
    },

    /// A link or switch that the lab does not have.
    #[error("{what}: {message}")]
    Unknown {
        /// What was asked for, as the user wrote it.
        what: String,
        /// What the lab has instead.
        message: String,
    },

    /// A command the lab ran failed.
    #[error("`{command}` failed: {message}")]
    Command {
        /// The command line.
        command: String,
        /// Its exit status and what it printed.
        message: String,
    },

    /// A rank of a run failed.
    #[error("rank {rank} (sub-node {sub_node}, namespace {namespace}) failed: {message}")]
    Rank {
        /// The rank.
        rank: usize,
        /// Its sub-node.
        sub_node: String,
        /// Its namespace.
        namespace: String,
        /// Its exit status and the end of what it printed.
        message: String,
    },

    /// The planner refused a rank table, schedule or route.
    #[error("{what}")]
    Planner {
        /// What the lab was doing.
        what: String,
        /// What the planner said.
        #[source]
        source: Box<planner::Error>,
    },

    /// An I/O error on a file or socket of the lab.
    #[error("{what}")]
    Io {
        /// What the lab was doing, with the path.
        what: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// A bad parameter.
    pub fn parameter(parameter: &str, message: impl Into<String>) -> Self {
        Error::Parameter {
            parameter: parameter.to_string(),
            message: message.into(),
        }
    }

    /// An I/O error while doing `what`.
    pub fn io(what: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }

    /// A planner error while doing `what`.
    pub fn planner(what: impl Into<String>, source: planner::Error) -> Self {
        Error::Planner {
            what: what.into(),
            source: Box::new(source),
        }
    }

    /// True for mistakes the user can fix (exit code 2).
    pub fn is_bad_input(&self) -> bool {
        match self {
            Error::Parameter { .. }
            | Error::Missing { .. }
            | Error::AlreadyUp { .. }
            | Error::NotUp { .. }
            | Error::Leftover { .. }
            | Error::NotReady { .. }
            | Error::State { .. }
            | Error::Foreign { .. }
            | Error::Unknown { .. } => true,
            Error::Plan { source, .. } | Error::Planner { source, .. } => source.is_bad_input(),
            Error::Command { .. } | Error::Rank { .. } | Error::Io { .. } => false,
        }
    }
}

/// The lab's result type.
pub type Result<T> = std::result::Result<T, Error>;
