//! The `provisioner sot` subcommands: import an inventory from Nautobot
//! (or NetBox), push a plan into it, and check its cables against a plan.
//! Exit codes: 0 done, 2 bad input, refused objects, conflicts or cabling
//! findings, 1 failures on the way (no answer, server errors).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, Subcommand, ValueEnum};

use planner::text::Table;
use planner::validate;
use provisioner::sot::cabling::{self, CablingOptions};
use provisioner::sot::import::{self, ImportOptions};
use provisioner::sot::push::{self, PushOptions, PushReport};
use provisioner::sot::{Client, Flavor, Limits, Settings, SotError, TokenSource};

use super::{Format, Result, runtime, show};

/// `provisioner sot ...`.
#[derive(Debug, Subcommand)]
pub enum SotCommand {
    /// Write an inventory TOML from the source of truth's devices,
    /// interfaces, inventory items and custom fields
    /// (docs/source-of-truth.md has the mapping).
    Import {
        #[command(flatten)]
        conn: Connection,
        /// Only devices at this location (Nautobot) or site, by its slug
        /// (NetBox; `--site` is the same flag).
        #[arg(long, alias = "site")]
        location: Option<String>,
        /// The device role of GPU servers.
        #[arg(long, default_value = "gpu-server")]
        server_role: String,
        /// The device role of fabric switches.
        #[arg(long, default_value = "fabric-switch")]
        switch_role: String,
        /// The inventory's name [default: the location].
        #[arg(long)]
        name: Option<String>,
        /// Write the inventory here (whole or not at all) instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Create or update the plan's switches, port VLANs, planned cables,
    /// VLANs, prefixes and NIC addresses, tagged `topo-plan-<plan>`;
    /// idempotent; conflicts with objects the plan does not own stop the
    /// push before any write.
    Push {
        /// Plan JSON (or TOML) from `planner design --out`.
        plan: PathBuf,
        #[command(flatten)]
        conn: Connection,
        /// Show the diff, write nothing.
        #[arg(long)]
        dry_run: bool,
        /// The location (Nautobot) or site slug (NetBox; `--site` is the
        /// same flag) of switches the push creates.
        #[arg(long, alias = "site")]
        location: Option<String>,
        /// The role of switches the push creates.
        #[arg(long, default_value = "fabric-switch")]
        switch_role: String,
        /// Objects per bulk request.
        #[arg(long, default_value_t = 250, value_parser = clap::value_parser!(u64).range(1..=1000))]
        batch: u64,
        /// No progress lines on stderr.
        #[arg(long)]
        quiet: bool,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Read the source of truth's cables and report what `planner
    /// validate --cabling` reports for a CSV or LLDP file (missing, extra,
    /// crossed, wrong VLAN half, ...), each with the cable's id and URL.
    Cabling {
        /// Plan JSON (or TOML) from `planner design --out`.
        plan: PathBuf,
        #[command(flatten)]
        conn: Connection,
        /// Cables of this status count as built; `any` reads every cable.
        #[arg(long, default_value = "connected")]
        status: String,
        /// Only cables and devices at this location (Nautobot) or site
        /// slug (NetBox; `--site` is the same flag).
        #[arg(long, alias = "site")]
        location: Option<String>,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
}

/// How to reach the source of truth.
#[derive(Debug, Args)]
pub struct Connection {
    /// The server's base URL (`https://nautobot.example.com`).
    #[arg(long)]
    url: String,
    /// Which source of truth it is.
    #[arg(long = "from", alias = "to", value_enum, default_value_t = FlavorArg::Nautobot)]
    flavor: FlavorArg,
    /// A file whose first line is the API token (mode 600).
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// The variable holding the token, when there is no --token-file.
    #[arg(long, default_value = "SOT_TOKEN")]
    token_env: String,
    /// PEM CA bundle to verify the server's certificate with, instead of
    /// the system's roots (TLS is always verified).
    #[arg(long)]
    ca_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FlavorArg {
    Nautobot,
    Netbox,
}

impl Connection {
    fn client(&self) -> Result<Client, SotError> {
        Client::new(&Settings {
            flavor: match self.flavor {
                FlavorArg::Nautobot => Flavor::Nautobot,
                FlavorArg::Netbox => Flavor::Netbox,
            },
            url: self.url.clone(),
            token: match &self.token_file {
                Some(f) => TokenSource::File(f.clone()),
                None => TokenSource::Env(self.token_env.clone()),
            },
            ca_file: self.ca_file.clone(),
            limits: Limits::default(),
        })
    }
}

/// Writes `text` to `path` whole or not at all.
fn write_whole(path: &Path, text: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    let r = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    Ok(r.with_context(|| format!("writing {}", path.display()))?)
}

fn sot<T>(r: Result<T, SotError>) -> Result<T> {
    r.map_err(|e| provisioner::Error::Sot(e).into())
}

/// Runs `provisioner sot ...`.
pub fn run(cmd: SotCommand) -> Result<()> {
    match cmd {
        SotCommand::Import {
            conn,
            location,
            server_role,
            switch_role,
            name,
            out,
            format,
        } => {
            let client = sot(conn.client())?;
            let opts = ImportOptions {
                location,
                server_role,
                switch_role,
                name,
            };
            let snap = sot(runtime()?.block_on(import::fetch(&client, &opts)))?;
            let source = format!("{} {}", client.flavor().name(), client.base());
            let toml = sot(import::inventory_toml(&snap, &opts, &source))?;
            if let Some(path) = &out {
                write_whole(path, &toml)?;
            }
            #[derive(serde::Serialize)]
            struct Imported<'a> {
                url: &'a str,
                file: Option<String>,
                servers: usize,
                switches: usize,
                inventory: &'a str,
            }
            let summary = Imported {
                url: client.base(),
                file: out.as_ref().map(|p| p.display().to_string()),
                servers: snap.servers.len(),
                switches: snap.switches.len(),
                inventory: &toml,
            };
            show(format, &summary, |s| match &s.file {
                Some(f) => format!(
                    "wrote {f}: {} servers, {} switches from {}\n",
                    s.servers, s.switches, s.url
                ),
                None => s.inventory.to_string(),
            })?;
            Ok(())
        }
        SotCommand::Push {
            plan,
            conn,
            dry_run,
            location,
            switch_role,
            batch,
            quiet,
            format,
        } => {
            let p = crate::load_plan(&plan)?;
            let client = sot(conn.client())?;
            let opts = PushOptions {
                location,
                switch_role,
                dry_run,
                batch: usize::try_from(batch).unwrap_or(250),
            };
            let quiet = quiet || matches!(format, Format::Json);
            let mut progress = |line: &str| {
                if !quiet {
                    let _ = writeln!(std::io::stderr(), "sot push: {line}");
                }
            };
            let report =
                sot(runtime()?.block_on(push::push(&client, p.plan(), &opts, &mut progress)))?;
            show(format, &report, push_table)?;
            if report.diff.conflicts.is_empty() {
                return Ok(());
            }
            sot(Err(SotError::Outcome {
                message: format!(
                    "{} conflicts with objects plan {} does not own; nothing was written",
                    report.diff.conflicts.len(),
                    report.plan
                ),
            }))
        }
        SotCommand::Cabling {
            plan,
            conn,
            status,
            location,
            format,
        } => {
            let p = crate::load_plan(&plan)?;
            let client = sot(conn.client())?;
            let opts = CablingOptions {
                status: (status != "any").then_some(status),
                location,
            };
            let snap = sot(runtime()?.block_on(cabling::fetch(&client, &opts)))?;
            let source = format!("{} {}", client.flavor().name(), client.base());
            let (observed, skipped) = cabling::observed(client.base(), &snap, &source);
            if skipped > 0 && matches!(format, Format::Table) {
                let _ = writeln!(
                    std::io::stderr(),
                    "sot cabling: {skipped} cables not between two interfaces of the read devices were left out"
                );
            }
            let v = validate::validate_cabling(p.plan(), &observed, &[source]);
            let plan_name = plan.display().to_string();
            show(format, &v, |v| validate::render_table(v, &plan_name))?;
            if v.ok {
                return Ok(());
            }
            sot(Err(SotError::Outcome {
                message: format!(
                    "the cabling in {} differs from plan {}: {} findings",
                    client.base(),
                    v.plan,
                    v.findings.len()
                ),
            }))
        }
    }
}

/// Devices the plan does not own that stand elsewhere than the plan says:
/// reported, never moved (docs/source-of-truth.md, "Racks").
fn not_moved_table(r: &PushReport) -> String {
    if r.diff.not_moved.is_empty() {
        return String::new();
    }
    let mut t = Table::new(["device", "where", "url"]);
    for c in &r.diff.not_moved {
        t.row(vec![
            c.object.clone(),
            c.detail.clone(),
            c.url.clone().unwrap_or_default(),
        ]);
    }
    format!(
        "{} devices plan {} does not own stand elsewhere than the plan; not moved:\n{}",
        r.diff.not_moved.len(),
        r.plan,
        t.render()
    )
}

fn push_table(r: &PushReport) -> String {
    let mut out = not_moved_table(r);
    let verb = if r.dry_run { "would" } else { "will" };
    if !r.diff.conflicts.is_empty() {
        out.push_str(&format!(
            "{} conflicts with objects plan {} does not own; nothing was written:\n",
            r.diff.conflicts.len(),
            r.plan
        ));
        let mut t = Table::new(["kind", "object", "why", "url"]);
        for c in &r.diff.conflicts {
            t.row(vec![
                c.kind.to_string(),
                c.object.clone(),
                c.detail.clone(),
                c.url.clone().unwrap_or_default(),
            ]);
        }
        out.push_str(&t.render());
        return out;
    }
    if r.diff.changes.is_empty() {
        out.push_str(&format!(
            "no change: {} objects of plan {} in {} are as planned (tag {})\n",
            r.diff.unchanged, r.plan, r.url, r.tag
        ));
        return out;
    }
    let mut t = Table::new(["action", "kind", "object", "detail"]);
    for c in &r.diff.changes {
        t.row(vec![
            c.action.to_string(),
            c.kind.to_string(),
            c.object.clone(),
            c.detail.clone(),
        ]);
    }
    out.push_str(&t.render());
    if r.dry_run {
        out.push_str(&format!(
            "dry run: {verb} make {} changes ({} objects already as planned)\n",
            r.diff.changes.len(),
            r.diff.unchanged
        ));
    } else {
        out.push_str(&format!(
            "created {}, updated {} in {} bulk requests; {} objects were already as planned\n",
            r.created, r.updated, r.requests, r.diff.unchanged
        ));
    }
    out
}
