//! The planner's one error type.
//!
//! Every variant is about the user's input (a file, an option, a design that
//! cannot exist) except [`Error::Internal`]; binaries map the first kind to
//! exit code 2 and the second to 1 (see [`Error::is_bad_input`]).

use std::fmt;

use crate::names::Escaped;

/// One problem found in an input: where it is, which object, what is wrong
/// and what to change.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// 1-based line in the input file, when known.
    pub line: Option<usize>,
    /// The object the problem is about, as a person names it
    /// (`server template node{n:02}`, `switch sw03 port 17`).
    pub object: String,
    /// What is wrong.
    pub message: String,
    /// What to change.
    pub fix: String,
}

impl Problem {
    /// A problem with a known line.
    pub fn at(
        line: Option<usize>,
        object: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        Self {
            line,
            object: object.into(),
            message: message.into(),
            fix: fix.into(),
        }
    }

    /// Formats the problem as `file:line: object: message; fix`. Input
    /// text is escaped ([`crate::names::escape`]): no control character
    /// of an input reaches a terminal raw.
    pub fn display_in(&self, file: &str) -> String {
        let file = Escaped(file);
        let place = match self.line {
            Some(l) => format!("{file}:{l}"),
            None => file.to_string(),
        };
        let (object, message) = (Escaped(&self.object), Escaped(&self.message));
        if self.fix.is_empty() {
            format!("{place}: {object}: {message}")
        } else {
            format!("{place}: {object}: {message}; {}", Escaped(&self.fix))
        }
    }
}

/// Errors of the planner library. Every message prints the input text it
/// quotes escaped ([`crate::names::Escaped`]), so control characters from
/// an input never reach a terminal raw.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input is not well-formed (TOML, JSON or CSV syntax, or a value of
    /// the wrong type).
    #[error("{}:{line}:{column}: {}", Escaped(file), Escaped(message))]
    Syntax {
        /// The input's name as the user gave it.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },

    /// The input is well-formed but describes something invalid; every
    /// problem found is listed.
    #[error("{}", ProblemList { file, what, problems })]
    Invalid {
        /// The input's name.
        file: String,
        /// What kind of input (`inventory`, `plan`, `cabling`).
        what: &'static str,
        /// Everything that is wrong, in file order.
        problems: Vec<Problem>,
    },

    /// The catalog lacks parts the plan needs (the plan and the catalog
    /// are both named: either may be the one to change).
    #[error(
        "{}",
        ProblemList {
            file: catalog,
            what: &format!("catalog for the plan {}", Escaped(plan)),
            problems,
        }
    )]
    CatalogLacks {
        /// The catalog as the user named it.
        catalog: String,
        /// The plan as the user named it.
        plan: String,
        /// Every part that is missing.
        problems: Vec<Problem>,
    },

    /// No design of the requested kind can be built from the input.
    #[error(
        "cannot design a {topology} from {}: {}; {}",
        Escaped(input),
        Escaped(reason),
        Escaped(fix)
    )]
    Infeasible {
        /// The inventory's name.
        input: String,
        /// `BiGraph`, `2-tier fat-tree`, ...
        topology: String,
        /// Why, with the numbers.
        reason: String,
        /// What would make it possible.
        fix: String,
    },

    /// A parameter of a library call has a value the planner cannot use.
    /// The library names the parameter (`ranks`, `bigraph`), never a
    /// command-line flag; a binary shows it as its own flag (`--ranks`).
    #[error("{parameter}: {}", Escaped(message))]
    Parameter {
        /// The parameter, in kebab case (`server-sub-nodes`).
        parameter: String,
        /// What is wrong and what to give instead, in terms of inputs and
        /// objects (no flag names).
        message: String,
    },

    /// A collective's schedule has more sends than the simulator builds
    /// send by send within its memory limit
    /// ([`crate::limits::SIMULATOR_MEMORY`], estimated from the sends
    /// before anything is built). The sends grow with the ranks and, for
    /// pipelined trees, with the message size (a chunk per step); the
    /// closed form needs no schedule.
    #[error(
        "{}{ranks} ranks: {sends} sends in the schedule would take about {} of memory in the simulator, above its limit of {}",
        job.as_ref().map_or(String::new(), |j| format!("{}: ", Escaped(j))),
        crate::limits::format_memory(*memory),
        crate::limits::format_memory(*limit)
    )]
    TooManySends {
        /// The algorithm, plan and size, when known (`nccl-tree on
        /// h100-1k at 256 MiB`).
        job: Option<String>,
        /// Ranks of the schedule.
        ranks: usize,
        /// Sends it would have.
        sends: u64,
        /// The memory the simulator would take for them, bytes.
        memory: u64,
        /// The limit, bytes.
        limit: u64,
    },

    /// An inventory given where a plan belongs.
    #[error(
        "{} is an inventory, not a plan; design it first: planner design {} --out plan.json (add --topology fat-tree for a fat-tree), then give plan.json",
        Escaped(file),
        Escaped(file)
    )]
    NotAPlan {
        /// The file as the user named it.
        file: String,
    },

    /// A switch vendor's renderer failed on a switch (its template or
    /// serializer): a bug, not the user's input.
    #[error("internal error: rendering {} for {vendor}", Escaped(device))]
    Render {
        /// The physical switch.
        device: String,
        /// The system as people name it (`Comware`).
        vendor: &'static str,
        /// What failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// A bug or an environment failure, not the user's input.
    #[error("internal error: {}", Escaped(.0))]
    Internal(String),

    /// A library the planner uses failed where it should not (a
    /// serialiser writing the planner's own types, the plot backend, the
    /// integer-program solver): a bug, with the library's error as the
    /// cause.
    #[error("internal error: {}", Escaped(doing))]
    Failed {
        /// What the planner was doing (`serialising the plan`).
        doing: String,
        /// The library's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    /// True for errors caused by the user's input (exit code 2), false for
    /// internal failures (exit code 1).
    pub fn is_bad_input(&self) -> bool {
        !matches!(
            self,
            Error::Internal(_) | Error::Render { .. } | Error::Failed { .. }
        )
    }

    /// A syntax error at a byte offset of `text`.
    pub fn syntax_at(file: &str, text: &str, offset: usize, message: impl Into<String>) -> Self {
        let (line, column) = line_col(text, offset);
        Error::Syntax {
            file: file.to_string(),
            line,
            column,
            message: message.into(),
        }
    }

    /// A serialiser's failure writing `what` (`the plan`), kept as the
    /// cause.
    pub fn serialize(what: &str, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Error::failed(format!("serialising {what}"), source)
    }

    /// A library's failure while `doing` something, kept as the cause.
    pub fn failed(
        doing: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Error::Failed {
            doing: doing.into(),
            source: Box::new(source),
        }
    }

    /// A TOML syntax or type error of `text` (named `file`), at the line
    /// and column of its span, the types said as a person would.
    pub fn toml(file: &str, text: &str, e: &toml::de::Error) -> Self {
        let offset = e.span().map_or(0, |s| s.start);
        let message = e
            .message()
            .trim()
            .replace("expected i64", "expected a whole number")
            .replace("expected f64", "expected a number")
            .replace("expected u32", "expected a whole number")
            .replace("expected a sequence", "expected a list");
        Error::syntax_at(file, text, offset, message)
    }

    /// A JSON syntax or type error of the input named `file`, at the line
    /// and column serde_json reports (its message without the position,
    /// which the error shows as `file:line:column`).
    pub fn json(file: &str, e: &serde_json::Error) -> Self {
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or("");
        Error::Syntax {
            file: file.to_string(),
            line: e.line(),
            column: e.column(),
            message: message.to_string(),
        }
    }

    /// A parameter error: `parameter` in kebab case (`ranks`), `message`
    /// without flag names.
    pub fn parameter(parameter: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Parameter {
            parameter: parameter.into(),
            message: message.into(),
        }
    }
}

/// The error and its causes as one line each joined by `: ` (like
/// anyhow's `{:#}`), with every [`Error::Parameter`] named by what the
/// caller calls it: `flag` maps a parameter (`ranks`) to a binary's flag
/// (`Some("--ranks")`), or `None` to keep the parameter's name.
pub fn display_chain(
    err: &(dyn std::error::Error + 'static),
    flag: &dyn Fn(&str) -> Option<String>,
) -> String {
    let mut parts = Vec::new();
    let mut next = Some(err);
    while let Some(e) = next {
        parts.push(match e.downcast_ref::<Error>() {
            Some(Error::Parameter { parameter, message }) => format!(
                "{}: {}",
                flag(parameter).unwrap_or_else(|| parameter.clone()),
                Escaped(message)
            ),
            _ => e.to_string(),
        });
        next = e.source();
    }
    parts.join(": ")
}

/// An error as a binary prints it after `error: `: [`display_chain`] with
/// every parameter named by the flag of `cli` that sets it (`ranks` is
/// `--ranks` when some subcommand of `cli` has `--ranks`, its name
/// otherwise), and input text in the chain escaped
/// ([`crate::names::escape_lines`]).
#[cfg(feature = "flags")]
pub fn report(err: &(dyn std::error::Error + 'static), cli: &clap::Command) -> String {
    fn has(cmd: &clap::Command, long: &str) -> bool {
        cmd.get_arguments().any(|a| a.get_long() == Some(long))
            || cmd.get_subcommands().any(|c| has(c, long))
    }
    let flag = |parameter: &str| has(cli, parameter).then(|| format!("--{parameter}"));
    crate::names::escape_lines(&display_chain(err, &flag))
}

/// Returns the 1-based line and column of a byte offset in `text`.
///
/// Offsets past the end map to the position just after the last character.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    // Back off to a char boundary so slicing cannot panic.
    let mut end = offset;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Formats a list of problems as the errors of this crate do: a count, then
/// one `file:line: object: message; fix` line each. Other crates use it for
/// their own inputs.
pub fn problem_list(file: &str, what: &str, problems: &[Problem]) -> String {
    ProblemList {
        file,
        what,
        problems,
    }
    .to_string()
}

struct ProblemList<'a> {
    file: &'a str,
    what: &'a str,
    problems: &'a [Problem],
}

impl fmt::Display for ProblemList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        let s = if n == 1 { "" } else { "s" };
        write!(
            f,
            "{}: {n} problem{s} in the {}",
            Escaped(self.file),
            self.what
        )?;
        for p in self.problems {
            write!(f, "\n  {}", p.display_in(self.file))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_list_every_line() {
        let e = Error::Invalid {
            file: "inv.toml".into(),
            what: "inventory",
            problems: vec![
                Problem::at(
                    Some(3),
                    "switch sw",
                    "count is -1",
                    "set count to 1 or more",
                ),
                Problem::at(None, "inventory", "no servers", ""),
            ],
        };
        assert_eq!(
            e.to_string(),
            "inv.toml: 2 problems in the inventory\n  inv.toml:3: switch sw: count is -1; set count to 1 or more\n  inv.toml: inventory: no servers"
        );
        assert!(e.is_bad_input());
        assert!(!Error::Internal("x".into()).is_bad_input());
        let e = Error::serialize("the plan", std::fmt::Error);
        assert!(!e.is_bad_input());
        assert_eq!(
            display_chain(&e, &|_| None),
            "internal error: serialising the plan: an error occurred when formatting an argument"
        );
    }

    #[test]
    fn parameters_are_named_by_the_caller() {
        #[derive(Debug, thiserror::Error)]
        #[error("reading the plan")]
        struct Outer(#[source] Error);
        let e = Outer(Error::parameter("ranks", "0 ranks: use 1 or more"));
        assert_eq!(e.0.to_string(), "ranks: 0 ranks: use 1 or more");
        let flag = |p: &str| (p == "ranks").then(|| format!("--{p}"));
        assert_eq!(
            display_chain(&e, &flag),
            "reading the plan: --ranks: 0 ranks: use 1 or more"
        );
        assert_eq!(
            display_chain(&e, &|_| None),
            "reading the plan: ranks: 0 ranks: use 1 or more"
        );
    }
}
