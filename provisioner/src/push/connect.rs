//! What a push shares with the commands that finish it later (`push
//! confirm|rollback` and the watchdog, in [`super::ops`]): the client of a
//! devices-file entry, the name of a candidate's configure session, the
//! confirm margin and timer, and an error chain on one line. Below both `run` and
//! `ops`, so that neither imports the other's internals.

use std::time::Duration;

use super::devices::Entry;
use super::error::Result;
use super::{Client, Opening};

/// Seconds before the deadline after which the push no longer confirms
/// (it rolls back instead), so that a confirm never races the timer.
pub const CONFIRM_MARGIN: u64 = 2;

/// The name of the configure session (EOS) of a candidate.
pub fn session_name(candidate_sha256: &str) -> String {
    format!(
        "efl-push-{}",
        &candidate_sha256[..12.min(candidate_sha256.len())]
    )
}

/// Makes the client of a devices-file entry. `waiting` says that an
/// earlier process committed and the commit may wait on its timer (`push
/// confirm`, `push rollback`, the watchdog); `timer` is the push's confirm
/// timer (`--confirm-timer`, or the journal's `timer_seconds`), which
/// bounds how long a client waits on the device's own apply. The vendor's
/// client is chosen by its row in `clients!` ([`Client::connect`]).
pub fn connect(entry: &Entry, session: &str, waiting: bool, timer: Duration) -> Result<Client> {
    let t = &entry.target;
    let opening = Opening {
        native_timer: entry.native_timer,
        session,
        waiting,
        timer,
    };
    Client::connect(t.vendor, t, &opening)
}

/// The error chain of `e` on one line.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// A confirm timer: a duration from 3 s to 23h59m59s.
pub fn confirm_timer(text: &str) -> std::result::Result<Duration, String> {
    let secs = seconds(text)?;
    if !(3..=86_399).contains(&secs) {
        return Err(format!(
            "{secs} s is outside 3 s to 23h59m59s (the push confirms at least {} s before the timer runs out)",
            CONFIRM_MARGIN
        ));
    }
    Ok(Duration::from_secs(secs))
}

/// A duration in seconds: `90`, `90s`, `5m`, `1h`.
pub fn seconds(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    let (n, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: u64 = n
        .parse()
        .map_err(|_| format!("`{text}` is not a duration; give e.g. 30s, 5m or 1h"))?;
    match unit {
        "" | "s" => Some(n),
        "m" => n.checked_mul(60),
        "h" => n.checked_mul(3600),
        _ => None,
    }
    .ok_or_else(|| format!("`{text}` is not a duration; give e.g. 30s, 5m or 1h"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(confirm_timer("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(confirm_timer("90"), Ok(Duration::from_secs(90)));
        assert_eq!(confirm_timer("1h"), Ok(Duration::from_secs(3600)));
        assert!(confirm_timer("2s").is_err());
        assert!(confirm_timer("24h").is_err());
        assert!(confirm_timer("5 min").is_err());
        assert!(confirm_timer("").is_err());
    }
}
