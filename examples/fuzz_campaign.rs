//! The fuzz campaign of issue #13 over the real binaries: mutated
//! inventories, plans, cabling files, catalogs, models, QoS overrides,
//! rank files, job files and command-line numbers, each run of `planner` or
//! `provisioner` under a time and a memory limit.
//!
//! ```text
//!   seed ──> case i ──> command + bundled input ──> mutate ──> run under
//!                                                             prlimit --as,
//!                                                             killed at -t
//!                              summary.txt  <── count ──<  exit, stderr, peak RSS
//!                              failures/<case>-<kind>/{command.sh, input, stderr.txt}
//! ```
//!
//! ```sh
//! cargo build --profile fuzz -p planner -p provisioner --bins
//! cargo run --release -p examples --example fuzz_campaign -- \
//!     --cases 1000000 --seed 1 --out target/fuzz-1m --jobs 2 --bin-dir target/fuzz
//! ```
//!
//! (The `fuzz` profile is a release build with overflow checks on.)
//!
//! Options: `--cases N` (default 1000), `--seed S` (0), `--out DIR`
//! (`target/fuzz-campaign`), `--time-limit SECONDS` (10), `--memory-limit
//! MIB` (2048), `--jobs N` (1), `--keep N` failing cases kept per kind
//! (50), `--bin-dir DIR` where `planner` and `provisioner` are (default:
//! beside this program). Exits 1 when any run panicked, ran over a limit or
//! exited other than 0 or 2, when a refusal does not name the mutated file, or
//! when a run left temporary files. Needs `prlimit` (util-linux) and `/proc`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use testkit::campaign;

fn main() -> Result<ExitCode> {
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .canonicalize()
        .context("finding the workspace root")?;
    let exe = std::env::current_exe().context("finding this program")?;
    // target/<profile>/examples/fuzz_campaign: the binaries are in <profile>.
    let mut bin_dir = exe
        .parent()
        .and_then(|p| p.parent())
        .map(PathBuf::from)
        .unwrap_or_default();
    let mut config = campaign::Config {
        cases: 1000,
        seed: 0,
        out: root.join("target/fuzz-campaign"),
        root: root.clone(),
        planner: PathBuf::new(),
        provisioner: None,
        time_limit: Duration::from_secs(10),
        memory_limit: 2048 << 20,
        jobs: 1,
        keep: 50,
    };
    while let Some(flag) = args.next() {
        let mut value = || args.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--cases" => config.cases = value()?.parse().context("--cases: give a count")?,
            "--seed" => config.seed = value()?.parse().context("--seed: give a number")?,
            "--out" => config.out = PathBuf::from(value()?),
            "--time-limit" => {
                config.time_limit =
                    Duration::from_secs_f64(value()?.parse().context("--time-limit: give seconds")?)
            }
            "--memory-limit" => {
                config.memory_limit = value()?
                    .parse::<u64>()
                    .context("--memory-limit: give MiB")?
                    << 20
            }
            "--jobs" => config.jobs = value()?.parse().context("--jobs: give a count")?,
            "--keep" => config.keep = value()?.parse().context("--keep: give a count")?,
            "--bin-dir" => bin_dir = PathBuf::from(value()?),
            other => bail!(
                "unknown option {other}; use --cases, --seed, --out, --time-limit, --memory-limit, --jobs, --keep or --bin-dir"
            ),
        }
    }
    // Cases run in their own directories: a relative --bin-dir is made
    // absolute first (it ran nothing but "file not found" before).
    let bin_dir = std::path::absolute(&bin_dir).unwrap_or(bin_dir);
    config.planner = bin_dir.join("planner");
    if !config.planner.is_file() {
        bail!(
            "no planner binary in {}: build it first (cargo build --release --workspace) or give --bin-dir",
            bin_dir.display()
        );
    }
    let provisioner = bin_dir.join("provisioner");
    config.provisioner = provisioner.is_file().then_some(provisioner);
    if config.provisioner.is_none() {
        eprintln!(
            "note: no provisioner binary in {}; its commands are skipped",
            bin_dir.display()
        );
    }
    let summary =
        campaign::run(&config).with_context(|| format!("writing into {}", config.out.display()))?;
    print!("{}", summary.render(&config));
    println!(
        "Summary and failing cases written to {}",
        config.out.display()
    );
    Ok(if summary.failures().next().is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
