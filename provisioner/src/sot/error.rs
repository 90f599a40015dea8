//! The errors of the source-of-truth client (`provisioner sot`).
//!
//! Every field that may carry the server's text (its messages, object
//! names, URLs it sent) is escaped in one place, here, when the error is
//! shown (`planner::names::escape`): a hostile or broken server cannot
//! move the cursor or forge lines of our output (issue #31, found by
//! `fuzz_sot_answers`).

use planner::names::{escape, escape_lines};

/// A boxed cause from the transport (reqwest) or a file.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Errors of `provisioner sot`.
#[derive(Debug, thiserror::Error)]
pub enum SotError {
    /// A flag or setting that cannot be used (a URL that is not http(s),
    /// an unreadable CA file).
    #[error("--{parameter}: {}", escape_lines(message))]
    Parameter {
        /// The flag, in kebab case.
        parameter: String,
        /// What is wrong and what to give instead.
        message: String,
    },

    /// The API token cannot be had. Never carries the token itself.
    #[error("token: {}", escape_lines(message))]
    Token {
        /// What is wrong and what to do.
        message: String,
    },

    /// The server refused the token (401 or 403).
    #[error(
        "{}: the server refused the token (HTTP {status}): {}; check --token-file or the token variable, and the token's permissions",
        escape(url),
        escape(detail)
    )]
    Auth {
        /// The request's URL.
        url: String,
        /// 401 or 403.
        status: u16,
        /// The server's `detail`.
        detail: String,
    },

    /// No answer (connection refused, TLS failure, timeout) after the
    /// retries.
    #[error("{}: {}: {}", escape(action), escape(url), escape_lines(message))]
    Transport {
        /// What the client was doing.
        action: String,
        /// The request's URL.
        url: String,
        /// What went wrong and what to check.
        message: String,
        /// The transport's error.
        #[source]
        source: Option<BoxError>,
    },

    /// An answer the client cannot use: an HTTP error (after retries for
    /// 429 and 5xx), a redirect, a body that is not JSON or is too large,
    /// more pages than allowed.
    #[error("{}: {}: {}", escape(action), escape(url), escape_lines(message))]
    Api {
        /// What the client was doing.
        action: String,
        /// The request's URL.
        url: String,
        /// The status and the server's message.
        message: String,
    },

    /// Objects of the source of truth that the inventory cannot express,
    /// or that the plan needs and the source of truth lacks; each names
    /// the object and its URL.
    #[error("{}:{}", escape(what), list(problems))]
    Refused {
        /// What was being done (`importing`, `pushing eflops-4x16`).
        what: String,
        /// One line per object: name, URL, what is wrong, what to do.
        problems: Vec<String>,
    },

    /// A push that met conflicts, or cabling with findings: the report
    /// was printed; this sets the exit code (2).
    #[error("{}", escape_lines(message))]
    Outcome {
        /// What was found, in one line.
        message: String,
    },

    /// The inventory written from the source of truth does not pass the
    /// planner's own checks.
    #[error("the imported inventory does not pass the planner's checks")]
    Inventory(#[source] Box<planner::Error>),

    /// A file that cannot be written or read.
    #[error("{}: {source}", escape(action))]
    Io {
        /// What was being done, with the file.
        action: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl SotError {
    /// True for what the user can fix (flags, token, refused objects,
    /// conflicts, findings); false for failures on the way (no answer,
    /// server errors).
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, SotError::Transport { .. } | SotError::Api { .. })
    }
}

/// Results of `provisioner sot`.
pub type Result<T, E = SotError> = std::result::Result<T, E>;

/// One problem a line, each escaped (a problem may quote the server).
fn list(problems: &[String]) -> String {
    let mut s = String::new();
    for p in problems {
        s.push_str("\n  ");
        s.push_str(&escape(p));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::SotError;

    #[test]
    fn server_text_in_errors_is_escaped() {
        let e = SotError::Auth {
            url: "http://h/api/x/".to_string(),
            status: 403,
            detail: "refused \u{1b}[31mred\u{7}".to_string(),
        };
        let shown = e.to_string();
        assert!(shown.contains("refused \\u{1b}[31mred\\u{7}"), "{shown}");
        let e = SotError::Refused {
            what: "importing".to_string(),
            problems: vec!["device sw01\r\nX: 1 http://h/".to_string(), "b".to_string()],
        };
        let shown = e.to_string();
        assert_eq!(shown, "importing:\n  device sw01\\r\\nX: 1 http://h/\n  b");
        assert!(!shown.chars().any(|c| c.is_control() && c != '\n'));
    }
}
