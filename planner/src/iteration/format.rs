//! A user's own model: TOML or CSV, one learnable layer per entry, from
//! the input side to the output side (see `docs/iteration.md`).
//!
//! ```toml
//! name = "my-cnn"      # optional: the file name otherwise
//! batch = 64           # the batch the measured times are for (optional)
//!
//! [[layer]]
//! name = "conv1"
//! parameters = 9408
//! forward_ms = 0.21    # measured; or forward_gflops per sample
//! backward_ms = 0.40   # or backward_gflops (default: twice the forward)
//! ```
//!
//! CSV has a header naming its columns, in any order: `name`,
//! `parameters`, and either `forward_ms` and `backward_ms` or
//! `forward_gflops` (and optionally `backward_gflops`). Lines starting
//! with `#` and blank lines are skipped; a line `# batch = 64` gives the
//! batch of measured times.

use serde::Deserialize;
use toml::Spanned;

use super::{Layer, Model, Work};
use crate::error::{Error, Problem, Result};
use crate::limits;
use crate::text;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    name: Option<String>,
    batch: Option<u32>,
    #[serde(default)]
    layer: Vec<Spanned<RawLayer>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLayer {
    name: Option<String>,
    parameters: Option<u64>,
    forward_ms: Option<f64>,
    backward_ms: Option<f64>,
    forward_gflops: Option<f64>,
    backward_gflops: Option<f64>,
}

/// Parses a model file; `file` names it in errors and gives the default
/// model name. CSV when `csv`, TOML otherwise.
pub fn parse(text: &str, file: &str, csv: bool) -> Result<Model> {
    let stem = std::path::Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model")
        .to_string();
    if csv {
        parse_csv(text, file, stem)
    } else {
        parse_toml(text, file, stem)
    }
}

fn parse_toml(text: &str, file: &str, stem: String) -> Result<Model> {
    let raw: RawModel = toml::from_str(text).map_err(|e| Error::toml(file, text, &e))?;
    let mut problems = Vec::new();
    if raw.batch == Some(0) {
        problems.push(Problem::at(
            None,
            "batch",
            "the batch is 0",
            "give the batch the times were measured at, 1 or more",
        ));
    }
    let mut layers = Vec::new();
    for (i, spanned) in raw.layer.iter().enumerate() {
        let line = text::line_of(text, spanned.span().start);
        if let Some(layer) = check_layer(spanned.get_ref(), i, Some(line), &mut problems) {
            layers.push(layer);
        }
    }
    finish(raw.name.unwrap_or(stem), raw.batch, layers, file, problems)
}

fn parse_csv(text: &str, file: &str, stem: String) -> Result<Model> {
    let mut header: Option<Vec<String>> = None;
    let mut batch = None;
    let mut problems = Vec::new();
    let mut layers = Vec::new();
    // Comment lines (`# batch = 64`) first; the records are then read per
    // RFC 4180 (the reader skips comment lines).
    for (n, raw_line) in text.lines().enumerate() {
        let line = n + 1;
        let trimmed = raw_line.trim();
        if let Some(comment) = trimmed.strip_prefix('#')
            && let Some((key, value)) = comment.split_once('=')
            && key.trim() == "batch"
        {
            match value.trim().parse::<u32>() {
                Ok(b) if b > 0 => batch = Some(b),
                _ => problems.push(Problem::at(
                    Some(line),
                    "batch",
                    format!("`{}` is not a batch size", value.trim()),
                    "write e.g. `# batch = 64`",
                )),
            }
        }
    }
    for record in crate::text::read_csv(text, file)? {
        let line = record.line;
        let cells: Vec<&str> = record.fields.iter().map(String::as_str).collect();
        let Some(columns) = &header else {
            let names: Vec<String> = cells.iter().map(|c| c.to_ascii_lowercase()).collect();
            for c in &names {
                if !COLUMNS.contains(&c.as_str()) {
                    return Err(invalid(
                        file,
                        vec![Problem::at(
                            Some(line),
                            format!("column `{c}`"),
                            "is not a column of a model CSV",
                            format!("use {}", COLUMNS.join(", ")),
                        )],
                    ));
                }
            }
            header = Some(names);
            continue;
        };
        if cells.len() != columns.len() {
            problems.push(Problem::at(
                Some(line),
                format!("layer {}", layers.len() + 1),
                format!("has {} cells and the header {}", cells.len(), columns.len()),
                "give one value per column",
            ));
            continue;
        }
        let mut raw = RawLayer::default();
        let mut bad = false;
        for (column, cell) in columns.iter().zip(&cells) {
            if cell.is_empty() {
                continue;
            }
            let number = |problems: &mut Vec<Problem>| -> Option<f64> {
                match cell.parse::<f64>() {
                    Ok(v) => Some(v),
                    Err(_) => {
                        problems.push(Problem::at(
                            Some(line),
                            format!("column {column}"),
                            format!("`{cell}` is not a number"),
                            "write a plain number such as 0.25",
                        ));
                        None
                    }
                }
            };
            match column.as_str() {
                "name" => raw.name = Some((*cell).to_string()),
                "parameters" => match cell.parse::<u64>() {
                    Ok(v) => raw.parameters = Some(v),
                    Err(_) => {
                        problems.push(Problem::at(
                            Some(line),
                            "column parameters",
                            format!("`{cell}` is not a whole number"),
                            "give the layer's parameter count, e.g. 9408",
                        ));
                        bad = true;
                    }
                },
                "forward_ms" => raw.forward_ms = number(&mut problems),
                "backward_ms" => raw.backward_ms = number(&mut problems),
                "forward_gflops" => raw.forward_gflops = number(&mut problems),
                _ => raw.backward_gflops = number(&mut problems),
            }
        }
        if bad {
            continue;
        }
        if let Some(layer) = check_layer(&raw, layers.len(), Some(line), &mut problems) {
            layers.push(layer);
        }
    }
    if header.is_none() {
        problems.push(Problem::at(
            None,
            "header",
            "the file has no header line",
            "start with e.g. `name,parameters,forward_ms,backward_ms`",
        ));
    }
    finish(stem, batch, layers, file, problems)
}

/// The columns a model CSV may have.
const COLUMNS: [&str; 6] = [
    "name",
    "parameters",
    "forward_ms",
    "backward_ms",
    "forward_gflops",
    "backward_gflops",
];

fn invalid(file: &str, problems: Vec<Problem>) -> Error {
    Error::Invalid {
        file: file.to_string(),
        what: "model",
        problems,
    }
}

/// Checks one layer; problems go to `problems`.
fn check_layer(
    raw: &RawLayer,
    index: usize,
    line: Option<usize>,
    problems: &mut Vec<Problem>,
) -> Option<Layer> {
    let name = raw
        .name
        .clone()
        .unwrap_or_else(|| format!("layer{}", index + 1));
    let object = format!("layer {name}");
    let before = problems.len();
    let mut bad = |message: String, fix: &str| {
        problems.push(Problem::at(line, object.clone(), message, fix));
    };
    let Some(parameters) = raw.parameters else {
        bad(
            "has no parameters".into(),
            "give `parameters`, the number of learnable values (0 for none)",
        );
        return None;
    };
    if let Err(e) = limits::LAYER_PARAMS.check(parameters) {
        bad(
            format!("parameters: {e}"),
            "give the layer's own parameter count",
        );
    }
    for (key, v, limit) in [
        ("forward_ms", raw.forward_ms, limits::LAYER_MS),
        ("backward_ms", raw.backward_ms, limits::LAYER_MS),
        ("forward_gflops", raw.forward_gflops, limits::LAYER_GFLOPS),
        ("backward_gflops", raw.backward_gflops, limits::LAYER_GFLOPS),
    ] {
        if let Some(v) = v {
            if !v.is_finite() || v < 0.0 {
                bad(format!("{key} is {v}"), "give a finite number of 0 or more");
            } else if v > limit.max as f64 {
                bad(
                    format!(
                        "{key}: {v} {} is above the limit of {} ({})",
                        limit.what, limit.max, limit.why
                    ),
                    "check the unit (milliseconds, GFLOPs per sample)",
                );
            }
        }
    }
    let measured = raw.forward_ms.is_some() || raw.backward_ms.is_some();
    let flops = raw.forward_gflops.is_some() || raw.backward_gflops.is_some();
    let work = match (measured, flops) {
        (true, true) => {
            bad(
                "gives both measured times and GFLOPs".into(),
                "give forward_ms and backward_ms, or forward_gflops",
            );
            None
        }
        (false, false) => {
            bad(
                "has neither times nor GFLOPs".into(),
                "give forward_ms and backward_ms (measured), or forward_gflops per sample",
            );
            None
        }
        (true, false) => match (raw.forward_ms, raw.backward_ms) {
            (Some(f), Some(b)) => Some(Work::Measured {
                forward_us: f * 1000.0,
                backward_us: b * 1000.0,
            }),
            _ => {
                bad(
                    "gives only one of forward_ms and backward_ms".into(),
                    "give both",
                );
                None
            }
        },
        (false, true) => match raw.forward_gflops {
            Some(f) => Some(Work::Flops {
                forward: f * 1e9,
                backward: raw.backward_gflops.unwrap_or(2.0 * f) * 1e9,
            }),
            None => {
                bad(
                    "gives backward_gflops without forward_gflops".into(),
                    "give forward_gflops too",
                );
                None
            }
        },
    };
    if problems.len() > before {
        return None;
    }
    work.map(|work| Layer {
        name,
        parameters,
        work,
    })
}

fn finish(
    name: String,
    batch: Option<u32>,
    layers: Vec<Layer>,
    file: &str,
    mut problems: Vec<Problem>,
) -> Result<Model> {
    if problems.is_empty() && layers.is_empty() {
        problems.push(Problem::at(
            None,
            "model",
            "has no layers",
            "add one [[layer]] table (TOML) or row (CSV) per learnable layer, input side first",
        ));
    }
    if let Err(e) = limits::MODEL_LAYERS.check(layers.len() as u64) {
        problems.push(Problem::at(
            None,
            "model",
            e,
            "merge layers that are computed together into one entry",
        ));
    }
    let measured = layers
        .iter()
        .filter(|l| matches!(l.work, Work::Measured { .. }))
        .count();
    if measured > 0 && measured < layers.len() {
        problems.push(Problem::at(
            None,
            "model",
            format!(
                "{measured} of {} layers give measured times and the others GFLOPs",
                layers.len()
            ),
            "give every layer the same kind of cost",
        ));
    }
    if layers.iter().all(|l| l.parameters == 0) && !layers.is_empty() {
        problems.push(Problem::at(
            None,
            "model",
            "no layer has parameters, so there is nothing to communicate",
            "give each learnable layer's parameter count",
        ));
    }
    if !problems.is_empty() {
        problems.truncate(20);
        return Err(invalid(file, problems));
    }
    Ok(Model {
        name,
        batch,
        layers,
    })
}
