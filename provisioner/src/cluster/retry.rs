//! What `provisioner controller` does with a failed request: try a
//! transient failure again after a bounded, jittered back-off; let the
//! caller decide the rest (a 404 drops the object, a 409 is read afresh,
//! a 403 is reported for that object and the others go on).

use std::time::Duration;

use serde::Serialize;

/// Tries of one request before its failure is the caller's.
pub const ATTEMPTS: u32 = 4;

/// The first back-off; each next one doubles, up to [`MAX_DELAY`].
const BASE_DELAY: Duration = Duration::from_millis(100);

/// The longest back-off between two tries of one request.
const MAX_DELAY: Duration = Duration::from_secs(2);

/// The first wait of `provisioner controller` after a pass that failed
/// (its list failed after its tries, or an object's request did); each
/// next one doubles, up to [`PASS_MAX_DELAY`].
const PASS_BASE_DELAY: Duration = Duration::from_secs(1);

/// The longest wait between two passes that failed.
const PASS_MAX_DELAY: Duration = Duration::from_secs(60);

/// A request of one object that failed after its tries, reported and
/// skipped: the pass goes on with the other objects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectFailure {
    /// The object, e.g. `Workload default/job-a-1a2b3`.
    pub object: String,
    /// What was being done and what the API server said.
    pub message: String,
}

impl ObjectFailure {
    pub(super) fn new(object: impl Into<String>, e: &crate::error::Error) -> ObjectFailure {
        ObjectFailure {
            object: object.into(),
            message: e.to_string(),
        }
    }
}

/// True for a failure that the same request may not meet again: the API
/// server busy or failing (429, 5xx), or the connection.
pub fn transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(r) => r.code == 429 || r.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// The back-off before try `attempt` + 1 (`attempt` from 1): "full
/// jitter" between half and all of `BASE_DELAY` * 2^(attempt-1), capped
/// at [`MAX_DELAY`], so that controllers that failed together do not
/// come back together. `noise` is any number (the clock's nanoseconds).
pub fn backoff(attempt: u32, noise: u32) -> Duration {
    jittered(BASE_DELAY, MAX_DELAY, attempt, noise)
}

/// The wait after the `failures`-th pass in a row that failed, as
/// [`backoff`] but from 1 s up to 60 s.
pub fn pass_backoff(failures: u32, noise: u32) -> Duration {
    jittered(PASS_BASE_DELAY, PASS_MAX_DELAY, failures, noise)
}

fn jittered(base: Duration, max: Duration, attempt: u32, noise: u32) -> Duration {
    let full = base
        .saturating_mul(1 << attempt.saturating_sub(1).min(16))
        .min(max);
    let half = full / 2;
    let spread = u64::try_from(half.as_micros()).unwrap_or(u64::MAX).max(1);
    half + Duration::from_micros(u64::from(noise) % spread)
}

/// The clock's nanoseconds, as jitter.
pub fn noise() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
}

/// Runs `request` until it succeeds, fails for a reason that is not
/// [`transient`], or has been tried [`ATTEMPTS`] times, sleeping
/// [`backoff`] between tries.
pub async fn retried<T, F, Fut>(mut request: F) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, kube::Error>>,
{
    let mut attempt = 1;
    loop {
        match request().await {
            Err(e) if attempt < ATTEMPTS && transient(&e) => {
                tokio::time::sleep(backoff(attempt, noise())).await;
                attempt += 1;
            }
            done => return done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_within_its_jitter_and_is_capped() {
        for attempt in 1..=8 {
            let full = (BASE_DELAY * (1 << (attempt - 1))).min(MAX_DELAY);
            for noise in [0, 1, 12_345, u32::MAX] {
                let d = backoff(attempt, noise);
                assert!(d >= full / 2 && d <= full, "{attempt} {noise} {d:?}");
            }
        }
        assert_eq!(backoff(30, 0), MAX_DELAY / 2);
        assert!(pass_backoff(1, 7) >= PASS_BASE_DELAY / 2 && pass_backoff(1, 7) <= PASS_BASE_DELAY);
        assert!(pass_backoff(40, u32::MAX) <= PASS_MAX_DELAY);
        assert_ne!(backoff(3, 0), backoff(3, 99_999));
    }

    #[test]
    fn only_busy_failing_servers_and_connections_are_transient() {
        let api = |code| {
            kube::Error::Api(kube::core::ErrorResponse {
                status: "Failure".to_string(),
                message: String::new(),
                reason: String::new(),
                code,
            })
        };
        for (code, want) in [
            (500, true),
            (503, true),
            (429, true),
            (404, false),
            (403, false),
            (409, false),
            (422, false),
        ] {
            assert_eq!(transient(&api(code)), want, "{code}");
        }
    }
}
