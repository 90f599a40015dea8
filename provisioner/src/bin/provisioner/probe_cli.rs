//! The `provisioner probe` subcommand of the binary: flags and torchrun's environment in, the collective engine's run, its report out.

use std::path::PathBuf;
use std::time::Duration;

use clap::ValueEnum;

use provisioner::probe;

use super::{BadInput, Failure, Format, Result, env_number, json, print, read};

/// The flags of `provisioner probe`.
#[derive(Debug, clap::Args)]
pub struct ProbeArgs {
    /// ring, hd or hdrm [default: the rank table's, else hd]. hd and hdrm
    /// run the same halving-doubling schedule; HDRM's difference is the
    /// rank table (--ranks-file from `planner ranks --algorithm hdrm`).
    #[arg(long)]
    algorithm: Option<String>,
    /// Bytes per rank: a size (1MiB), a list (8B,1MiB) or a doubling range
    /// (8B..256MiB); units B; KB, MB, GB = 10^3, 10^6, 10^9 bytes; KiB,
    /// MiB, GiB (or K, M, G) = 2^10, 2^20, 2^30 bytes.
    #[arg(long, default_value = "8B..128MiB")]
    size: String,
    /// Untimed iterations per size.
    #[arg(long, default_value_t = 5)]
    warmup: usize,
    /// Timed iterations per size.
    #[arg(long, default_value_t = 20)]
    iters: usize,
    /// This rank [default: $RANK].
    #[arg(long)]
    rank: Option<usize>,
    /// Ranks in the run [default: $WORLD_SIZE, or the rank table's].
    #[arg(long)]
    world_size: Option<usize>,
    /// Rank 0's host [default: $MASTER_ADDR].
    #[arg(long)]
    master_addr: Option<String>,
    /// Rank 0's port [default: $MASTER_PORT].
    #[arg(long)]
    master_port: Option<u16>,
    /// Host file: CSV `rank,address` (address `ip` or `ip:port`) or one
    /// address per line in rank order.
    #[arg(long, conflicts_with_all = ["master_addr", "master_port", "ranks_file"])]
    hosts: Option<PathBuf>,
    /// Rank table from `planner ranks --format csv|json`; each rank gets
    /// its sub-node's IP address from --plan.
    #[arg(long, requires = "plan", conflicts_with_all = ["master_addr", "master_port"])]
    ranks_file: Option<PathBuf>,
    /// The plan the rank table is for.
    #[arg(long, requires = "ranks_file")]
    plan: Option<PathBuf>,
    /// Port for addresses that give none (host file, plan addresses).
    #[arg(long, default_value_t = 29500)]
    port: u16,
    /// Bytes received before they are summed, so additions overlap the
    /// transfer (chosen by measurement, docs/probe.md).
    #[arg(long, default_value = "64KiB")]
    segment: String,
    /// Seconds a connection may move no data before its peer is declared
    /// dead.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Seconds to reach every peer (and for every peer to connect).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    connect_timeout: u64,
    /// Which iterations to check.
    #[arg(long, value_enum, default_value_t = CheckArg::Every)]
    check: CheckArg,
    /// Per-step timings (phase, partner, bytes, us) after every size.
    #[arg(long)]
    steps: bool,
    /// Every rank prints its report, not only rank 0.
    #[arg(long)]
    all_ranks: bool,
    /// Stop every rank after every step; rank 0 reports the step on this
    /// Unix socket and waits for `go` (give it to every rank).
    #[arg(long)]
    step_sync: Option<PathBuf>,
    /// Instead of an allreduce: the burn-in, rounds of streams between
    /// ranks that load every directed inter-switch link of the plan once;
    /// rank 0 names the cables below --threshold of their rate (exit code
    /// 1 when it names one). Needs --ranks-file and --plan (each rank's
    /// sub-node).
    #[arg(long, requires = "ranks_file")]
    burn_in: bool,
    /// Burn-in: seconds each stream runs at its expected rate.
    #[arg(long, default_value_t = 2.0, requires = "burn_in")]
    seconds: f64,
    /// Burn-in: share of the expected rate below which a stream is slow.
    #[arg(long, default_value_t = 0.7, requires = "burn_in")]
    threshold: f64,
    /// Burn-in: most streams at once.
    #[arg(long, default_value_t = 16, requires = "burn_in")]
    max_flows: usize,
    /// Burn-in: the rate one stream should reach, Gbit/s [default: the
    /// plan's speed of the slowest cable on its path]. One TCP stream may
    /// not fill a 100 Gbps NIC: give what one reaches on a healthy pair.
    #[arg(long, requires = "burn_in")]
    expect_gbps: Option<f64>,
    /// File that holds the job secret, the same on every rank; it
    /// authenticates every connection and never goes on the wire
    /// [default: $PROBE_TOKEN].
    #[arg(long)]
    token_file: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// The job secret from --token-file or $PROBE_TOKEN. Without either, a
/// rank of a submitted job (`EFLOPS_PROBE_AUTH=required`, which
/// `provisioner submit` sets) is refused; a rank run by hand runs
/// unauthenticated, with a warning on stderr (docs/probe.md).
fn secret(a: &ProbeArgs) -> Result<Option<probe::Secret>> {
    use probe::auth::{AUTH_ENV, ENV, REQUIRED};
    let got = match &a.token_file {
        Some(f) => probe::Secret::from_file(f),
        None => match std::env::var_os(ENV) {
            Some(t) => probe::Secret::new(t.as_encoded_bytes(), ENV),
            None if std::env::var_os(AUTH_ENV).is_some_and(|v| v == REQUIRED) => {
                return Err(BadInput(format!(
                    "{AUTH_ENV}={REQUIRED} says this rank belongs to a job submitted with a job secret, but {ENV} is not set: give every rank the job's Secret <job>-probe-token as {ENV} (mpirun: -x {ENV}), or --token-file FILE"
                ))
                .into());
            }
            None if std::env::var_os(AUTH_ENV).is_some() => {
                return Err(BadInput(format!(
                    "{AUTH_ENV} is set to something other than {REQUIRED}: unset it, or set it to {REQUIRED} with {ENV}"
                ))
                .into());
            }
            None => {
                eprintln!(
                    "warning: no job secret, so peers are not authenticated: give --token-file FILE or set {} to the same secret on every rank (`head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n'` makes one)",
                    probe::auth::ENV
                );
                return Ok(None);
            }
        },
    };
    Ok(Some(got.map_err(BadInput)?))
}

/// The bootstrap, authenticated when there is a job secret.
fn with_secret(boot: probe::Bootstrap, secret: Option<probe::Secret>) -> probe::Bootstrap {
    match secret {
        Some(s) => boot.with_secret(s),
        None => boot,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CheckArg {
    /// Every iteration.
    Every,
    /// The last iteration of every size.
    Last,
    /// None.
    Off,
}

/// `provisioner probe`: this rank's bootstrap and settings from the flags
/// and torchrun's environment, the run, and the report.
pub fn run(a: ProbeArgs) -> Result<()> {
    let rank = match a.rank {
        Some(r) => Some(r),
        None => env_number("RANK")?,
    };
    let world = match a.world_size {
        Some(w) => Some(w),
        None => env_number("WORLD_SIZE")?,
    };
    let need_rank = || {
        rank.ok_or_else(|| {
            BadInput("no rank: give --rank or set RANK (torchrun's convention)".to_string())
        })
    };
    let secret = secret(&a)?;
    if a.burn_in {
        return run_burn_in(&a, need_rank()?, world, secret);
    }
    let mut table_algorithm = None;
    let boot = if let Some(hosts) = &a.hosts {
        let file = hosts.display().to_string();
        let addrs = probe::bootstrap::read_hosts(&read(hosts)?, &file, a.port)?;
        probe::Bootstrap::table(need_rank()?, addrs)
    } else if let (Some(table), Some(plan)) = (&a.ranks_file, &a.plan) {
        let p = crate::load_plan(plan)?;
        let (alg, addrs) = probe::bootstrap::read_plan_table(
            &read(table)?,
            &table.display().to_string(),
            &p,
            a.port,
        )?;
        table_algorithm = alg;
        probe::Bootstrap::table(need_rank()?, addrs)
    } else {
        let addr = match &a.master_addr {
            Some(m) => m.clone(),
            None => std::env::var("MASTER_ADDR").map_err(|_| {
                BadInput("no rank 0 address: give --master-addr or set MASTER_ADDR (torchrun), or give --hosts".to_string())
            })?,
        };
        let port = match a.master_port {
            Some(p) => p,
            None => env_number("MASTER_PORT")?
                .ok_or_else(|| {
                    BadInput(
                        "no rank 0 port: give --master-port or set MASTER_PORT (torchrun)"
                            .to_string(),
                    )
                })?
                .try_into()
                .map_err(|_| BadInput("MASTER_PORT is not a port (0 to 65535)".to_string()))?,
        };
        let world = world.ok_or_else(|| {
            BadInput("no world size: give --world-size or set WORLD_SIZE (torchrun)".to_string())
        })?;
        let master = if addr.contains(':') && !addr.starts_with('[') {
            format!("[{addr}]:{port}")
        } else {
            format!("{addr}:{port}")
        };
        probe::Bootstrap::master(need_rank()?, world, master)
    };
    let boot = with_secret(boot, secret);
    if let Some(w) = world.filter(|&w| w != boot.world) {
        return Err(Failure::from(probe::Error::parameter(
            "world-size",
            format!("{w}, but the rank table has {} ranks", boot.world),
        )));
    }
    let algorithm = match (&a.algorithm, table_algorithm) {
        (Some(name), table) => {
            let alg = probe::schedule::algorithm(name)?;
            if let Some(t) = table.filter(|&t| t != alg) {
                return Err(Failure::from(probe::Error::parameter(
                    "algorithm",
                    format!(
                        "{} but the rank table is for {}; give the table's algorithm or a table made for {}",
                        alg.as_str(),
                        t.as_str(),
                        alg.as_str()
                    ),
                )));
            }
            alg
        }
        (None, Some(t)) => t,
        (None, None) => probe::Algorithm::Hd,
    };
    let segment =
        probe::parse_bytes(&a.segment).map_err(|m| probe::Error::parameter("segment", m))?;
    let config = probe::Config {
        algorithm,
        sizes: probe::parse_sizes(&a.size)?,
        warmup: a.warmup,
        iters: a.iters,
        check: match a.check {
            CheckArg::Every => probe::Check::Every,
            CheckArg::Last => probe::Check::Last,
            CheckArg::Off => probe::Check::Off,
        },
        segment: usize::try_from(segment).unwrap_or(usize::MAX),
        timeouts: probe::Timeouts {
            connect: Duration::from_secs(a.connect_timeout),
            idle: Duration::from_secs(a.timeout),
        },
        step_barrier: a.step_sync.is_some(),
    };
    let report = match &a.step_sync {
        Some(path) => {
            let mut hook =
                probe::stepsync::UnixStepSync::connect(path, boot.rank).map_err(|e| {
                    BadInput(format!(
                        "cannot connect to the step-sync socket {}: {e}",
                        path.display()
                    ))
                })?;
            probe::run(&boot, &config, &mut hook)
        }
        None => probe::run(&boot, &config, &mut probe::NoHook),
    }
    .map_err(|e| Failure::from(e).context(format!("rank {} of {}", boot.rank, boot.world)))?;
    if report.rank == 0 || a.all_ranks {
        print(&match a.format {
            Format::Json => json(&report)?,
            Format::Table => probe::report::render(&report, a.steps),
        })?;
    }
    if report
        .results
        .iter()
        .any(|r| r.wrong.is_some_and(|w| w > 0))
    {
        return Err(Failure::from(anyhow::anyhow!(
            "rank {}: the data check found wrong elements (#wrong)",
            report.rank
        )));
    }
    Ok(())
}

/// `provisioner probe --burn-in`: every rank a sub-node of the plan, from
/// the rank table.
fn run_burn_in(
    a: &ProbeArgs,
    rank: usize,
    world: Option<usize>,
    secret: Option<probe::Secret>,
) -> Result<()> {
    let (Some(table), Some(plan)) = (&a.ranks_file, &a.plan) else {
        return Err(BadInput("--burn-in needs --ranks-file and --plan".to_string()).into());
    };
    let p = crate::load_plan(plan)?;
    let table_text = read(table)?;
    let table_name = table.display().to_string();
    let (_, addrs) = probe::bootstrap::read_plan_table(&table_text, &table_name, &p, a.port)?;
    let (_, sub_nodes) = planner::ranks::format::read_rank_file(&table_text, &table_name, &p)?;
    let boot = with_secret(probe::Bootstrap::table(rank, addrs), secret);
    if let Some(w) = world.filter(|&w| w != boot.world) {
        return Err(Failure::from(probe::Error::parameter(
            "world-size",
            format!("{w}, but the rank table has {} ranks", boot.world),
        )));
    }
    let lab = planner::network::Lab::of(&p, p.source())?;
    let config = probe::burnin::Config {
        seconds: a.seconds,
        threshold: a.threshold,
        max_flows: a.max_flows,
        expect_gbps: a.expect_gbps,
        timeouts: probe::Timeouts {
            connect: Duration::from_secs(a.connect_timeout),
            idle: Duration::from_secs(a.timeout),
        },
    };
    let report = probe::burnin::run(&boot, &lab, &sub_nodes, &config)
        .map_err(|e| Failure::from(e).context(format!("rank {} of {}", boot.rank, boot.world)))?;
    let Some(report) = report else {
        return Ok(());
    };
    print(&match a.format {
        Format::Json => json(&report)?,
        Format::Table => planner::network::burnin::render(&report),
    })?;
    if !report.slow_cables.is_empty() {
        return Err(Failure::from(anyhow::anyhow!(
            "the burn-in found {} slow cable(s): {}",
            report.slow_cables.len(),
            report
                .slow_cables
                .iter()
                .map(|c| c.cable.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(())
}
