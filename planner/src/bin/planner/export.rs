//! `planner export`: scheduler exports from a plan (node labels, Kueue,
//! Volcano, Slurm topology.conf and topology.yaml, topograph labels). The YAML or `topology.conf` text goes to stdout (or
//! `--out`), what the translation loses to stderr; `--format json` prints
//! both as one JSON object.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};

use planner::export::{self, DEFAULT_PREFIX, KueueApi, Target};

use crate::io::{BadInput, display, load_plan, print};
use crate::output;

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Plan JSON (or TOML).
    plan: PathBuf,
    /// What to export.
    #[arg(long, value_parser = target_parser())]
    to: Target,
    /// Label prefix: a DNS subdomain, with or without the final `/`
    /// (default topology.eflops.io/; --to topograph uses topograph's keys
    /// and takes none).
    #[arg(long)]
    prefix: Option<String>,
    /// Kueue API version of the Topology and ResourceFlavor (--to kueue):
    /// v1beta2 (Kueue v0.15 and later) or v1beta1 (deprecated, for older
    /// clusters).
    #[arg(long, value_enum, value_name = "VERSION")]
    kueue_api: Option<KueueApiArg>,
    /// yaml (the default for labels, kueue and volcano; the Slurm forms
    /// print topology.conf text) or json (the export and what it loses as
    /// one object).
    #[arg(long, value_enum)]
    format: Option<ExportFormat>,
    /// Write the output here (whole or not at all) instead of stdout:
    /// FILE.yaml or FILE.yml for YAML, FILE.json for --format json,
    /// FILE.conf for the Slurm forms' text.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// `--to`'s values: the export table's names, with its help text.
fn target_parser() -> impl clap::builder::TypedValueParser<Value = Target> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
    let values = (Target::ALL.iter()).map(|t| PossibleValue::new(t.as_str()).help(t.row().help));
    PossibleValuesParser::new(values)
        .try_map(|name| Target::from_name(&name).ok_or(format!("no export target {name}")))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum KueueApiArg {
    /// kueue.x-k8s.io/v1beta2 (Kueue v0.15.0 and later; the default).
    V1beta2,
    /// kueue.x-k8s.io/v1beta1 (deprecated; Kueue before v0.15.0).
    V1beta1,
}

impl From<KueueApiArg> for KueueApi {
    fn from(a: KueueApiArg) -> Self {
        match a {
            KueueApiArg::V1beta2 => KueueApi::V1beta2,
            KueueApiArg::V1beta1 => KueueApi::V1beta1,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExportFormat {
    /// YAML (Kubernetes objects and labels).
    Yaml,
    /// JSON for programs (documented in docs/export.md).
    Json,
}

pub fn run(args: ExportArgs) -> Result<ExitCode> {
    let target = args.to;
    if target.is_slurm() && args.format == Some(ExportFormat::Yaml) {
        return Err(BadInput(format!(
            "--format yaml: --to {} prints topology.conf text; leave --format out for it, or use --format json",
            target.as_str()
        ))
        .into());
    }
    if args.kueue_api.is_some() && target != Target::Kueue {
        return Err(BadInput(format!(
            "--kueue-api: only --to kueue writes Kueue objects, not --to {}; leave --kueue-api out",
            target.as_str()
        ))
        .into());
    }
    let kueue_api = args.kueue_api.map(KueueApi::from).unwrap_or_default();
    if target == Target::Topograph
        && let Some(p) = &args.prefix
    {
        return Err(BadInput(format!(
            "--prefix {p}: --to topograph writes topograph's own keys (fabric.topograph.run/, accelerator.topograph.run/); leave --prefix out, or use --to labels"
        ))
        .into());
    }
    let prefix = args.prefix.as_deref().unwrap_or(DEFAULT_PREFIX);
    let json = args.format == Some(ExportFormat::Json);
    let out = match &args.out {
        Some(path) => {
            let (extensions, what): (&[&str], &str) = if json {
                (&["json"], "--format json")
            } else if target.is_slurm() {
                (&["conf"], "topology.conf text")
            } else {
                (&["yaml", "yml"], "YAML")
            };
            Some(output::file_target(path, "--out", extensions, what)?)
        }
        None => None,
    };
    let plan = load_plan(&args.plan)?;
    let plan_file = display(&args.plan);
    let exported = export::export_with(&plan, target, prefix, kueue_api).map_err(|e| match e {
        // The library names the plan; the user knows it by its file.
        planner::Error::Invalid { what, problems, .. } => planner::Error::Invalid {
            file: plan_file.clone(),
            what,
            problems,
        },
        e => e,
    })?;
    let text = if json {
        let mut t = serde_json::to_string_pretty(&exported)?;
        t.push('\n');
        t
    } else {
        exported.text(target)?
    };
    match &out {
        Some(t) => output::commit(vec![output::stage_file(t, |w| {
            Ok(w.write_all(text.as_bytes())?)
        })?])?,
        None => print(&text)?,
    }
    if !json {
        let mut note = String::new();
        for n in &exported.notes {
            note.push_str(&format!("note: {n}\n"));
        }
        if let Some(out) = &args.out {
            note.push_str(&format!(
                "{} written to {}\n",
                target.describe(),
                display(out)
            ));
        }
        note.push_str(&format!(
            "Not expressed by the {} of {}:\n",
            target.describe(),
            plan_file
        ));
        for l in &exported.lost {
            note.push_str(&format!("  - {l}\n"));
        }
        eprint!("{note}");
    }
    Ok(ExitCode::SUCCESS)
}
