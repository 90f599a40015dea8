//! The provisioner's one error type.

use planner::Problem;

/// Errors of the provisioner library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A node map that is not valid TOML.
    #[error("{file}:{line}:{column}: {message}")]
    Syntax {
        /// The file as the user named it.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },

    /// A node map or plan that cannot be bound to Kubernetes nodes; every
    /// problem is listed with its line when known.
    #[error("{}", list(file, problems))]
    Invalid {
        /// The input's name.
        file: String,
        /// Everything that is wrong.
        problems: Vec<Problem>,
    },

    /// A job file whose values are wrong; every problem is listed with
    /// its line.
    #[error("{}", planner::error::problem_list(file, "job file", problems))]
    Job {
        /// The job file as the user named it.
        file: String,
        /// Everything that is wrong.
        problems: Vec<Problem>,
    },

    /// Not enough free sub-nodes for the job: nothing is placed.
    #[error("{}", not_enough(job, *ranks, *free, *total, busy))]
    NotEnough {
        /// The job's name.
        job: String,
        /// Ranks the job needs.
        ranks: usize,
        /// Sub-nodes free for it.
        free: usize,
        /// Sub-nodes with a GPU in the whole plan.
        total: usize,
        /// Every Node that offers none, and why.
        busy: Vec<String>,
    },

    /// The rank table cannot place the job (from the planner's rank
    /// mapping).
    #[error("placing job {job}: {source}")]
    Placement {
        /// The job's name.
        job: String,
        /// What the rank mapping said.
        #[source]
        source: planner::Error,
    },

    /// A rank table (`ranks.csv` of the job's ConfigMap) that cannot be
    /// read.
    #[error("{file}:{line}: {message}")]
    RankTable {
        /// The file as the user named it.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },

    /// Objects that cannot be built for a placed job.
    #[error("job {job}: {message}")]
    Manifest {
        /// The job's name.
        job: String,
        /// What is wrong and what to do.
        message: String,
    },

    /// The plan cannot give what the job needs (host configuration).
    #[error(transparent)]
    Plan(#[from] planner::Error),

    /// A pod that does not sit where the rank table says.
    #[error("rank check failed: {message}")]
    RankCheck {
        /// Expected against actual, in words.
        message: String,
    },

    /// A CustomResourceDefinition that cannot serve as a schema.
    #[error("{file}: {message}; give the CRD file as its project publishes it")]
    Crd {
        /// The CRD file as the user named it.
        file: String,
        /// What is missing or wrong.
        message: String,
    },
}

impl Error {
    /// A TOML parse error of `text` (named `file`) with its line and
    /// column.
    pub fn toml_syntax(text: &str, file: &str, e: &toml::de::Error) -> Self {
        let offset = e.span().map_or(0, |s| s.start);
        let before = &text[..offset.min(text.len())];
        Error::Syntax {
            file: file.to_string(),
            line: before.matches('\n').count() + 1,
            column: before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1,
            message: e.message().trim().to_string(),
        }
    }

    /// False for the planner's internal failures carried inside; true for
    /// everything caused by the input (exit code 2).
    pub fn is_bad_input(&self) -> bool {
        match self {
            Error::Plan(e) | Error::Placement { source: e, .. } => e.is_bad_input(),
            _ => true,
        }
    }
}

fn not_enough(job: &str, ranks: usize, free: usize, total: usize, busy: &[String]) -> String {
    let more = ranks - free.min(ranks);
    let mut s = format!(
        "job {job} needs {ranks} sub-nodes (one GPU and its NIC per rank) and only {free} are free: {more} more {} needed; nothing was placed",
        if more == 1 { "is" } else { "are" }
    );
    if ranks > total {
        s.push_str(&format!(
            "\n  the plan has {total} sub-nodes with a GPU in all; ask for at most {total} ranks"
        ));
    }
    if !busy.is_empty() {
        s.push_str("\n  Nodes that offer none:");
        for b in busy {
            s.push_str("\n    ");
            s.push_str(b);
        }
        s.push_str(
            "\n  wait for the busy Nodes, uncordon or repair the others, or ask for fewer ranks",
        );
    }
    s
}

fn list(file: &str, problems: &[Problem]) -> String {
    planner::error::problem_list(file, "binding of the plan to Kubernetes nodes", problems)
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
