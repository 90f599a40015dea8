//! `planner render` and `planner check-qos`: switch configurations and
//! host files written into a directory, and the deadlock-freedom proof of
//! the plan's lossless priorities. See `docs/switch-configs.md`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::{ArgGroup, Args};
use serde::Serialize;

use planner::checked::CheckedPlan;
use planner::inventory::qos_overrides_from_toml;
use planner::plan::Plan;
use planner::render::{
    HostMarking, Vendor, apply_qos_overrides, check_qos_marked, file_stem, nccl_topo, render,
    render_hosts, render_qos_table,
};
use planner::text::Table;

use crate::Format;
use crate::io::{display, load_plan, print, print_json, read};
use crate::output;

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("what").required(true).args(["vendor", "hosts"])))]
pub struct RenderArgs {
    /// Plan JSON (or TOML) written by `planner design --out`.
    plan: PathBuf,
    // The help lists the vendors of the registry (`Vendor::choices`).
    #[arg(long, value_name = "VENDOR", help = vendor_help())]
    vendor: Option<String>,
    /// Host files instead: per server, `<server>.env` (shell) and
    /// `<server>.json` with each sub-node's address, DSCP and NCCL
    /// environment, and `<server>.nccl-topo.xml` (NCCL_TOPO_FILE) for
    /// servers whose inventory gives PCI bus ids.
    #[arg(long)]
    hosts: bool,
    /// Directory to write the files into; created when missing. The files
    /// are written into a sibling temporary directory that then replaces
    /// DIR whole (other files in DIR are kept), so DIR never holds a mix
    /// of old and new files.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// QoS overrides: a TOML file with the inventory's `[qos]` table (DSCP,
    /// priorities, ECN, MTU, per_direction), applied on top of the plan's
    /// intent.
    #[arg(long, value_name = "FILE")]
    qos: Option<PathBuf>,
    /// Table (what was written, for people) or JSON (the manifest).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Debug, Args)]
pub struct CheckQosArgs {
    /// Plan JSON (or TOML) written by `planner design --out`.
    plan: PathBuf,
    /// QoS overrides: a TOML file with the inventory's `[qos]` table,
    /// applied on top of the plan's intent before the check (e.g.
    /// `per_direction = false` to see the deadlock cycle).
    #[arg(long, value_name = "FILE")]
    qos: Option<PathBuf>,
    /// The NCCL release the ranks run: before 2.22.3 a receiver's CTS
    /// writes and ACKs carry the data sender's traffic class (there is no
    /// NCCL_IB_FIFO_TC), and the check walks them so.
    #[arg(long, value_name = "VERSION")]
    nccl_version: Option<String>,
    /// A variable every rank's NCCL or UCX is given, as NAME=VALUE (repeat
    /// it): NCCL_IB_TC (one data class for every rank), NCCL_IB_FIFO_TC
    /// (one class for the receivers' answers; empty: unset) or
    /// UCX_IB_TRAFFIC_CLASS (Open MPI over UCX: one class for everything
    /// every rank sends; `auto`: 106). Without it, each rank marks its
    /// class, as `render --hosts` and `provisioner submit` set them.
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// What `planner render --format json` prints: every file written.
#[derive(Debug, Serialize)]
struct Manifest {
    /// The plan's name.
    plan: String,
    /// `BiGraph 4x16`, ...
    design: String,
    /// The vendor's name (`comware`, ..., as `--vendor` takes it) or
    /// `hosts`.
    target: String,
    /// The directory, as given.
    out: String,
    /// The QoS overrides file, when one was applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    qos_overrides: Option<String>,
    /// The files in the order they were written.
    files: Vec<ManifestFile>,
}

/// One file of the manifest.
#[derive(Debug, Serialize)]
struct ManifestFile {
    /// File name inside the directory.
    file: String,
    /// The path, the directory joined with the name.
    path: String,
    /// The physical switch the file configures.
    #[serde(skip_serializing_if = "Option::is_none")]
    switch: Option<String>,
    /// The server the file is for.
    #[serde(skip_serializing_if = "Option::is_none")]
    server: Option<String>,
    /// Size in bytes.
    bytes: usize,
    /// SHA-256 of the contents, lowercase hex (what `sha256sum` prints).
    sha256: String,
}

pub fn run(args: RenderArgs) -> Result<ExitCode> {
    let vendor = args
        .vendor
        .as_deref()
        .map(str::parse::<Vendor>)
        .transpose()?;
    let target = output::dir_target(&args.out, "--out")?;
    let (plan, notes) = load(&args.plan, args.qos.as_deref())?;
    // Everything is rendered before anything is written: a plan that
    // cannot be rendered leaves the directory as it was.
    let (files, owners) = match vendor {
        Some(v) => (render(&plan, v)?, switch_files(&plan, v)),
        None => (render_hosts(&plan)?, host_files(&plan)),
    };
    output::commit(vec![output::stage_dir(&target, &files)?])?;
    let mut manifest = Manifest {
        plan: plan.name.clone(),
        design: plan.describe(),
        target: vendor.map_or("hosts", Vendor::as_str).to_string(),
        out: display(&args.out),
        qos_overrides: args.qos.as_deref().map(display),
        files: Vec::with_capacity(files.len()),
    };
    for (name, text) in &files {
        let path = args.out.join(name);
        let owner = owners
            .iter()
            .find(|(file, _)| file == name)
            .map(|(_, owner)| owner.clone());
        manifest.files.push(ManifestFile {
            file: name.clone(),
            path: display(&path),
            switch: owner.clone().filter(|_| vendor.is_some()),
            server: owner.filter(|_| vendor.is_none()),
            bytes: text.len(),
            sha256: planner::text::sha256_hex(text.as_bytes()),
        });
    }
    print_notes(&notes);
    print_notes(&others(&args.out, vendor, &manifest.files));
    match args.format {
        Format::Json => print_json(&manifest)?,
        Format::Table => {
            let mut table = manifest_table(&manifest, vendor);
            if vendor.is_none() {
                table.push_str(&topology_summary(&plan));
            }
            print(&table)?
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run_check_qos(args: CheckQosArgs) -> Result<ExitCode> {
    let mut marking = match &args.nccl_version {
        Some(v) => HostMarking::for_nccl_version(v)?,
        None => HostMarking::default(),
    };
    for assignment in &args.env {
        marking.set_env(assignment)?;
    }
    let (plan, notes) = load(&args.plan, args.qos.as_deref())?;
    let check = check_qos_marked(&plan, &marking);
    print_notes(&notes);
    match args.format {
        Format::Table => print(&render_qos_table(&check))?,
        Format::Json => print_json(&check)?,
    }
    Ok(if check.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(2)
    })
}

/// The plan, with the overrides file applied when there is one, and the
/// notes about overrides that do not apply to its design.
fn load(plan_path: &Path, qos: Option<&Path>) -> Result<(CheckedPlan, Vec<String>)> {
    let mut plan = load_plan(plan_path)?;
    let Some(file) = qos else {
        return Ok((plan, Vec::new()));
    };
    let text = read(file)?;
    let mut physical: Vec<&str> = Vec::new();
    for s in &plan.switch_list {
        if !physical.contains(&s.physical.as_str()) {
            physical.push(&s.physical);
        }
    }
    let overrides = qos_overrides_from_toml(&text, &display(file), &physical)?;
    let notes = apply_qos_overrides(&mut plan, &overrides)?;
    Ok((plan, notes))
}

fn print_notes(notes: &[String]) {
    for n in notes {
        eprintln!("note: {n}");
    }
}

/// Notes about files in `dir` that look like this render's but were not
/// written by it: switches or servers that left the plan.
fn others(dir: &Path, vendor: Option<Vendor>, written: &[ManifestFile]) -> Vec<String> {
    let suffixes: Vec<String> = match vendor {
        Some(v) => vec![v.file_name("")],
        None => vec![
            ".env".to_string(),
            ".json".to_string(),
            ".nccl-topo.xml".to_string(),
        ],
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| suffixes.iter().any(|s| n.ends_with(s.as_str())))
        .filter(|n| !written.iter().any(|f| &f.file == n))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            format!(
                "{} also holds {n}, which this plan does not render; remove it if it is no longer needed",
                display(dir)
            )
        })
        .collect()
}

/// File name and physical switch of every switch file.
fn switch_files(plan: &Plan, vendor: Vendor) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for s in &plan.switch_list {
        if !out.iter().any(|(_, p)| p == &s.physical) {
            out.push((vendor.file_name(&s.physical), s.physical.to_string()));
        }
    }
    out
}

/// File names and server of every host file.
fn host_files(plan: &Plan) -> Vec<(String, String)> {
    plan.servers
        .iter()
        .flat_map(|s| {
            let stem = file_stem(&s.name);
            let topo =
                (!s.pci.is_empty()).then(|| (nccl_topo::file_name(&s.name), s.name.to_string()));
            [
                (format!("{stem}.env"), s.name.to_string()),
                (format!("{stem}.json"), s.name.to_string()),
            ]
            .into_iter()
            .chain(topo)
        })
        .collect()
}

/// One line on NCCL's topology files: where to install them, and how many
/// servers have none (their inventory gives no `pci_bus`).
fn topology_summary(plan: &Plan) -> String {
    let with = plan.servers.iter().filter(|s| !s.pci.is_empty()).count();
    let all = plan.servers.len();
    let mut out = String::new();
    if with > 0 {
        out.push_str(&format!(
            "NCCL topology files (<server>.nccl-topo.xml, NCCL {}) for {with} of {all} servers: install each on its server as {} (the env file's NCCL_TOPO_FILE).\n",
            nccl_topo::NCCL_VERSION,
            nccl_topo::HOST_PATH
        ));
    }
    if with < all {
        out.push_str(&format!(
            "{} of {all} servers have no NCCL topology file: the inventory gives their devices no pci_bus, so NCCL reads their PCIe tree itself (right on bare metal; a VM whose PCIe tree NCCL cannot see needs it, docs/inventory.md).\n",
            all - with
        ));
    }
    out
}

/// The help of `--vendor`: every registered vendor and what it renders.
fn vendor_help() -> String {
    format!(
        "Switch configurations, one file per physical switch: {}",
        Vendor::choices()
    )
}

fn manifest_table(m: &Manifest, vendor: Option<Vendor>) -> String {
    let what = match vendor {
        Some(v) => format!(
            "{} files for {}, one per physical switch",
            m.files.len(),
            v.title()
        ),
        None => {
            let topo = (m.files.iter())
                .filter(|f| f.file.ends_with(".nccl-topo.xml"))
                .count();
            if topo == 0 {
                format!(
                    "{} host files, an env file and a JSON file per server",
                    m.files.len()
                )
            } else {
                format!(
                    "{} host files, an env file and a JSON file per server and {topo} NCCL topology files",
                    m.files.len()
                )
            }
        }
    };
    let mut out = format!(
        "Rendered plan {} ({}): {what}, into {}\n",
        m.plan, m.design, m.out
    );
    if let Some(q) = &m.qos_overrides {
        out.push_str(&format!("QoS overrides applied from {q}\n"));
    }
    out.push('\n');
    let who = if vendor.is_some() { "switch" } else { "server" };
    let mut t = Table::new(["file", who, "bytes", "sha256"]).right(&[2]);
    for f in &m.files {
        t.row([
            f.file.clone(),
            f.switch
                .clone()
                .or_else(|| f.server.clone())
                .unwrap_or_default(),
            f.bytes.to_string(),
            f.sha256.clone(),
        ]);
    }
    out.push_str(&t.render());
    out.push('\n');
    out.push_str(match vendor {
        Some(_) => {
            "Each file was written whole (temporary file, then rename). Prove the priorities deadlock-free with `planner check-qos`; docs/switch-configs.md says how to apply the files.\n"
        }
        None => {
            "Each file was written whole (temporary file, then rename). Source <server>.env and run `planner_slot <local rank>` before each rank starts.\n"
        }
    });
    out
}
