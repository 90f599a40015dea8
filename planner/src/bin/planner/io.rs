//! Files and the terminal: reading inputs, printing (outputs are written
//! by `output.rs`) and the progress ticker on stderr.

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};

use planner::checked::CheckedPlan;
use planner::design::DesignOptions;
use planner::design::shorthand::{self, Shorthand};
use planner::estimate::SendProgress;
use planner::inventory::Inventory;
use planner::plan::Plan;
use planner::validate::cabling;

/// An error caused by the user's input (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

/// A `--link-gbps` of the commands that build plans from shorthands: the
/// whole Gbps the designed plan carries (plans hold whole Gbps; rounded
/// up), and the exact speed as the `link_gbps` parameter when it is
/// fractional (`9.33`), so the simulation runs the links at it.
pub fn link_speed(gbps: f64) -> Result<(u32, Option<f64>)> {
    if !gbps.is_finite() || gbps <= 0.0 || gbps > f64::from(u32::MAX) {
        return Err(BadInput(format!(
            "--link-gbps {gbps}: give a link speed above 0 Gbps, e.g. 100 or 9.33"
        ))
        .into());
    }
    let whole = gbps.ceil() as u32;
    Ok((whole, (f64::from(whole) != gbps).then_some(gbps)))
}

pub fn display(p: &Path) -> String {
    p.display().to_string()
}

/// Reads an input file: a regular file of at most
/// `planner::input::MAX_INPUT_BYTES` ([`planner::input::read`]).
pub fn read(path: &Path) -> Result<String> {
    planner::input::read(path).map_err(|m| BadInput(m).into())
}

/// The inventory and design options of the `--bigraph MxN` or `--fat-tree
/// SPEC` shorthand given (`--bigraph` first when both are), with the words
/// that name it; `None` when neither is.
pub fn shorthand_source(
    bigraph: Option<&str>,
    fat_tree: Option<&str>,
    s: &Shorthand,
) -> Result<Option<(Inventory, DesignOptions, String)>> {
    if let Some(spec) = bigraph {
        let (m, n) = shorthand::parse_bigraph(spec)?;
        let (inv, opts) = shorthand::bigraph(m, n, s)?;
        return Ok(Some((inv, opts, format!("--bigraph {spec}"))));
    }
    if let Some(spec) = fat_tree {
        let (inv, opts) = shorthand::fat_tree(spec, s)?;
        return Ok(Some((inv, opts, format!("--fat-tree {spec}"))));
    }
    Ok(None)
}

pub fn load_inventory(path: &Path) -> Result<(Inventory, String)> {
    let name = display(path);
    let text = read(path)?;
    Ok((Inventory::from_toml(&text, &name)?, name))
}

/// Reads and checks a plan: every command but `validate` takes only a
/// plan that passed the whole consistency check.
pub fn load_plan(path: &Path) -> Result<CheckedPlan> {
    let name = display(path);
    Ok(read_plan_unchecked(path)?.check(&name)?)
}

/// Reads a plan without checking it, for `validate`, which reports what
/// the check finds instead of refusing the plan: a compact plan when the
/// file begins with its signature (whatever its name), else JSON or TOML
/// text ([`Plan::parse`]).
/// A compact plan is decoded as it is read, with no buffer of the file's
/// size; any other file (or a compact one that reading so gives up on) is
/// read whole, which words every refusal.
pub fn read_plan_unchecked(path: &Path) -> Result<Plan> {
    let name = display(path);
    if let Some(plan) = planner::plan_compact::read_streamed(path, &name) {
        return Ok(plan?);
    }
    let contents = planner::plan_compact::read(path).map_err(BadInput)?;
    Ok(Plan::from_file(&contents, &name)?)
}

/// Ends a command's use of a large value (a plan, its checks, a route
/// graph, a report of one line per rank) without freeing it: the process
/// exits right after the command writes its output, and freeing a plan
/// of 131,072 sub-nodes one allocation at a time (some 200,000 of them)
/// would only make the user wait, as rustc does not free its arenas
/// either. Only for values that own memory and nothing else: no file, no
/// thread, no buffered writer (their flush, join or removal would be
/// skipped).
pub fn leave<T>(value: T) {
    std::mem::forget(value);
}

/// Reads every cabling file: CSV, or LLDP JSON named after its device.
pub fn load_cabling(files: &[PathBuf]) -> Result<Vec<cabling::Observed>> {
    let mut observed = Vec::new();
    for file in files {
        let name = display(file);
        let text = read(file)?;
        let rows = if is_json(file, &text) {
            let stem = file
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("device");
            cabling::parse_lldp(&text, &name, stem)?
        } else {
            cabling::parse_csv(&text, &name)?
        };
        observed.extend(rows);
    }
    Ok(observed)
}

pub fn is_json(path: &Path, text: &str) -> bool {
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") => true,
        Some("csv") => false,
        _ => text.trim_start().starts_with('{'),
    }
}

pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`planner ... | head`) is not a failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e).context("writing to stdout"),
    }
}

pub fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value).context("serialising JSON")?;
    text.push('\n');
    print(&text)
}

/// Progress on stderr while a long command runs (`simulate`'s sweeps,
/// `failures`' scenarios): once it has run for a second, what it is doing
/// now, how many of its units are done and the time so far, as
/// `{verb} {what}: {done}/{total} {unit} done, {seconds} s`, from a thread
/// of its own, so that a single long unit (one simulation: minutes at
/// 1,024 ranks) shows it too. On a terminal one line redrawn every 0.1 s
/// and cleared at the end; otherwise a line every 10 s, so a log is not
/// flooded. Off (`on` false) with --quiet and with --format json or csv;
/// a command that ends within the second prints nothing.
/// `PLANNER_PROGRESS_AFTER_MS` and `PLANNER_PROGRESS_EVERY_MS` change the
/// second and the 10 s (the tests set them).
pub struct Progress {
    state: std::sync::Arc<std::sync::Mutex<ProgressState>>,
    /// The sends the simulations started, shown beside the count when given.
    sends: std::sync::Arc<std::sync::Mutex<Option<std::sync::Arc<SendProgress>>>>,
    stop: Option<std::sync::mpsc::Sender<()>>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct ProgressState {
    what: String,
    done: usize,
    total: usize,
    shown: bool,
}

fn env_ms(name: &str, default: u64) -> Duration {
    Duration::from_millis(
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default),
    )
}

impl Progress {
    /// A ticker that reports `{verb} {what}: {done}/{total} {unit} done`
    /// when `on`, and does nothing otherwise.
    pub fn new(on: bool, verb: &'static str, unit: &'static str) -> Self {
        let state = std::sync::Arc::new(std::sync::Mutex::new(ProgressState::default()));
        let sends = std::sync::Arc::new(std::sync::Mutex::new(None));
        if !on {
            return Self {
                state,
                sends,
                stop: None,
                ticker: None,
            };
        }
        let terminal = std::io::stderr().is_terminal();
        let after = env_ms("PLANNER_PROGRESS_AFTER_MS", 1000);
        let every = env_ms(
            "PLANNER_PROGRESS_EVERY_MS",
            if terminal { 100 } else { 10_000 },
        );
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let shared = std::sync::Arc::clone(&state);
        let counted = std::sync::Arc::clone(&sends);
        let ticker = std::thread::spawn(move || {
            let start = Instant::now();
            let mut next = after;
            loop {
                let wait = next.saturating_sub(start.elapsed());
                match stopped.recv_timeout(wait) {
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    _ => break,
                }
                next += every.max(Duration::from_millis(10));
                let Ok(mut st) = shared.lock() else { break };
                if st.what.is_empty() {
                    continue;
                }
                let sends = match counted.lock().ok().and_then(|c| c.clone()) {
                    Some(c) if c.total() > 0 => format!(
                        ", {} of at most {} sends started",
                        millions(c.started()),
                        millions(c.total())
                    ),
                    _ => String::new(),
                };
                let line = format!(
                    "{verb} {}: {}/{} {unit} done{sends}, {:.0} s",
                    st.what,
                    st.done,
                    st.total,
                    start.elapsed().as_secs_f64()
                );
                if terminal {
                    eprint!("\r{line:<78}");
                } else {
                    eprintln!("{line}");
                }
                st.shown = terminal;
            }
        });
        Self {
            state,
            sends,
            stop: Some(stop),
            ticker: Some(ticker),
        }
    }

    /// Shows how many of the simulations' sends have started (the count
    /// [`planner::estimate::Options::sends`] fills).
    pub fn with_sends(self, sends: Option<std::sync::Arc<SendProgress>>) -> Self {
        if let Ok(mut s) = self.sends.lock() {
            *s = sends;
        }
        self
    }

    /// What runs now and how far it is.
    pub fn update(&self, what: &str, done: usize, total: usize) {
        if self.ticker.is_none() {
            return;
        }
        if let Ok(mut st) = self.state.lock() {
            if st.what != what {
                st.what = what.to_string();
            }
            st.done = done;
            st.total = total;
        }
    }

    /// Stops the ticker and clears its line on a terminal; dropping it does
    /// the same.
    pub fn finish(&mut self) {
        self.stop.take();
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        if self.state.lock().is_ok_and(|st| st.shown) {
            eprint!("\r{}\r", " ".repeat(78));
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A count of sends as the progress line shows it: `812,345` below ten
/// million, else millions with one decimal (`33.5 million`).
fn millions(n: u64) -> String {
    if n < 10_000_000 {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    } else {
        format!("{:.1} million", n as f64 / 1e6)
    }
}
