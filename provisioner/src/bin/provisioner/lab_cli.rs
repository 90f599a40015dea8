//! The `provisioner lab` subcommands of the binary: flags in, the library's lab calls, tables or JSON out.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};

use provisioner::lab::{self, build, burnin, foreign, run, state, sys::Sys};
use provisioner::probe;

use super::{Format, Result, show};

/// Flags every lab command shares.
#[derive(Debug, Clone, Args)]
pub struct Common {
    /// The lab's name (1 to 12 of a-z, 0-9): part of every namespace name
    /// (efl-NAME-s0, efl-NAME-h0, ...).
    #[arg(long, default_value = "lab")]
    name: String,
    /// Where the state file of the lab is kept.
    #[arg(long, default_value = state::DEFAULT_DIR)]
    state_dir: PathBuf,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoutingArg {
    /// The route model's static ECMP routes in every switch namespace.
    Static,
    /// FRR (BGP, BFD) in one namespace per physical switch, configured by
    /// `provisioner push` with the devices file of `lab devices`.
    Bgp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EcmpArg {
    /// Pin every flow where the route model's ECMP hash sends it.
    Model,
    /// Let the kernel hash flows over the equal-cost next hops.
    Kernel,
}

/// `provisioner lab ...`.
#[derive(Debug, Subcommand)]
pub enum LabCommand {
    /// Build the plan's fabric in network namespaces: one per switch (a
    /// VLAN half is its own) and one per sub-node, a veth pair per cable
    /// shaped to the scaled rate, the plan's addresses and static ECMP
    /// routes; with --routing bgp one namespace per physical switch
    /// running FRR and lldpd instead of static routes, configured by
    /// `provisioner push`. Needs root and iproute2 (and frr,
    /// frr-pythontools, lldpd for BGP).
    Up {
        /// Plan JSON (or TOML) from `planner design --out`.
        plan: PathBuf,
        /// Rate of the plan's fastest NIC cable in the lab (others scaled
        /// by their plan speed): 100mbit, 1gbit, ... [default: 100mbit, or
        /// less so that all NIC cables together carry at most 1.6gbit,
        /// what two cores forward without setting the pace; docs/lab.md]
        #[arg(long)]
        rate: Option<String>,
        /// How the switches route: static (the route model's ECMP routes)
        /// or bgp (FRR in every physical switch's namespace, configured by
        /// `provisioner push`; runs hash with the kernel) [default: the
        /// plan's routing intent].
        #[arg(long, value_enum)]
        routing: Option<RoutingArg>,
        /// BGP: start every switch's FRR with the plan's rendered frr.conf
        /// (a fabric that already runs the plan, as after its first
        /// install) instead of the minimal configuration.
        #[arg(long)]
        preload_config: bool,
        #[command(flatten)]
        common: Common,
    },
    /// The devices file of a BGP lab for `provisioner push --devices`: one
    /// [[device]] per physical switch, vendor frr, transport netns.
    Devices {
        /// Write it to this file instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// What a lab is made of, and what is changed in it.
    Status {
        #[command(flatten)]
        common: Common,
    },
    /// Run the collective engine on every rank (one per sub-node
    /// namespace): a timed run, then a counted run that reads every link's
    /// byte counters between steps and sets the flows on each directed
    /// inter-switch link beside what verify-ranks predicts. With
    /// --burn-in: rounds of flows that load every directed inter-switch
    /// link once, naming the links below --threshold of their rate.
    Run(Box<RunArgs>),
    /// Run a command in a sub-node's namespace under its host name (its
    /// server's name when the server has one sub-node: the Node name of
    /// `provisioner submit`'s rankfile; else SERVER-SLOT): `lab exec HOST
    /// -- COMMAND...`. With --ssh it is called as ssh is (`[OPTIONS] HOST
    /// WORDS...`, the words run with `sh -c`): Open MPI's launch agent,
    /// `--mca plm_rsh_agent "provisioner lab exec --name NAME --ssh --"`.
    /// Exits with the command's exit code.
    Exec(ExecArgs),
    /// The lab's hosts: host name, sub-node, namespace and address.
    Hosts {
        #[command(flatten)]
        common: Common,
    },
    /// Run a command (any collective engine, usually `lab exec HOST --
    /// mpirun ...`) and read every link's byte counters at the two marks
    /// its rank 0 writes on the Unix socket named in $EFLOPS_LAB_MARK;
    /// with --table, the bytes of each directed inter-switch link beside
    /// what verify-ranks predicts for that table.
    Measure(Box<MeasureArgs>),
    /// Set the rate of a cable (both ends): link:A-B.
    Degrade {
        /// The cable, link:A-B with A and B switches of the plan.
        link: String,
        /// The new rate: 25mbit, ...
        #[arg(long)]
        rate: String,
        #[command(flatten)]
        common: Common,
    },
    /// Cut a cable (both ends down; routes through it go): link:A-B.
    Cut {
        /// The cable, link:A-B.
        link: String,
        /// Keep both ends up and drop every frame instead: a link that
        /// fails silently, which only BFD (or BGP's hold timer) detects.
        #[arg(long)]
        silent: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Give a degraded or cut cable its planned rate back: link:A-B.
    Restore {
        /// The cable, link:A-B.
        link: String,
        #[command(flatten)]
        common: Common,
    },
    /// Remove everything the lab made (also after a crash: from its state
    /// file).
    Down {
        #[command(flatten)]
        common: Common,
    },
    /// One TCP stream for the burn-in (run by the lab inside a namespace).
    #[command(hide = true)]
    Stream {
        /// Receive on this address and print the rate.
        #[arg(long, conflicts_with = "connect")]
        listen: Option<String>,
        /// Send to this address.
        #[arg(long)]
        connect: Option<String>,
        /// Seconds to send, or to wait for a sender.
        #[arg(long)]
        seconds: f64,
    },
}

/// The flags of `lab run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// ring, hd or hdrm; the planner makes the rank table.
    #[arg(long, default_value = "hdrm")]
    algorithm: String,
    /// Ranks (default: every sub-node): any count the planner places,
    /// folded halving-doubling when it is not a power of two.
    #[arg(long)]
    ranks: Option<usize>,
    /// Sizes of the timed run: a size, a list or a doubling range (units
    /// as `probe --size` reads them: KB = 10^3 bytes, KiB or K = 2^10).
    #[arg(long, default_value = "1MiB,4MiB")]
    size: String,
    /// Size of the counted run (one iteration with a barrier after every
    /// step; units as --size).
    #[arg(long, default_value = "4MiB")]
    count_size: String,
    /// No timed run.
    #[arg(long)]
    no_timed: bool,
    /// No counted run.
    #[arg(long)]
    no_count: bool,
    /// Warm-up iterations of the timed run.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// Timed iterations.
    #[arg(long, default_value_t = 3)]
    iters: usize,
    /// Seed of the route model's ECMP choices (as verify-ranks --seed).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// How switches choose among equal-cost next hops [default: model for
    /// a static lab, kernel for a BGP lab (pins are static routing's)].
    #[arg(long, value_enum)]
    ecmp: Option<EcmpArg>,
    /// TCP port of every rank (and of the burn-in's streams).
    #[arg(long, default_value_t = 29500)]
    port: u16,
    /// Seconds a rank may move no data, and to connect.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Run the burn-in instead of the collective.
    #[arg(long)]
    burn_in: bool,
    /// Burn-in: seconds each flow runs.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Burn-in: share of the planned rate below which a flow is slow.
    #[arg(long, default_value_t = 0.7)]
    threshold: f64,
    /// Burn-in: most flows at once (each at its cable's rate; a 2-core
    /// machine forwards 16 at 100 Mbit/s with room to spare).
    #[arg(long, default_value_t = 16)]
    max_flows: usize,
    #[command(flatten)]
    common: Common,
}

/// The flags of `lab exec`.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Read the arguments as ssh does: `[OPTIONS] HOST WORDS...`, options
    /// skipped, the words one command line for `sh -c`.
    #[arg(long)]
    ssh: bool,
    #[command(flatten)]
    common: Common,
    /// HOST -- COMMAND [ARGS...] (with --ssh: ssh's arguments, after --).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    args: Vec<String>,
}

/// The flags of `lab measure`.
#[derive(Debug, Args)]
pub struct MeasureArgs {
    /// The rank table to set the counters beside: ranks.csv of a job's
    /// ConfigMap, or `planner ranks` CSV or JSON.
    #[arg(long)]
    table: Option<PathBuf>,
    /// The table's algorithm (hdrm, hd, ring) [default: what a JSON table
    /// names, else hdrm].
    #[arg(long)]
    algorithm: Option<String>,
    /// The engine that runs the allreduce (probe, openmpi, mpich, nccl,
    /// gloo): its schedule of the algorithm is predicted, as
    /// `verify-ranks --engine` routes it [default: what a JSON table
    /// names, else probe].
    #[arg(long)]
    engine: Option<String>,
    /// Bytes per rank of the allreduce between the marks (units as `lab
    /// run --size`); needed with --table.
    #[arg(long)]
    bytes: Option<String>,
    /// Seed of the route model's ECMP choices (as verify-ranks --seed).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// How switches choose among equal-cost next hops [default: model
    /// (the table's flows pinned) for a static lab, kernel for BGP].
    #[arg(long, value_enum)]
    ecmp: Option<EcmpArg>,
    /// Seconds to wait for each mark, and for the command to end after
    /// the last.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// Share of a link's predicted bytes the measurement may differ by.
    #[arg(long, default_value_t = 0.1)]
    tolerance: f64,
    #[command(flatten)]
    common: Common,
    /// The command, after --.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

/// Runs a lab subcommand.
pub fn run(cmd: LabCommand) -> Result<()> {
    match cmd {
        LabCommand::Stream {
            listen,
            connect,
            seconds,
        } => {
            if !(seconds > 0.0 && seconds.is_finite()) {
                return Err(
                    crate::BadInput("--seconds: give a positive number".to_string()).into(),
                );
            }
            match (listen, connect) {
                (Some(bind), None) => {
                    let (bytes, kbit) = burnin::receive(&bind, seconds)?;
                    println!("bytes={bytes} kbit={kbit}");
                }
                (None, Some(to)) => {
                    let bytes = burnin::send(&to, seconds)?;
                    println!("bytes={bytes}");
                }
                _ => {
                    return Err(crate::BadInput("give --listen or --connect".to_string()).into());
                }
            }
            Ok(())
        }
        LabCommand::Devices { out: file, common } => {
            state::check_name(&common.name)?;
            let st = state::require_up(&common.state_dir, &common.name)?;
            if st.routing != state::Routing::Bgp {
                return Err(crate::BadInput(format!(
                    "lab {} routes statically: its switches run no FRR to push to; bring it up with `lab up PLAN --routing bgp`",
                    st.name
                ))
                .into());
            }
            let devices = lab::frr::devices(&st);
            let text = match common.format {
                Format::Json => super::json(&devices)?,
                Format::Table => lab::frr::devices_toml(&st),
            };
            match file {
                Some(f) => std::fs::write(&f, text)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", f.display()))?,
                None => super::print(&text)?,
            }
            Ok(())
        }
        LabCommand::Up {
            plan,
            rate,
            routing,
            preload_config,
            common,
        } => {
            let given = rate.as_deref().map(lab::parse_rate).transpose()?;
            state::check_name(&common.name)?;
            let p = crate::load_plan(&plan)?;
            let description = planner::network::Lab::of(&p, p.source())?;
            let rate_kbit = given.unwrap_or_else(|| lab::default_rate(description.hosts.len()));
            let routing = match routing {
                Some(RoutingArg::Static) => state::Routing::Static,
                Some(RoutingArg::Bgp) => state::Routing::Bgp,
                None if p.routing.is_bgp() => state::Routing::Bgp,
                None => state::Routing::Static,
            };
            let mut frr_configs = std::collections::BTreeMap::new();
            if preload_config {
                if routing != state::Routing::Bgp {
                    return Err(crate::BadInput(
                        "--preload-config: only a BGP lab runs FRR; add --routing bgp".to_string(),
                    )
                    .into());
                }
                let frr = planner::render::Vendor::named("frr")
                    .ok_or_else(|| anyhow::anyhow!("the render vendor table has no frr"))?;
                for s in &description.switches {
                    if !frr_configs.contains_key(&s.physical) {
                        let text = planner::render::render_switch(&p, &s.physical, frr)?;
                        frr_configs.insert(s.physical.clone(), text);
                    }
                }
            }
            let sys = Sys::find()?;
            let file = std::fs::canonicalize(&plan).unwrap_or(plan.clone());
            let report = build::up(
                &sys,
                description,
                &file.display().to_string(),
                &build::UpOptions {
                    name: common.name.clone(),
                    state_dir: common.state_dir.clone(),
                    rate_kbit,
                    routing,
                    frr_configs,
                },
            )?;
            show(common.format, &report, |r| {
                format!(
                    "lab {} is up: {} namespaces ({} switches, {} sub-nodes), {} cables, NIC cables at {} kbit/s, {} routing, in {:.2} s\n{}",
                    r.name,
                    r.namespaces,
                    r.switches,
                    r.hosts,
                    r.cables,
                    r.rate_kbit,
                    r.routing.as_str(),
                    r.seconds,
                    if r.routing == state::Routing::Bgp {
                        format!(
                            "FRR runs in every switch namespace: `provisioner lab devices --name {} --out devices.toml`, then `provisioner push PLAN --devices devices.toml`\n",
                            r.name
                        )
                    } else {
                        String::new()
                    }
                )
            })
        }
        LabCommand::Status { common } => {
            let s = build::status(&common.state_dir, &common.name)?;
            show(common.format, &s, |s| {
                let mut t = format!(
                    "lab {} ({}, {} routing): plan {}, {} switches and {} sub-nodes, {} inter-switch cables, NIC cables at {} kbit/s, {} pinned choices\n",
                    s.name,
                    s.phase,
                    s.routing.as_str(),
                    s.plan_file,
                    s.switches,
                    s.hosts,
                    s.cables,
                    s.rate_kbit,
                    s.pins
                );
                for (c, rate) in &s.changed {
                    t += &match rate {
                        Some(r) => format!("  cable {c}: degraded to {r} kbit/s\n"),
                        None if s.silent.contains(c) => {
                            format!("  cable {c}: cut silently (up, every frame dropped)\n")
                        }
                        None => format!("  cable {c}: cut\n"),
                    };
                }
                if !s.missing.is_empty() {
                    t += &format!(
                        "  namespaces missing (removed from outside the lab): {}\n",
                        s.missing.join(", ")
                    );
                }
                t
            })
        }
        LabCommand::Degrade { link, rate, common } => {
            let kbit = lab::parse_rate(&rate)?;
            change(&common, &link, Change::Set(build::Setting::Rate(kbit)))
        }
        LabCommand::Cut {
            link,
            silent,
            common,
        } => change(
            &common,
            &link,
            Change::Set(if silent {
                build::Setting::Silent
            } else {
                build::Setting::Down
            }),
        ),
        LabCommand::Restore { link, common } => change(&common, &link, Change::Restore),
        LabCommand::Down { common } => {
            state::check_name(&common.name)?;
            let sys = Sys::find()?;
            let r = build::down(&sys, &common.state_dir, &common.name)?;
            show(common.format, &r, |r| {
                format!(
                    "lab {} is down: {} namespaces removed ({} processes stopped) in {:.2} s\n",
                    r.name, r.namespaces, r.processes, r.seconds
                )
            })
        }
        LabCommand::Run(a) => run_lab(*a),
        LabCommand::Exec(a) => exec(a),
        LabCommand::Hosts { common } => {
            state::check_name(&common.name)?;
            let st = state::require_up(&common.state_dir, &common.name)?;
            let hosts = foreign::hosts(&st);
            show(common.format, &hosts, |hosts| {
                let mut t = planner::text::Table::new(["host", "sub-node", "namespace", "address"]);
                for h in hosts {
                    t.row([
                        h.name.clone(),
                        h.sub_node.clone(),
                        h.namespace.clone(),
                        h.address.clone(),
                    ]);
                }
                t.render()
            })
        }
        LabCommand::Measure(a) => measure(*a),
    }
}

/// The ECMP mode of a run: as asked, else the route model's pins for a
/// static lab and the kernel's hash under BGP (pins are static routing's).
fn ecmp(asked: Option<EcmpArg>, routing: state::Routing) -> run::Ecmp {
    match asked {
        Some(EcmpArg::Model) => run::Ecmp::Model,
        Some(EcmpArg::Kernel) => run::Ecmp::Kernel,
        None if routing == state::Routing::Bgp => run::Ecmp::Kernel,
        None => run::Ecmp::Model,
    }
}

fn exec(a: ExecArgs) -> Result<()> {
    let common = &a.common;
    state::check_name(&common.name)?;
    let (host, argv) = if a.ssh {
        let (host, line) = foreign::ssh_call(&a.args)?;
        (host, vec!["sh".to_string(), "-c".to_string(), line])
    } else {
        let (host, rest) = a
            .args
            .split_first()
            .ok_or_else(|| crate::BadInput("give HOST -- COMMAND".to_string()))?;
        let rest = rest.strip_prefix(&["--".to_string()]).unwrap_or(rest);
        (host.clone(), rest.to_vec())
    };
    let sys = Sys::find()?;
    let st = state::require_up(&common.state_dir, &common.name)?;
    let target = foreign::resolve(&st, &host)?;
    let status = foreign::exec(&sys, &common.state_dir, &st, &target, &argv)?;
    if status.success() {
        return Ok(());
    }
    // The command's own exit code, as ssh and `ip netns exec` pass it on;
    // it has said what went wrong.
    std::process::exit(status.code().unwrap_or(1));
}

fn measure(a: MeasureArgs) -> Result<()> {
    let common = &a.common;
    state::check_name(&common.name)?;
    if !(a.tolerance >= 0.0 && a.tolerance.is_finite()) {
        return Err(crate::BadInput("--tolerance: give a share such as 0.1".to_string()).into());
    }
    let sys = Sys::find()?;
    let mut st = state::require_up(&common.state_dir, &common.name)?;
    let plan = crate::load_plan(Path::new(&st.plan_file))?;
    let expected = match &a.table {
        None => {
            if a.bytes.is_some() || a.algorithm.is_some() || a.engine.is_some() {
                return Err(crate::BadInput(
                    "--bytes, --algorithm and --engine describe the rank table of --table; give --table"
                        .to_string(),
                )
                .into());
            }
            None
        }
        Some(file) => {
            let text = planner::input::read(file).map_err(crate::BadInput)?;
            let table =
                planner::ranks::format::read_rank_table(&text, &file.display().to_string(), &plan)?;
            let (named, ranks) = (table.algorithm, table.ranks);
            let engine = match (&a.engine, table.engine) {
                (Some(given), named) => {
                    let given: planner::ranks::engine::Engine = given
                        .parse()
                        .map_err(|e| crate::BadInput(format!("--engine: {e}")))?;
                    if let Some(n) = named.filter(|&n| n != given) {
                        return Err(crate::BadInput(format!(
                            "--engine {given}: {} is a table made for {n}; give --engine {n}, or the table made for {given} (`planner ranks --engine {given}`)",
                            file.display()
                        ))
                        .into());
                    }
                    given
                }
                (None, named) => named.unwrap_or_default(),
            };
            let algorithm = match (&a.algorithm, named) {
                (Some(n), _) => probe::schedule::algorithm(n)?,
                (None, Some(alg)) => alg,
                (None, None) => planner::ranks::Algorithm::Hdrm,
            };
            let bytes = a.bytes.as_deref().ok_or_else(|| {
                crate::BadInput(
                    "--bytes: give the bytes per rank of the allreduce between the marks, to predict what it moves".to_string(),
                )
            })?;
            let bytes =
                probe::parse_bytes(bytes).map_err(|m| crate::BadInput(format!("--bytes: {m}")))?;
            Some(foreign::Expected {
                ranks,
                algorithm,
                engine,
                bytes,
            })
        }
    };
    let routing = st.routing;
    let report = foreign::measure(
        &sys,
        &common.state_dir,
        &mut st,
        &plan,
        &foreign::MeasureOptions {
            command: a.command.clone(),
            expected,
            seed: a.seed,
            ecmp: ecmp(a.ecmp, routing),
            timeout: a.timeout,
            tolerance: a.tolerance,
        },
    )?;
    if report.exit_code != Some(0) {
        show(common.format, &report, foreign::render)?;
        return Err(anyhow::anyhow!(
            "`{}` exited {} (its output is above)",
            report.command.join(" "),
            report
                .exit_code
                .map_or("on a signal".to_string(), |c| format!("with {c}"))
        )
        .into());
    }
    show(common.format, &report, foreign::render)
}

enum Change {
    Set(build::Setting),
    Restore,
}

fn change(common: &Common, link: &str, what: Change) -> Result<()> {
    state::check_name(&common.name)?;
    let sys = Sys::find()?;
    let mut st = state::require_up(&common.state_dir, &common.name)?;
    let cables = build::find_cables(&st, link)?;
    let names: Vec<String> = cables.iter().map(|&c| st.cable_name(c)).collect();
    let said = match what {
        Change::Set(setting) => {
            build::change(&sys, &common.state_dir, &mut st, &cables, setting)?;
            match setting {
                build::Setting::Rate(kbit) => format!("{kbit} kbit/s"),
                build::Setting::Down => "cut".to_string(),
                build::Setting::Silent => "cut silently (up, every frame dropped)".to_string(),
            }
        }
        Change::Restore => {
            build::restore(&sys, &common.state_dir, &mut st, &cables)?;
            "restored to its planned rate".to_string()
        }
    };
    let report = serde_json::json!({ "lab": st.name, "cables": names, "now": said });
    show(common.format, &report, |_| {
        format!("lab {}: cable {} {}\n", st.name, names.join(", "), said)
    })
}

fn run_lab(a: RunArgs) -> Result<()> {
    let common = &a.common;
    state::check_name(&common.name)?;
    let sys = Sys::find()?;
    let mut st = state::require_up(&common.state_dir, &common.name)?;
    let routing = st.routing;
    let exe = std::env::current_exe()?;
    if a.burn_in {
        let b = burnin::run(
            &sys,
            &common.state_dir,
            &mut st,
            &burnin::Options {
                exe,
                seconds: a.seconds,
                threshold: a.threshold,
                max_flows: a.max_flows,
                port: a.port,
            },
        )?;
        return show(common.format, &b, planner::network::burnin::render);
    }
    let plan = crate::load_plan(Path::new(&st.plan_file))?;
    let algorithm = probe::schedule::algorithm(&a.algorithm)?;
    let sizes = if a.no_timed {
        Vec::new()
    } else {
        probe::parse_sizes(&a.size)?
    };
    let count_size = if a.no_count {
        None
    } else {
        Some(
            probe::parse_bytes(&a.count_size)
                .map_err(|m| crate::BadInput(format!("--count-size: {m}")))?,
        )
    };
    let report = run::run(
        &sys,
        &common.state_dir,
        &mut st,
        &plan,
        &run::RunOptions {
            algorithm,
            ranks: a.ranks,
            sizes,
            count_size,
            warmup: a.warmup,
            iters: a.iters,
            seed: a.seed,
            ecmp: ecmp(a.ecmp, routing),
            exe,
            port: a.port,
            timeout: a.timeout,
        },
    )?;
    show(common.format, &report, run::render)
}
