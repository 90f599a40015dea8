//! The fuzz campaign over the real `planner` and `provisioner` binaries
//! (issue #13): the mutations of [`crate::mutate`] applied to
//! the bundled inputs and to command-line numbers, each run under a time
//! and a memory limit, counted and the failures kept for people to replay.
//!
//! `examples/fuzz_campaign.rs` is the command-line front end; the test
//! `fuzz_campaign_over_the_binaries` (`planner/tests/it/fuzz.rs`) runs a
//! few hundred cases in CI.
//!
//! Case `i` of seed `s` draws everything from `Rng::new(s ^ i * K)`: the
//! command, the file it mutates and the mutations, so a case is replayed
//! from its seed and index alone. Each run gets `prlimit --as` (the address
//! space; an allocation over it aborts with "memory allocation of ...
//! failed", counted as over the memory limit), its peak resident memory is
//! sampled from `/proc/PID/status`, and it is killed at the time limit.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::mutate::{self, Format, Rng, Scale};

/// What a campaign runs and where it writes.
#[derive(Debug, Clone)]
pub struct Config {
    /// Cases to run.
    pub cases: u64,
    /// The seed every case derives from.
    pub seed: u64,
    /// Summary and failing cases go here (created; a `work/` inside holds
    /// the inputs of the runs under way).
    pub out: PathBuf,
    /// The workspace root (bundled inputs are read from it).
    pub root: PathBuf,
    /// The `planner` binary.
    pub planner: PathBuf,
    /// The `provisioner` binary (its commands are skipped when absent).
    pub provisioner: Option<PathBuf>,
    /// A run taking longer is killed and counted.
    pub time_limit: Duration,
    /// Address-space limit of each run, bytes.
    pub memory_limit: u64,
    /// Runs at a time.
    pub jobs: usize,
    /// Failing cases kept per kind.
    pub keep: usize,
}

/// What the inputs of a command are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Input {
    Inventory,
    Plan,
    Cabling,
    Catalog,
    Model,
    Qos,
    RankFile,
    Job,
    RankTable,
    /// No file: numbers of the arguments marked `~` are mutated.
    Args,
}

impl Input {
    fn sources(self) -> &'static [&'static str] {
        match self {
            Input::Inventory => mutate::INVENTORIES,
            Input::Plan => mutate::PLANS,
            Input::Cabling => mutate::CABLING,
            Input::Catalog => &[mutate::CATALOG],
            Input::Model => mutate::MODELS,
            Input::Qos => mutate::QOS,
            Input::RankFile => &[mutate::RANK_FILE],
            Input::Job => mutate::JOBS,
            Input::RankTable => &["ranks.csv"],
            Input::Args => &[],
        }
    }
}

const PLAN: &str = mutate::EFLOPS_PLAN;
const JOB: &str = "examples/allreduce-32.job.toml";

/// The commands: the binary, what is mutated, and the arguments (`{in}`
/// the mutated file, `{out}` a fresh directory, `@path` a bundled file,
/// `~text` an argument whose numbers are mutated).
const COMMANDS: &[(&str, Input, &[&str])] = &[
    ("planner", Input::Inventory, &["check-servers", "{in}"]),
    (
        "planner",
        Input::Inventory,
        &["check-servers", "{in}", "--format", "json"],
    ),
    (
        "planner",
        Input::Inventory,
        &[
            "design",
            "{in}",
            "--out",
            "{out}/plan.json",
            "--cables",
            "{out}/cables.csv",
        ],
    ),
    (
        "planner",
        Input::Inventory,
        &[
            "design",
            "{in}",
            "--topology",
            "fat-tree",
            "--format",
            "json",
        ],
    ),
    (
        "planner",
        Input::Inventory,
        &["design", "{in}", "--out", "{out}/plan.toml"],
    ),
    ("planner", Input::Inventory, &["compare", "{in}"]),
    (
        "planner",
        Input::Inventory,
        &[
            "compare",
            "{in}",
            "--catalog",
            "@examples/data/catalog-example.toml",
        ],
    ),
    ("planner", Input::Plan, &["validate", "{in}"]),
    (
        "planner",
        Input::Plan,
        &[
            "validate",
            "{in}",
            "--cabling",
            "@examples/data/eflops-4x16.cables.csv",
        ],
    ),
    ("planner", Input::Plan, &["cables", "{in}"]),
    (
        "planner",
        Input::Plan,
        &["cables", "{in}", "--format", "table"],
    ),
    (
        "planner",
        Input::Plan,
        &["cables", "{in}", "--format", "json"],
    ),
    ("planner", Input::Plan, &["ranks", "{in}"]),
    (
        "planner",
        Input::Plan,
        &["ranks", "{in}", "--format", "json"],
    ),
    (
        "planner",
        Input::Plan,
        &["ranks", "{in}", "--format", "csv"],
    ),
    (
        "planner",
        Input::Plan,
        &["ranks", "{in}", "--format", "rankfile"],
    ),
    (
        "planner",
        Input::Plan,
        &["ranks", "{in}", "--format", "hostfile"],
    ),
    (
        "planner",
        Input::Plan,
        &["ranks", "{in}", "--algorithm", "ring", "--format", "csv"],
    ),
    (
        "planner",
        Input::Plan,
        &["ranks", "{in}", "--algorithm", "hd", "--format", "rankfile"],
    ),
    (
        "planner",
        Input::Plan,
        &["verify-ranks", "{in}", "--algorithm", "hdrm"],
    ),
    (
        "planner",
        Input::Plan,
        &["render", "{in}", "--vendor", "comware", "--out", "{out}/r"],
    ),
    (
        "planner",
        Input::Plan,
        &["render", "{in}", "--vendor", "sonic", "--out", "{out}/r"],
    ),
    (
        "planner",
        Input::Plan,
        &["render", "{in}", "--vendor", "eos", "--out", "{out}/r"],
    ),
    (
        "planner",
        Input::Plan,
        &["render", "{in}", "--vendor", "nvue", "--out", "{out}/r"],
    ),
    (
        "planner",
        Input::Plan,
        &["render", "{in}", "--hosts", "--out", "{out}/r"],
    ),
    ("planner", Input::Plan, &["check-qos", "{in}"]),
    (
        "planner",
        Input::Plan,
        &["export", "{in}", "--to", "labels"],
    ),
    ("planner", Input::Plan, &["export", "{in}", "--to", "kueue"]),
    (
        "planner",
        Input::Plan,
        &["export", "{in}", "--to", "volcano"],
    ),
    (
        "planner",
        Input::Plan,
        &["export", "{in}", "--to", "slurm-tree"],
    ),
    (
        "planner",
        Input::Plan,
        &["export", "{in}", "--to", "slurm-block", "--format", "json"],
    ),
    (
        "planner",
        Input::Plan,
        &[
            "cost",
            "{in}",
            "--catalog",
            "@examples/data/catalog-example.toml",
        ],
    ),
    ("planner", Input::Plan, &["simulate", "{in}"]),
    (
        "planner",
        Input::Plan,
        &["iteration", "{in}", "--model", "resnet50"],
    ),
    ("provisioner", Input::Plan, &["nodes", "{in}"]),
    (
        "provisioner",
        Input::Plan,
        &[
            "submit",
            "@examples/allreduce-32.job.toml",
            "--plan",
            "{in}",
            "--dry-run",
            "--offline",
        ],
    ),
    (
        "planner",
        Input::Cabling,
        &[
            "validate",
            "@examples/data/eflops-4x16.plan.json",
            "--cabling",
            "{in}",
        ],
    ),
    (
        "planner",
        Input::Catalog,
        &[
            "cost",
            "@examples/data/eflops-4x16.plan.json",
            "--catalog",
            "{in}",
        ],
    ),
    (
        "planner",
        Input::Catalog,
        &["purchase", "--gpus", "512", "--catalog", "{in}"],
    ),
    (
        "planner",
        Input::Catalog,
        &[
            "compare",
            "@topologies/eflops-4x16.toml",
            "--catalog",
            "{in}",
        ],
    ),
    (
        "planner",
        Input::Model,
        &[
            "iteration",
            "@examples/data/eflops-4x16.plan.json",
            "--model",
            "{in}",
        ],
    ),
    (
        "planner",
        Input::Qos,
        &[
            "render",
            "@examples/data/eflops-4x16.plan.json",
            "--vendor",
            "sonic",
            "--qos",
            "{in}",
            "--out",
            "{out}/r",
        ],
    ),
    (
        "planner",
        Input::Qos,
        &[
            "check-qos",
            "@examples/data/eflops-4x16.plan.json",
            "--qos",
            "{in}",
        ],
    ),
    (
        "planner",
        Input::RankFile,
        &[
            "verify-ranks",
            "@examples/data/eflops-4x16.plan.json",
            "--ranks-file",
            "{in}",
        ],
    ),
    (
        "provisioner",
        Input::Job,
        &[
            "submit",
            "{in}",
            "--plan",
            "@examples/data/eflops-4x16.plan.json",
            "--dry-run",
            "--offline",
        ],
    ),
    (
        "provisioner",
        Input::RankTable,
        &[
            "rank-check",
            "--table",
            "{in}",
            "--node",
            "node01",
            "--rank",
            "0",
        ],
    ),
    (
        "planner",
        Input::Args,
        &["design", "--bigraph", "~2x8", "--server-sub-nodes", "~1"],
    ),
    (
        "planner",
        Input::Args,
        &["design", "--fat-tree", "~tiers=2,sub-nodes=64,ports=16"],
    ),
    (
        "planner",
        Input::Args,
        &["compare", "--fat-tree", "~tiers=2,sub-nodes=256,ports=32"],
    ),
    (
        "planner",
        Input::Args,
        &["simulate", "--scale", "~16", "--size", "~1MiB"],
    ),
    (
        "planner",
        Input::Args,
        &[
            "purchase",
            "--gpus",
            "~64",
            "--catalog",
            "@examples/data/catalog-example.toml",
        ],
    ),
    (
        "planner",
        Input::Args,
        &[
            "iteration",
            "--bigraph",
            "~4x8",
            "--model",
            "resnet50",
            "--ranks",
            "~16",
        ],
    ),
    (
        "planner",
        Input::Args,
        &[
            "ranks",
            "@examples/data/eflops-4x16.plan.json",
            "--ranks",
            "~16",
            "--algorithm",
            "hd",
        ],
    ),
];

/// How a run ended, as the campaign counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Exit 0.
    Ok,
    /// Exit 2 (a refusal or a failed check).
    Refused,
    /// Exit 101 or "panicked at" on stderr.
    Panic,
    /// Killed at the time limit (or slower than it).
    OverTime,
    /// Over the memory limit (allocation failure, or a peak above it).
    OverMemory,
    /// Any other exit: 1, a signal.
    BadExit,
    /// Exit 2 with an `error:` that does not name the mutated file (every
    /// refusal must say which file to fix).
    UnnamedRefusal,
    /// `.planner-*.tmp` files left behind by a run that ended by itself.
    LeftoverTemp,
}

impl Kind {
    /// True for what the campaign must never see.
    pub fn is_failure(self) -> bool {
        !matches!(self, Kind::Ok | Kind::Refused)
    }

    fn as_str(self) -> &'static str {
        match self {
            Kind::Ok => "exit 0",
            Kind::Refused => "exit 2",
            Kind::Panic => "panic",
            Kind::OverTime => "over the time limit",
            Kind::OverMemory => "over the memory limit",
            Kind::BadExit => "other exit",
            Kind::UnnamedRefusal => "refusal without the file",
            Kind::LeftoverTemp => "left temporary files",
        }
    }
}

/// One run.
#[derive(Debug, Clone)]
pub struct Run {
    /// The case index.
    pub case: u64,
    /// `planner render --vendor nvue`: the command without its files.
    pub command: String,
    /// The full command line (paths under the output directory).
    pub line: String,
    /// How it ended.
    pub kind: Kind,
    /// Exit code or signal, as text.
    pub status: String,
    /// Wall time.
    pub elapsed: Duration,
    /// Peak resident memory seen, bytes.
    pub peak: u64,
    /// The first lines of stderr.
    pub stderr: String,
}

/// What a campaign found.
#[derive(Debug, Default)]
pub struct Summary {
    /// Every run, in case order.
    pub runs: Vec<Run>,
}

impl Summary {
    /// Runs of `kind`.
    pub fn count(&self, kind: Kind) -> usize {
        self.runs.iter().filter(|r| r.kind == kind).count()
    }

    /// Runs that failed.
    pub fn failures(&self) -> impl Iterator<Item = &Run> {
        self.runs.iter().filter(|r| r.kind.is_failure())
    }

    /// The summary as text.
    pub fn render(&self, config: &Config) -> String {
        let mut out = String::new();
        let slowest = self
            .runs
            .iter()
            .map(|r| r.elapsed)
            .max()
            .unwrap_or_default();
        let peak = self.runs.iter().map(|r| r.peak).max().unwrap_or_default();
        let _ = writeln!(
            out,
            "fuzz campaign: {} cases, seed {}, time limit {:?}, memory limit {} MiB",
            self.runs.len(),
            config.seed,
            config.time_limit,
            config.memory_limit >> 20
        );
        for kind in [
            Kind::Ok,
            Kind::Refused,
            Kind::Panic,
            Kind::OverTime,
            Kind::OverMemory,
            Kind::BadExit,
            Kind::UnnamedRefusal,
            Kind::LeftoverTemp,
        ] {
            let _ = writeln!(out, "  {:<24} {}", kind.as_str(), self.count(kind));
        }
        let _ = writeln!(
            out,
            "  slowest run {:.2} s, largest peak resident memory {} MiB",
            slowest.as_secs_f64(),
            peak >> 20
        );
        let mut per: BTreeMap<(&str, Kind), usize> = BTreeMap::new();
        for r in self.failures() {
            *per.entry((r.command.as_str(), r.kind)).or_default() += 1;
        }
        if !per.is_empty() {
            let _ = writeln!(out, "\nFailures by command:");
            for ((command, kind), n) in per {
                let _ = writeln!(out, "  {n:>6}  {:<22} {command}", kind.as_str());
            }
        }
        out
    }
}

/// Runs the campaign: every case, the summary in `out/summary.txt`, each
/// kept failure in `out/failures/<case>-<kind>/` (the command, the input,
/// stderr, the mutations).
pub fn run(config: &Config) -> std::io::Result<Summary> {
    std::fs::create_dir_all(config.out.join("work"))?;
    std::fs::create_dir_all(config.out.join("failures"))?;
    let rank_table = rank_table(config);
    let next = AtomicU64::new(0);
    let runs = Mutex::new(Vec::new());
    let kept = Mutex::new(BTreeMap::<Kind, usize>::new());
    std::thread::scope(|scope| {
        for worker in 0..config.jobs.max(1) {
            let (next, runs, kept, rank_table) = (&next, &runs, &kept, &rank_table);
            scope.spawn(move || {
                let dir = config.out.join("work").join(worker.to_string());
                loop {
                    let case = next.fetch_add(1, Ordering::Relaxed);
                    if case >= config.cases {
                        break;
                    }
                    let _ = std::fs::remove_dir_all(&dir);
                    if std::fs::create_dir_all(&dir).is_err() {
                        break;
                    }
                    let Some((run, input)) = run_case(config, case, &dir, rank_table.as_deref())
                    else {
                        continue;
                    };
                    if run.kind.is_failure() {
                        let mut k = kept.lock().unwrap();
                        let n = k.entry(run.kind).or_default();
                        if *n < config.keep {
                            *n += 1;
                            let _ = keep(config, &run, &input, &dir);
                        }
                    }
                    runs.lock().unwrap().push(run);
                }
                let _ = std::fs::remove_dir_all(&dir);
            });
        }
    });
    let mut runs = runs.into_inner().unwrap();
    runs.sort_by_key(|r| r.case);
    let summary = Summary { runs };
    let mut text = summary.render(config);
    text.push_str("\nEach kept failure is in failures/<case>-<kind>/: command.sh replays it from the workspace root.\n");
    std::fs::write(config.out.join("summary.txt"), text)?;
    let mut list = String::new();
    for r in summary.failures() {
        let _ = writeln!(
            list,
            "{}\t{}\t{}\t{}",
            r.case,
            r.kind.as_str(),
            r.status,
            r.line
        );
    }
    std::fs::write(config.out.join("failures.tsv"), list)?;
    let _ = std::fs::remove_dir_all(config.out.join("work"));
    Ok(summary)
}

/// The mutated input of a case: its file name in the run's directory, the
/// text, the mutations and the source it came from.
struct CaseInput {
    name: String,
    text: String,
    source: String,
    original: String,
    steps: Vec<String>,
}

/// `ranks.csv` as `provisioner submit` writes it for the bundled job.
fn rank_table(config: &Config) -> Option<String> {
    let provisioner = config.provisioner.as_ref()?;
    let out = Command::new(provisioner)
        .args(["submit", JOB, "--plan", PLAN, "--dry-run", "--offline"])
        .current_dir(&config.root)
        .output()
        .ok()?;
    let yaml = String::from_utf8_lossy(&out.stdout);
    let mut lines = yaml.lines().skip_while(|l| l.trim() != "ranks.csv: |");
    let head = lines.next()?;
    let indent = head.len() - head.trim_start().len() + 2;
    let mut table = String::new();
    for l in lines {
        if l.len() < indent || !l[..indent].trim().is_empty() {
            break;
        }
        table.push_str(&l[indent..]);
        table.push('\n');
    }
    (!table.is_empty()).then_some(table)
}

fn run_case(
    config: &Config,
    case: u64,
    dir: &Path,
    rank_table: Option<&str>,
) -> Option<(Run, CaseInput)> {
    let mut rng = Rng::new(config.seed ^ case.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let (bin, input, args) = *rng.pick(COMMANDS);
    let binary = match bin {
        "planner" => config.planner.clone(),
        _ => config.provisioner.clone()?,
    };
    let mut case_input = None;
    if input != Input::Args {
        let source = *rng.pick(input.sources());
        let original = match input {
            Input::RankTable => rank_table?.to_string(),
            _ => std::fs::read_to_string(config.root.join(source)).ok()?,
        };
        let format = Format::of(Path::new(source));
        let m = mutate::mutate(&original, format, Scale::Any, &mut rng);
        let base = Path::new(source).file_name()?.to_string_lossy().to_string();
        case_input = Some(CaseInput {
            name: format!("fuzz-{case}-{base}"),
            text: m.text,
            source: source.to_string(),
            original,
            steps: m.steps,
        });
    }
    let mut argv: Vec<String> = Vec::new();
    let mut arg_steps = Vec::new();
    let out_dir = dir.join("out");
    let _ = std::fs::create_dir_all(&out_dir);
    for a in args {
        let mut a = a.to_string();
        if let Some(rest) = a.strip_prefix('~') {
            a = rest.to_string();
            if rng.chance(2, 3)
                && let Some((new, step)) = mutate::mutate_number(&a, Scale::Any, &mut rng)
            {
                arg_steps.push(format!("argument {a:?} -> {new:?} ({step})"));
                a = new;
            }
        } else if let Some(rest) = a.strip_prefix('@') {
            a = config.root.join(rest).display().to_string();
        }
        if let Some(ci) = &case_input {
            a = a.replace("{in}", &dir.join(&ci.name).display().to_string());
        }
        a = a.replace("{out}", &out_dir.display().to_string());
        argv.push(a);
    }
    let command = std::iter::once(bin.to_string())
        .chain(
            args.iter()
                .filter(|a| !a.contains('{') && !a.starts_with('@'))
                .map(|a| a.trim_start_matches('~').to_string()),
        )
        .collect::<Vec<_>>()
        .join(" ");
    let case_input = match case_input {
        Some(ci) => {
            std::fs::write(dir.join(&ci.name), &ci.text).ok()?;
            ci
        }
        None => CaseInput {
            name: String::new(),
            text: String::new(),
            source: String::new(),
            original: String::new(),
            steps: arg_steps,
        },
    };
    let run = execute(
        config,
        case,
        &binary,
        &argv,
        &command,
        dir,
        &out_dir,
        &case_input,
    );
    Some((run, case_input))
}

#[allow(clippy::too_many_arguments)]
fn execute(
    config: &Config,
    case: u64,
    binary: &Path,
    argv: &[String],
    command: &str,
    dir: &Path,
    out_dir: &Path,
    input: &CaseInput,
) -> Run {
    let stderr_path = dir.join("stderr");
    let line = std::iter::once(binary.display().to_string())
        .chain(argv.iter().map(|a| shell_quote(a)))
        .collect::<Vec<_>>()
        .join(" ");
    let mut run = Run {
        case,
        command: command.to_string(),
        line,
        kind: Kind::BadExit,
        status: String::new(),
        elapsed: Duration::ZERO,
        peak: 0,
        stderr: String::new(),
    };
    let spawned = std::fs::File::create(&stderr_path).and_then(|stderr| {
        Command::new("prlimit")
            .arg(format!("--as={}", config.memory_limit))
            .arg("--")
            .arg(binary)
            .args(argv)
            .current_dir(dir)
            .env("MALLOC_ARENA_MAX", "2")
            .env("RUST_BACKTRACE", "0")
            .env_remove("KUBECONFIG")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env_remove("NODE_NAME")
            .env("HOME", dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
    });
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            run.status = format!("cannot start: {e}");
            return run;
        }
    };
    let start = Instant::now();
    let status_file = format!("/proc/{}/status", child.id());
    let mut killed = false;
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break Some(status);
        }
        run.peak = run.peak.max(peak_rss(&status_file));
        if start.elapsed() > config.time_limit {
            let _ = child.kill();
            killed = true;
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    run.elapsed = start.elapsed();
    let stderr = std::fs::read(&stderr_path).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&stderr[..stderr.len().min(64 << 10)]).to_string();
    run.stderr = stderr.lines().take(20).collect::<Vec<_>>().join("\n");
    let code = status.and_then(|s| s.code());
    run.status = match (code, status) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => {
            use std::os::unix::process::ExitStatusExt as _;
            format!("signal {}", s.signal().unwrap_or(0))
        }
        (None, None) => "unknown".to_string(),
    };
    run.kind = if killed || run.elapsed > config.time_limit {
        Kind::OverTime
    } else if code == Some(101) || stderr.contains("panicked at") {
        Kind::Panic
    } else if stderr.contains("memory allocation of") || run.peak > config.memory_limit {
        Kind::OverMemory
    } else {
        match code {
            Some(0) => Kind::Ok,
            Some(2) => Kind::Refused,
            _ => Kind::BadExit,
        }
    };
    if run.kind == Kind::Refused
        && !input.name.is_empty()
        && stderr.starts_with("error:")
        && !stderr.contains(&input.name)
    {
        run.kind = Kind::UnnamedRefusal;
    }
    if matches!(run.kind, Kind::Ok | Kind::Refused)
        && (has_temp_files(out_dir) || has_temp_files(dir))
    {
        run.kind = Kind::LeftoverTemp;
    }
    run
}

/// VmHWM of a running process, bytes (0 once it is gone).
fn peak_rss(status_file: &str) -> u64 {
    let Ok(text) = std::fs::read_to_string(status_file) else {
        return 0;
    };
    text.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn has_temp_files(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|e| {
        let name = e.file_name().to_string_lossy().to_string();
        (name.starts_with(".planner-") && name.ends_with(".tmp"))
            || (e.file_type().is_ok_and(|t| t.is_dir()) && has_temp_files(&e.path()))
    })
}

/// Single-quotes `s` for a POSIX shell when it needs it.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=,:@+%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Keeps a failing case: its input, the command (with the input beside
/// it), stderr and the mutations.
fn keep(config: &Config, run: &Run, input: &CaseInput, dir: &Path) -> std::io::Result<()> {
    let slug = run.kind.as_str().replace(' ', "-");
    let to = config
        .out
        .join("failures")
        .join(format!("{:08}-{slug}", run.case));
    std::fs::create_dir_all(&to)?;
    let mut line = run.line.clone();
    if !input.name.is_empty() {
        std::fs::write(to.join(&input.name), &input.text)?;
        line = line.replace(
            &dir.join(&input.name).display().to_string(),
            &to.join(&input.name).display().to_string(),
        );
    }
    line = line.replace(&dir.join("out").display().to_string(), "\"$(mktemp -d)\"");
    std::fs::write(
        to.join("command.sh"),
        format!(
            "#!/bin/sh\n# case {} of seed {}: {} ({})\n{line}\n",
            run.case,
            config.seed,
            run.kind.as_str(),
            run.status
        ),
    )?;
    std::fs::write(to.join("stderr.txt"), &run.stderr)?;
    let mut what = format!("source: {}\nmutations:\n", input.source);
    for s in &input.steps {
        let _ = writeln!(what, "  {s}");
    }
    if !input.name.is_empty() {
        what.push_str("\ndiff:\n");
        what.push_str(&mutate::diff(&input.original, &input.text));
    }
    std::fs::write(to.join("mutations.txt"), what)
}
