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

    /// A CustomResourceDefinition that cannot serve as a schema.
    #[error("{file}: {message}; give the CRD file as its project publishes it")]
    Crd {
        /// The CRD file as the user named it.
        file: String,
        /// What is missing or wrong.
        message: String,
    },
}

fn list(file: &str, problems: &[Problem]) -> String {
    planner::error::problem_list(file, "binding of the plan to Kubernetes nodes", problems)
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
