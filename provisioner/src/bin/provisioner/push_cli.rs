//! The `provisioner push` subcommands of the binary: flags in, the
//! library's push calls, tables or JSON out. Exit codes: 0 when every
//! switch is done, 2 for bad input or a switch that refused (identity,
//! lock, rejected candidate, failed verification), 1 for failures on the
//! way (lost connection, expired timer).

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};

use planner::text::Table;
use provisioner::push::journal::{self, Journal};
use provisioner::push::rollout::Policy;
use provisioner::push::run::{self, Options, Report};
use provisioner::push::{PushError, connect, devices, ops};

use super::{Format, Result, runtime, show};

const DEFAULT_JOURNAL: &str = "push-journal.json";

/// `provisioner push ...`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct PushArgs {
    #[command(subcommand)]
    command: Option<PushCommand>,
    #[command(flatten)]
    run: RunArgs,
}

/// The flags of a push.
#[derive(Debug, Args)]
struct RunArgs {
    /// Plan JSON (or TOML) from `planner design --out`.
    #[arg(required = true)]
    plan: Option<PathBuf>,
    /// The devices file (TOML): per physical switch its address, vendor,
    /// transport and where its credentials come from.
    #[arg(long, required = true)]
    devices: Option<PathBuf>,
    /// Push only this switch (repeat for more) [default: every switch].
    #[arg(long = "switch", value_name = "NAME")]
    switches: Vec<String>,
    /// Load and diff every switch, commit nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print each switch's diff.
    #[arg(long)]
    show_diff: bool,
    /// The confirm timer: the switch goes back to its previous
    /// configuration unless the push confirms within it (30s, 5m, 1h).
    #[arg(long, default_value = "5m")]
    confirm_timer: String,
    /// How long verification keeps reading a switch that does not match
    /// the plan yet (BGP sessions coming up, routes being installed)
    /// before it fails (0s: read once).
    #[arg(long, default_value = "30s")]
    settle: String,
    /// Verify, then leave the timer running: confirm with `push confirm`.
    #[arg(long)]
    no_confirm: bool,
    /// The switch pushed alone first [default: the first one].
    #[arg(long)]
    canary: Option<String>,
    /// Most switches changing at once after the canary.
    #[arg(long, default_value_t = 4)]
    batch: usize,
    /// Largest share of a BiGraph part or fat-tree tier changing at once.
    #[arg(long, default_value_t = 0.25)]
    max_share: f64,
    /// The journal (state file) of this push.
    #[arg(long, default_value = DEFAULT_JOURNAL)]
    journal: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Print no stages as they happen (by default each switch's stage
    /// goes to stderr: a line each, or a JSON object per line with
    /// `--format json`).
    #[arg(long)]
    quiet: bool,
}

/// The flags of `push confirm` and `push rollback`.
#[derive(Debug, Args)]
struct JournalArgs {
    #[arg(long, default_value = DEFAULT_JOURNAL)]
    journal: PathBuf,
    /// Only this switch (repeat for more).
    #[arg(long = "switch", value_name = "NAME")]
    switches: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Debug, Subcommand)]
enum PushCommand {
    /// Show the journal: per switch its phase, rollback point, timer and
    /// outcome.
    Status {
        #[arg(long, default_value = DEFAULT_JOURNAL)]
        journal: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Confirm (and save) the switches whose commit waits on its timer.
    Confirm(JournalArgs),
    /// Roll back the switches the journal committed (waiting or
    /// confirmed) to their rollback points.
    Rollback(JournalArgs),
    /// Keep a switch's confirm timer (started by the push, detached).
    #[command(hide = true)]
    Watchdog {
        #[arg(long)]
        journal: PathBuf,
        #[arg(long = "switch")]
        switch: String,
    },
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn read(path: &Path) -> Result<String> {
    crate::read(path)
}

/// Runs `provisioner push ...`.
pub fn run(args: PushArgs) -> Result<()> {
    match args.command {
        Some(PushCommand::Status {
            journal: path,
            format,
        }) => {
            let j = journal::status(&path)?;
            show(format, &j, status_table)
        }
        Some(PushCommand::Confirm(a)) => act(ops::confirm(&a.journal, &a.switches), a.format),
        Some(PushCommand::Rollback(a)) => act(ops::rollback(&a.journal, &a.switches), a.format),
        Some(PushCommand::Watchdog {
            journal: path,
            switch,
        }) => {
            let w = runtime()?.block_on(ops::watchdog(&path, &switch))?;
            eprintln!("watchdog {switch}: {}", serde_json::to_string(&w)?);
            Ok(())
        }
        None => push(args.run),
    }
}

fn push(a: RunArgs) -> Result<()> {
    let (Some(plan_path), Some(devices_path)) = (a.plan, a.devices) else {
        return Err(crate::BadInput("give PLAN and --devices DEVICES.toml".to_string()).into());
    };
    let timer = connect::confirm_timer(&a.confirm_timer)
        .map_err(|m| planner::Error::parameter("confirm-timer", m))?;
    let settle = connect::seconds(&a.settle)
        .and_then(|s| {
            if s <= 3600 {
                Ok(Duration::from_secs(s))
            } else {
                Err(format!("{s} s is longer than the hour settle allows"))
            }
        })
        .map_err(|m| planner::Error::parameter("settle", m))?;
    let (plan, plan_file) = crate::load_plan_file(&plan_path)?;
    let dev_text = read(&devices_path)?;
    let dir = devices_path.parent().unwrap_or(Path::new("."));
    let devices = devices::read(&dev_text, &devices_path.display().to_string(), dir, &plan)?;
    for w in &devices.warnings {
        eprintln!("warning: {w}");
    }
    let options = Options {
        dry_run: a.dry_run,
        timer,
        settle,
        confirm: !a.no_confirm,
        policy: Policy {
            canary: a.canary,
            batch: a.batch,
            max_share: a.max_share,
        },
        switches: a.switches,
        journal: a.journal.clone(),
        exe: std::env::current_exe()?,
        plan_file: absolute(&plan_path),
        devices_file: absolute(&devices_path),
        progress: match (a.quiet, a.format) {
            (true, _) => run::Progress::Off,
            (false, Format::Json) => run::Progress::Json,
            (false, _) => run::Progress::Text,
        },
    };
    let report = runtime()?.block_on(run::push(&plan, plan_file.bytes(), &devices, &options))?;
    let show_diff = a.show_diff;
    show(a.format, &report, |r| report_table(r, show_diff))?;
    if report.failed() {
        // The first failure's chain decides the exit code.
        let first = report.switches.iter().find_map(|s| s.error.clone());
        let bad = report
            .switches
            .iter()
            .any(|s| s.error.is_some() && s.bad_input);
        let msg = format!(
            "the push stopped: {}; the journal is {}",
            first.unwrap_or_else(|| "a switch failed".to_string()),
            report.journal
        );
        return Err(if bad {
            crate::BadInput(msg).into()
        } else {
            anyhow::anyhow!(msg).into()
        });
    }
    Ok(())
}

/// Runs `push confirm` or `push rollback` and prints what each switch did.
fn act(
    work: impl std::future::Future<Output = Result<Vec<ops::Action>, PushError>>,
    format: Format,
) -> Result<()> {
    let actions = runtime()?.block_on(work)?;
    show(format, &actions, actions_table)?;
    fail_on(&actions)
}

fn fail_on(actions: &[ops::Action]) -> Result<()> {
    match actions.iter().find_map(|a| a.error.clone()) {
        Some(e) => Err(anyhow::anyhow!(e).into()),
        None => Ok(()),
    }
}

fn verification(m: &Option<Vec<String>>) -> String {
    match m {
        None => "-".to_string(),
        Some(m) if m.is_empty() => "ok".to_string(),
        Some(m) => format!("{} mismatches", m.len()),
    }
}

fn report_table(r: &Report, show_diff: bool) -> String {
    let mut t = Table::new([
        "switch",
        "vendor",
        "batch",
        "diff",
        "phase",
        "verification",
        "seconds",
    ])
    .right(&[2, 3, 6]);
    for s in &r.switches {
        t.row([
            s.switch.clone(),
            s.vendor.clone(),
            s.batch.to_string(),
            s.diff_lines
                .map_or_else(|| "-".to_string(), |n| format!("{n} lines")),
            s.phase.as_str().to_string(),
            match verification(&s.mismatches) {
                ok if ok == "ok" && s.waits_for_fabric => "ok, with the fabric".to_string(),
                v => v,
            },
            format!("{:.2}", s.seconds),
        ]);
    }
    let mut out = format!(
        "push of {}{}: {} switches in {} batches, {} in {:.2} s (journal {})\n",
        r.plan,
        if r.dry_run { " (dry run)" } else { "" },
        r.switches.len(),
        r.batches.len(),
        match r.outcome {
            journal::Outcome::Done => "done",
            journal::Outcome::Stopped => "stopped at the first failure",
            journal::Outcome::Running => "running",
            journal::Outcome::Interrupted => "interrupted",
        },
        r.seconds,
        r.journal
    );
    out += &t.render();
    let first = r.switches.iter().filter(|s| s.waits_for_fabric).count();
    if first > 0 {
        out += &format!(
            "first install: {first} switches met peers without BGP; each was verified in part of the fabric and {} once the whole fabric was checked\n",
            if r.outcome == journal::Outcome::Done {
                "confirmed"
            } else {
                "rolled back"
            }
        );
    }
    for s in &r.switches {
        for x in &s.pending {
            out += &format!("  pending: {x}\n");
        }
        if let Some(m) = &s.mismatches {
            for x in m {
                out += &format!("  mismatch: {x}\n");
            }
        }
        if let Some(e) = &s.error {
            out += &format!("  {}: {e}\n", s.switch);
        }
    }
    if show_diff {
        for s in &r.switches {
            if !s.diff.is_empty() {
                out += &format!(
                    "\ndiff of {} (- running, + candidate):\n{}",
                    s.switch, s.diff
                );
            }
        }
    }
    out
}

fn status_table(j: &Journal) -> String {
    let now = journal::now();
    let mut t = Table::new([
        "switch",
        "vendor",
        "batch",
        "phase",
        "rollback point",
        "timer",
        "verification",
    ])
    .right(&[2]);
    for r in &j.switches {
        let timer = match (r.phase.awaits_confirm(), r.deadline) {
            (true, Some(d)) if d > now => format!("{} s left", d - now),
            (true, Some(_)) => "expired".to_string(),
            _ => "-".to_string(),
        };
        t.row([
            r.switch.clone(),
            r.vendor.clone(),
            r.batch.to_string(),
            r.phase.as_str().to_string(),
            r.point.clone().unwrap_or_else(|| "-".to_string()),
            timer,
            verification(&r.mismatches),
        ]);
    }
    let mut out = format!(
        "push of {}{}: {:?}\n",
        j.plan,
        if j.dry_run { " (dry run)" } else { "" },
        j.outcome
    )
    .to_lowercase();
    out += &t.render();
    for r in &j.switches {
        if let Some(e) = &r.error {
            out += &format!("  {}: {e}\n", r.switch);
        }
    }
    out
}

fn actions_table(actions: &Vec<ops::Action>) -> String {
    if actions.is_empty() {
        return "nothing to do: no switch of the journal is in that state\n".to_string();
    }
    let mut t = Table::new(["switch", "phase", "error"]);
    for a in actions {
        t.row([
            a.switch.clone(),
            a.phase.as_str().to_string(),
            a.error.clone().unwrap_or_default(),
        ]);
    }
    t.render()
}
