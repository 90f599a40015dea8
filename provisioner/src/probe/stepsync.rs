//! The step-sync control channel: rank 0 tells a controller on a Unix socket where the run stands after every step and waits for its `go` (network namespaces share the file system, so a lab's controller can read link counters while every rank waits).
//!
//! The protocol is one JSON line per step from the engine
//! (`{"size":1048576,"iteration":0,"step":2,"name":"all-gather 1","partner":3}`)
//! and one line back: `go` continues, anything else stops the run with
//! that text as the reason.

use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use super::{StepHook, StepPoint};

/// A [`StepHook`] that waits for a controller on a Unix socket (rank 0
/// connects; the other ranks only keep the barrier).
#[derive(Debug)]
pub struct UnixStepSync {
    stream: Option<BufReader<UnixStream>>,
}

impl UnixStepSync {
    /// On rank 0, connects to the controller listening at `path`; on the
    /// other ranks, connects to nothing.
    pub fn connect(path: &Path, rank: usize) -> io::Result<Self> {
        let stream = if rank == 0 {
            Some(BufReader::new(UnixStream::connect(path)?))
        } else {
            None
        };
        Ok(Self { stream })
    }
}

impl StepHook for UnixStepSync {
    fn between_steps(&mut self, p: &StepPoint) -> io::Result<()> {
        let Some(s) = self.stream.as_mut() else {
            return Ok(());
        };
        let line = serde_json::json!({
            "size": p.bytes,
            "iteration": p.iteration,
            "step": p.step,
            "name": p.name,
            "partner": p.partner,
        });
        writeln!(s.get_mut(), "{line}")?;
        let mut answer = String::new();
        if s.read_line(&mut answer)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the controller closed the step-sync socket",
            ));
        }
        match answer.trim() {
            "go" => Ok(()),
            other => Err(io::Error::other(format!("the controller said `{other}`"))),
        }
    }
}
