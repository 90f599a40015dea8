//! The errors of `provisioner push`: bad input (the devices file, the
//! plan, flags, credentials), what a device answered (refused login, lock
//! held, candidate rejected, wrong identity, failed verification) and
//! failures on the way (lost connection, timer expired).

use std::io;

use planner::names::{escape, escape_lines};

/// A boxed cause from a transport library (reqwest, russh, a process).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Errors of `provisioner push`.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// A flag with a value push cannot use; `parameter` is the flag's name
    /// without dashes.
    #[error("--{parameter}: {message}")]
    Parameter {
        /// The flag, in kebab case.
        parameter: String,
        /// What is wrong and what to give instead.
        message: String,
    },

    /// A devices file that cannot be read or is not valid TOML.
    #[error("{file}:{line}:{column}: {message}")]
    DevicesSyntax {
        /// The file as the user named it.
        file: String,
        /// 1-based line (0 when the file cannot be read).
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },

    /// A devices file whose entries do not fit the plan; every problem is
    /// listed with its line.
    #[error("{file}: the devices file does not fit the plan:{}", list(problems))]
    Devices {
        /// The file as the user named it.
        file: String,
        /// `(line, message)`; line 0 when the problem has no line (a
        /// switch the file lacks).
        problems: Vec<(usize, String)>,
    },

    /// A credential that cannot be had (unset variable, unreadable or
    /// loosely protected file). Never carries the credential itself.
    #[error("switch {switch}: {message}")]
    Credentials {
        /// The switch whose credential it is.
        switch: String,
        /// What is wrong and what to do.
        message: String,
    },

    /// The plan cannot be read or rendered.
    #[error("{file}")]
    Plan {
        /// The plan as the user named it.
        file: String,
        /// What the planner said.
        #[source]
        source: Box<planner::Error>,
    },

    /// A journal that cannot be written or read.
    #[error("journal {file}: {message}")]
    Journal {
        /// The journal file.
        file: String,
        /// What is wrong and what to do.
        message: String,
        /// The I/O or JSON error, when there is one.
        #[source]
        source: Option<BoxError>,
    },

    /// An error of one switch (the push wraps every device error in it).
    #[error("switch {switch}")]
    Switch {
        /// The plan's physical switch.
        switch: String,
        /// What went wrong there.
        #[source]
        source: Box<PushError>,
    },

    // What devices answer. Clients return these without the switch name;
    // the push wraps them in `Switch`.
    /// The device cannot be reached (connection refused, no route, TLS
    /// handshake failed).
    #[error("cannot reach {address}: {hint}")]
    Unreachable {
        /// `host:port`.
        address: String,
        /// What to check.
        hint: String,
        /// The transport's error.
        #[source]
        source: BoxError,
    },

    /// The device refused the credentials.
    #[error(
        "{address} refused the login of user {user}; check the user and the password's source in the devices file"
    )]
    Auth {
        /// `host:port`.
        address: String,
        /// The user name (never the password).
        user: String,
    },

    /// The SSH host key does not match the known-hosts file or the pinned
    /// fingerprint.
    #[error("{address}: {message}")]
    HostKey {
        /// `host:port`.
        address: String,
        /// What was expected and found, and what to do.
        message: String,
    },

    /// Someone else holds the configuration lock or session.
    #[error(
        "the configuration is locked by {}; wait for that change to finish, or end it on the device",
        escape(by)
    )]
    Locked {
        /// Who or what holds it, as the device says.
        by: String,
    },

    /// The device refused the candidate configuration.
    #[error("the device rejected the candidate: {}", escape_lines(message))]
    Rejected {
        /// The device's own message.
        message: String,
    },

    /// The candidate would remove or change the management access the
    /// push itself uses (its address, the API service, its user): refused
    /// before anything is committed.
    #[error(
        "the candidate would cut the management access push uses ({address}, user {user}); refused before the commit. Lines it removes or changes:{}",
        list_plain(lines)
    )]
    Management {
        /// The address push talks to.
        address: String,
        /// The user push logs in as.
        user: String,
        /// The management lines removed or changed, as the device spells
        /// them.
        lines: Vec<String>,
    },

    /// The switch's ports are not the candidate's: a cage in another
    /// breakout mode, or a port the switch does not have. Refused before
    /// anything is written; the switch's own commands set them.
    #[error(
        "the switch's ports differ from the plan's; refused before anything was written. Set them on the switch first (SONiC's Dynamic Port Breakout, `config interface breakout`, makes a cage's child ports with their lanes), or fix the port names (the inventory's `port_name`), then push again:{}",
        list_plain(lines)
    )]
    Ports {
        /// One line per root port or port, as the device spells it.
        lines: Vec<String>,
    },

    /// The device is not the switch the plan names.
    #[error(
        "the device says it is {}, not {expected}; fix the address in the devices file or the device's hostname",
        escape(found)
    )]
    Identity {
        /// The plan's switch name.
        expected: String,
        /// The hostname (and serial) the device reported.
        found: String,
    },

    /// The device answered something the client does not understand.
    #[error("{action}: unexpected answer: {}", escape_lines(message))]
    Protocol {
        /// What was being done (`creating a revision`).
        action: String,
        /// What was wrong with the answer.
        message: String,
    },

    /// A request failed on the way (connection lost, reset, timed out).
    #[error("{action}: connection lost")]
    Transport {
        /// What was being done.
        action: String,
        /// The transport's error.
        #[source]
        source: BoxError,
    },

    /// The device did not finish an operation in time.
    #[error("{action}: no result after {seconds} s")]
    Timeout {
        /// What was being done.
        action: String,
        /// How long was waited.
        seconds: u64,
    },

    /// The confirm timer ran out before the confirm: the configuration
    /// went back to `point`.
    #[error(
        "the confirm timer expired before the commit was confirmed; the device went back to {point}"
    )]
    TimerExpired {
        /// The rollback point.
        point: String,
    },

    /// The committed configuration does not match the plan; it was rolled
    /// back. The mismatches themselves are listed once, with the switch
    /// (the report's `mismatches`), not again in every error line.
    #[error(
        "verification failed: {} (listed as `mismatch:` lines, `mismatches` in JSON)",
        count_mismatches(mismatches)
    )]
    Verify {
        /// One line per mismatch, naming port and peer.
        mismatches: Vec<String>,
    },

    /// A rollback that failed after another failure: the switch may be on
    /// the new configuration.
    #[error(
        "{cause}; then the rollback to {point} failed too: check the switch by hand (`provisioner push status` shows the journal)"
    )]
    Rollback {
        /// The rollback point.
        point: String,
        /// Why the rollback was needed (the first error's chain).
        cause: String,
        /// Why the rollback failed.
        #[source]
        source: Box<PushError>,
    },

    /// A local I/O error (watchdog process, files).
    #[error("{action}")]
    Io {
        /// What was being done.
        action: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

impl PushError {
    /// True for mistakes the user can fix and answers that refuse the
    /// push as asked (exit code 2); false for failures on the way (exit
    /// code 1).
    pub fn is_bad_input(&self) -> bool {
        match self {
            PushError::Switch { source, .. } => source.is_bad_input(),
            PushError::Plan { source, .. } => source.is_bad_input(),
            PushError::Parameter { .. }
            | PushError::DevicesSyntax { .. }
            | PushError::Devices { .. }
            | PushError::Credentials { .. }
            | PushError::Unreachable { .. }
            | PushError::Auth { .. }
            | PushError::HostKey { .. }
            | PushError::Locked { .. }
            | PushError::Rejected { .. }
            | PushError::Management { .. }
            | PushError::Ports { .. }
            | PushError::Identity { .. }
            | PushError::Verify { .. }
            // A journal that is missing, foreign, or waits on an earlier
            // push: the user's file to fix.
            | PushError::Journal { .. } => true,
            PushError::Protocol { .. }
            | PushError::Transport { .. }
            | PushError::Timeout { .. }
            | PushError::TimerExpired { .. }
            | PushError::Rollback { .. }
            | PushError::Io { .. } => false,
        }
    }

    /// Wraps a device error with the switch's name.
    pub fn on(self, switch: &str) -> PushError {
        PushError::Switch {
            switch: switch.to_string(),
            source: Box::new(self),
        }
    }
}

fn list(problems: &[(usize, String)]) -> String {
    let mut s = String::new();
    for (line, message) in problems {
        if *line == 0 {
            s.push_str(&format!("\n  {message}"));
        } else {
            s.push_str(&format!("\n  line {line}: {message}"));
        }
    }
    s
}

fn count_mismatches(m: &[String]) -> String {
    if m.len() == 1 {
        "1 mismatch".to_string()
    } else {
        format!("{} mismatches", m.len())
    }
}

/// Lines as the device spells them, one per line, escaped (device text).
fn list_plain(items: &[String]) -> String {
    let mut s = String::new();
    for i in items {
        s.push_str("\n  ");
        s.push_str(&escape(i));
    }
    s
}

/// Shorthand for results of `push`.
pub type Result<T, E = PushError> = std::result::Result<T, E>;

/// A device answer that does not read as documented, while doing `action`
/// (the SSH clients' one constructor of [`PushError::Protocol`]).
pub(super) fn protocol(action: &str, message: impl Into<String>) -> PushError {
    PushError::Protocol {
        action: action.to_string(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a device says reaches the terminal as text: its control
    /// characters escaped, its line breaks kept where the message is
    /// several lines (a hostile SCP sink's answer, found by the SSH fuzz
    /// target, was printed raw).
    #[test]
    fn device_text_in_errors_is_escaped() {
        let e = PushError::Protocol {
            action: "writing flash:/x over SCP".into(),
            message: "bad\u{1b}[2J\nsecond\u{7}".into(),
        };
        assert_eq!(
            e.to_string(),
            "writing flash:/x over SCP: unexpected answer: bad\\u{1b}[2J\nsecond\\u{7}"
        );
        let e = PushError::Locked {
            by: "me\u{1b}]0;x\u{7}".into(),
        };
        assert!(!e.to_string().chars().any(char::is_control), "{e}");
        let e = PushError::Rejected {
            message: "%Wrong\r\nparameter".into(),
        };
        assert_eq!(
            e.to_string(),
            "the device rejected the candidate: %Wrong\\r\nparameter"
        );
        let e = PushError::Identity {
            expected: "sw1".into(),
            found: "sw\u{9b}2".into(),
        };
        assert!(e.to_string().contains("sw\\u{9b}2"), "{e}");
        let e = PushError::Management {
            address: "192.0.2.1".into(),
            user: "admin".into(),
            lines: vec!["- eth0\u{1b}".into()],
        };
        assert!(e.to_string().ends_with("\n  - eth0\\u{1b}"), "{e}");
    }
}
