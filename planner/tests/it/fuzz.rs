//! The fuzz harness of issue #13, in process: property tests that mutate
//! the bundled inputs (inventories, plans, cabling files, the catalog,
//! iteration models, QoS overrides, rank files; see [`mutate`]) and run
//! every command's library entry point on them, as the `planner` binary
//! does. Each case asserts:
//!
//! - no panic (`catch_unwind`);
//! - every refusal names the mutated file (its display contains the file
//!   name);
//! - accepted output re-validates: a design's plan passes `validate`, its
//!   JSON parses back, its cable list validates against it, rendered
//!   configurations and exports parse back;
//! - names round-trip through every writer and reader (cable CSV, rank
//!   CSV, Open MPI rankfile and hostfile).
//!
//! It is a module of the one integration-test binary (a target of its
//! own cost CI a link of the whole planner for 16 tests); an abort (an
//! allocation failure is not a panic) still fails that binary, so it
//! cannot pass unseen. `FUZZ_CASES=N` sets the cases per test (default 64:
//! the module takes seconds on 2 cores) and `FUZZ_SEED` picks them (fixed
//! by default, so CI runs the same cases on every machine);
//! `cargo test -p planner --test it fuzz_survey -- --ignored` runs every
//! target over `FUZZ_CASES` seeds and prints each distinct failure once.
//! `examples/fuzz_campaign.rs` runs the same mutations over the binaries
//! with a time and memory limit per run ([`campaign`]).

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use planner::render::parse as render_parse;
use proptest::prelude::*;
use testkit::{campaign, mutate};

use mutate::{
    CABLING, CATALOG, EFLOPS_PLAN, Format, INVENTORIES, MODELS, Mutated, PLANS, QOS, RANK_FILE,
    Rng, Scale, read, root,
};
use planner::checked::CheckedPlan;
use planner::cost::{self, Catalog};
use planner::design::{DesignOptions, design};
use planner::estimate::{self, Method, Options, Params};
use planner::export::{self, DEFAULT_PREFIX, Target};
use planner::inventory::{Inventory, qos_overrides_from_toml};
use planner::iteration::{self, Compute, Setup};
use planner::plan::{Plan, Topology};
use planner::ranks::{self, Algorithm, Request, Solver, format as rank_format};
use planner::render::{self, Vendor};
use planner::validate::{self, cabling};
use planner::{compare, report, servers};

/// Cases per property test: `FUZZ_CASES`, or 64.
fn cases() -> u32 {
    u32::try_from(mutate::env_number("FUZZ_CASES", 64)).unwrap_or(u32::MAX)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        // The input is a seed: shrinking it only finds another case.
        max_shrink_iters: 0,
        failure_persistence: None,
        // The same cases on every run (`FUZZ_SEED` picks others), so a
        // failure in CI replays on any machine.
        rng_seed: proptest::test_runner::RngSeed::Fixed(mutate::env_number("FUZZ_SEED", 0)),
        ..ProptestConfig::default()
    }
}

/// One mutated input: the name it is known by in errors, its text and
/// what was done to it.
#[derive(Debug)]
struct Input {
    source: &'static str,
    file: String,
    mutated: Mutated,
}

impl Input {
    fn new(sources: &[&'static str], seed: u64) -> Input {
        let mut rng = Rng::new(seed);
        let source = *rng.pick(sources);
        let original = read(source);
        let name = Path::new(source).file_name().unwrap().to_string_lossy();
        let format = Format::of(Path::new(source));
        Input {
            source,
            // A name no object in any bundled file has, so finding it in an
            // error means the error names the file.
            file: format!("fuzz-{seed:016x}-{name}"),
            mutated: mutate::mutate(&original, format, Scale::Bounded, &mut rng),
        }
    }

    fn text(&self) -> &str {
        &self.mutated.text
    }

    /// How to reproduce the case: the source, the mutations and the diff.
    fn describe(&self) -> String {
        format!(
            "input {} (from {}), mutations: {}\n{}",
            self.file,
            self.source,
            self.mutated.steps.join("; "),
            mutate::diff(&read(self.source), self.text())
        )
    }
}

/// A failed property, with a short kind that groups equal failures.
#[derive(Debug)]
struct Failure {
    kind: String,
    detail: String,
}

type Check = Result<(), Failure>;

fn fail(kind: impl Into<String>, detail: impl Into<String>) -> Check {
    Err(Failure {
        kind: kind.into(),
        detail: detail.into(),
    })
}

/// A refusal must name the file it refuses.
fn refused(what: &str, err: &planner::Error, file: &str) -> Check {
    refused_by(what, err, &[file])
}

/// A refusal must name one of the files it was given (a price missing
/// from the catalog may be the catalog's fault or the plan's).
fn refused_by(what: &str, err: &planner::Error, files: &[&str]) -> Check {
    let text = err.to_string();
    let Some(file) = files.iter().find(|f| text.contains(**f)) else {
        return fail(
            format!("{what}: refusal does not name the file"),
            format!("error: {text}"),
        );
    };
    let rest = text.replacen(*file, "", 1);
    if rest
        .trim_matches(|c: char| c.is_whitespace() || c == ':')
        .is_empty()
    {
        return fail(
            format!("{what}: refusal names no object"),
            format!("error: {text}"),
        );
    }
    Ok(())
}

/// Runs `f`, turning a panic into a failure.
fn guarded(what: &str, f: impl FnOnce() -> Check) -> Check {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|payload| fail(format!("{what}: panic"), mutate::panic_message(&*payload)))
}

/// Runs `target` on `seed` and reports a failure with its reproduction.
fn run(target: FuzzTarget, seed: u64) -> Result<(), String> {
    let (input, check) = (target.run)(seed);
    check.map_err(|f| {
        format!(
            "[{}] seed {seed}: {}\n{}\n{}",
            target.name,
            f.kind,
            f.detail,
            input.describe()
        )
    })
}

/// One fuzz target: a name and a function from a seed to its input and
/// verdict.
#[derive(Clone, Copy)]
struct FuzzTarget {
    name: &'static str,
    run: fn(u64) -> (Input, Check),
}

const TARGETS: &[FuzzTarget] = &[
    FuzzTarget {
        name: "inventory",
        run: inventory_case,
    },
    FuzzTarget {
        name: "plan-validate-cables",
        run: plan_validate_case,
    },
    FuzzTarget {
        name: "plan-ranks",
        run: plan_ranks_case,
    },
    FuzzTarget {
        name: "plan-render",
        run: plan_render_case,
    },
    FuzzTarget {
        name: "plan-export",
        run: plan_export_case,
    },
    FuzzTarget {
        name: "plan-cost-simulate-iteration",
        run: plan_estimate_case,
    },
    FuzzTarget {
        name: "cabling",
        run: cabling_case,
    },
    FuzzTarget {
        name: "catalog",
        run: catalog_case,
    },
    FuzzTarget {
        name: "model",
        run: model_case,
    },
    FuzzTarget {
        name: "qos",
        run: qos_case,
    },
    FuzzTarget {
        name: "rank-file",
        run: rank_file_case,
    },
    FuzzTarget {
        name: "names",
        run: names_case,
    },
    FuzzTarget {
        name: "compact-plan",
        run: compact_plan_case,
    },
];

fn target(name: &str) -> FuzzTarget {
    *TARGETS.iter().find(|t| t.name == name).unwrap()
}

fn eflops_plan() -> CheckedPlan {
    CheckedPlan::load(&read(EFLOPS_PLAN), EFLOPS_PLAN).unwrap()
}

// ---------------------------------------------------------------------
// Properties shared by the targets.

/// Everything the planner promises about a plan it accepted or wrote:
/// `validate` passes, the JSON parses back to the same plan, and its own
/// cable list validates against it with every name intact.
fn plan_revalidates(what: &str, p: &CheckedPlan) -> Check {
    let v = validate::validate_plan(p);
    if !v.ok {
        return fail(
            format!("{what}: plan fails validate"),
            validate::render_table(&v, "plan.json"),
        );
    }
    let json = p.to_json().map_err(|e| Failure {
        kind: format!("{what}: plan JSON cannot be written"),
        detail: e.to_string(),
    })?;
    match Plan::parse(&json, "roundtrip.json") {
        Ok(back) => {
            if back.to_json().ok().as_deref() != Some(json.as_str()) {
                return fail(format!("{what}: plan JSON does not round-trip"), "");
            }
        }
        Err(e) => {
            return fail(
                format!("{what}: plan JSON does not parse back"),
                e.to_string(),
            );
        }
    }
    cables_round_trip(what, p)
}

/// `cables` CSV parses back with the same names and validates against its
/// own plan.
fn cables_round_trip(what: &str, p: &CheckedPlan) -> Check {
    let csv = p.cables_csv();
    let rows = match cabling::parse_csv(&csv, "cables.csv") {
        Ok(r) => r,
        Err(e) => {
            return fail(
                format!("{what}: cables CSV does not parse back"),
                e.to_string(),
            );
        }
    };
    let mut switches: Vec<&str> = rows.iter().map(|r| r.device.as_str()).collect();
    switches.sort_unstable();
    switches.dedup();
    let mut planned: Vec<&str> = p.switch_list.iter().map(|s| s.physical.as_str()).collect();
    planned.sort_unstable();
    planned.dedup();
    if let Some(lost) = switches.iter().find(|s| planned.binary_search(s).is_err()) {
        return fail(
            format!("{what}: cables CSV changes a switch name"),
            format!("{lost:?} read back is not a switch of the plan"),
        );
    }
    let v = validate::validate_cabling(p, &rows, &["cables.csv".to_string()]);
    if !v.ok {
        return fail(
            format!("{what}: plan fails validate --cabling against its own cable list"),
            validate::render_table(&v, "plan.json"),
        );
    }
    Ok(())
}

/// Rank tables in every format: CSV parses back to the same table, every
/// rankfile and hostfile line has the expected fields and a server name of
/// the plan.
fn rank_formats_round_trip(what: &str, p: &CheckedPlan, table: &ranks::RankTable) -> Check {
    let csv = rank_format::to_csv(p, table);
    match rank_format::read_rank_file(&csv, "ranks.csv", p) {
        Ok((_, order)) if order == table.ranks => {}
        Ok(_) => return fail(format!("{what}: rank CSV reads back another table"), csv),
        Err(e) => {
            return fail(
                format!("{what}: rank CSV does not read back"),
                e.to_string(),
            );
        }
    }
    let width = csv.lines().next().map_or(0, |h| h.split(',').count());
    if let Some(l) = csv.lines().find(|l| l.split(',').count() != width) {
        return fail(
            format!("{what}: rank CSV row has another cell count than its header"),
            format!("{l:?}"),
        );
    }
    let servers: Vec<&str> = p.servers.iter().map(|s| s.name.as_str()).collect();
    // A rankfile or hostfile may refuse a host it cannot carry (the name
    // rule makes that rare); what it writes must read back.
    let Ok(rankfile) = rank_format::to_rankfile(p, table) else {
        return Ok(());
    };
    if rankfile.lines().count() != table.ranks.len() {
        return fail(
            format!("{what}: rankfile has another line count than ranks"),
            format!(
                "{} lines for {} ranks",
                rankfile.lines().count(),
                table.ranks.len()
            ),
        );
    }
    for (i, l) in rankfile.lines().enumerate() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let host = f
            .get(1)
            .and_then(|h| h.strip_prefix(&format!("{i}=")))
            .unwrap_or("");
        if f.len() != 3 || f[0] != "rank" || !servers.contains(&host) || !f[2].starts_with("slot=")
        {
            return fail(
                format!("{what}: rankfile line does not read back"),
                format!("line {}: {l:?}", i + 1),
            );
        }
    }
    let Ok(hostfile) = rank_format::to_hostfile(p, table) else {
        return Ok(());
    };
    for l in hostfile.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() != 2 || !servers.contains(&f[0]) || !f[1].starts_with("slots=") {
            return fail(
                format!("{what}: hostfile line does not read back"),
                format!("{l:?}"),
            );
        }
    }
    Ok(())
}

/// A plan input: parsed (or the refusal checked), then `f` on it with the
/// verdict of `validate`.
fn with_plan(
    seed: u64,
    what: &str,
    f: impl FnOnce(&Input, &CheckedPlan, bool) -> Check,
) -> (Input, Check) {
    let input = Input::new(PLANS, seed);
    let check = guarded(what, || {
        match CheckedPlan::load(input.text(), &input.file) {
            Err(e) => {
                // The load refuses exactly what validate finds.
                if let Ok(p) = Plan::parse(input.text(), &input.file)
                    && validate::validate_plan(&p).ok
                {
                    return fail(
                        format!("{what}: the load refuses a plan validate passes"),
                        e.to_string(),
                    );
                }
                refused("plan load", &e, &input.file)
            }
            Ok(p) => f(&input, &p, true),
        }
    });
    (input, check)
}

// ---------------------------------------------------------------------
// The targets.

/// check-servers, design (BiGraph and fat-tree), compare on a mutated
/// inventory; every design re-validates.
fn inventory_case(seed: u64) -> (Input, Check) {
    let input = Input::new(INVENTORIES, seed);
    let check = guarded("inventory", || {
        let inv = match Inventory::from_toml(input.text(), &input.file) {
            Ok(inv) => inv,
            Err(e) => return refused("inventory", &e, &input.file),
        };
        let check = servers::check_servers(&inv);
        let _ = servers::render_table(&check, &input.file);
        for topology in [Topology::BiGraph, Topology::FatTree] {
            let opts = DesignOptions {
                topology,
                ..DesignOptions::default()
            };
            match design(&inv, &opts) {
                Ok(p) => {
                    let _ = report::render_design(&p, &input.file);
                    plan_revalidates(&format!("design {}", topology.as_str()), &p)?;
                }
                Err(e) => refused(&format!("design {}", topology.as_str()), &e, &input.file)?,
            }
        }
        let opts = DesignOptions {
            topology: Topology::FatTree,
            ..DesignOptions::default()
        };
        let c = compare::compare(&inv, &opts);
        let _ = compare::render_table(&c, &input.file);
        Ok(())
    });
    (input, check)
}

/// validate and cables on a mutated plan: a plan `validate` passes
/// re-validates through its JSON and its own cable list.
fn plan_validate_case(seed: u64) -> (Input, Check) {
    with_plan(seed, "plan-validate-cables", |input, p, ok| {
        let v = validate::validate_plan(p);
        let _ = validate::render_table(&v, &input.file);
        let _ = report::render_cables(p);
        let _ = serde_json::to_string(&p.cables);
        if ok {
            plan_revalidates("validated plan", p)?;
        }
        Ok(())
    })
}

/// ranks (hdrm, hd, ring; every format) and verify-ranks on a mutated
/// plan.
fn plan_ranks_case(seed: u64) -> (Input, Check) {
    with_plan(seed, "plan-ranks", |input, p, _| {
        for algorithm in [Algorithm::Hdrm, Algorithm::Hd, Algorithm::Ring] {
            let what = format!("ranks --algorithm {}", algorithm.as_str());
            let request = Request {
                algorithm,
                ranks: None,
                avoid: Vec::new(),
                solver: Solver::Heuristic,
                seed: 0,
                unavailable: Vec::new(),
                engine: ranks::Engine::Probe,
            };
            let outcome = match ranks::plan_ranks(p, &request) {
                Ok(o) => o,
                Err(e) => {
                    refused(&what, &e, &input.file)?;
                    continue;
                }
            };
            let _ = rank_format::to_table(p, &outcome.table);
            let _ = serde_json::to_string(&rank_format::RankDocument::new(p, &request, &outcome));
            rank_formats_round_trip(&what, p, &outcome.table)?;
            if let Err(e) = rank_format::verify_report(
                p,
                rank_format::VerifyRequest::new(&outcome.table, what.clone(), Default::default()),
            ) {
                refused(&format!("verify-ranks {what}"), &e, &input.file)?;
            }
        }
        Ok(())
    })
}

/// render for every vendor and hosts, and check-qos; configurations parse
/// back.
fn plan_render_case(seed: u64) -> (Input, Check) {
    with_plan(seed, "plan-render", |input, p, _| {
        let _ = render::check_qos(p);
        for vendor in Vendor::ALL {
            let what = format!("render --vendor {}", vendor.as_str());
            match render::render(p, vendor) {
                Ok(files) => {
                    for (name, text) in &files {
                        render_keeps_names(vendor, name, text)?;
                    }
                }
                Err(e) => refused(&what, &e, &input.file)?,
            }
        }
        match render::render_hosts(p) {
            Ok(files) => {
                for (name, text) in &files {
                    if name.ends_with(".json")
                        && serde_json::from_str::<serde_json::Value>(text).is_err()
                    {
                        return fail("render --hosts: JSON does not parse back", name.clone());
                    }
                    if name.ends_with(".env") {
                        env_file_lines_are_safe(name, text)?;
                    }
                }
            }
            Err(e) => refused("render --hosts", &e, &input.file)?,
        }
        Ok(())
    })
}

/// Every line of a host `.env` file is a comment, blank, an assignment
/// whose value needs no quoting, or a line of the `planner_slot` or
/// `planner_routing` function (`planner_route`, which takes no plan data,
/// is skipped); no line has an unquoted shell metacharacter.
fn env_file_lines_are_safe(name: &str, text: &str) -> Check {
    no_raw_controls("render --hosts", name, text)?;
    let mut in_function = false;
    let mut in_fixed = false;
    for l in text.lines() {
        if l.starts_with("planner_route() {") {
            in_fixed = true;
            continue;
        }
        if in_fixed {
            in_fixed = l != "}";
            continue;
        }
        if l.starts_with("planner_slot() {") || l.starts_with("planner_routing() {") {
            in_function = true;
            continue;
        }
        if in_function {
            in_function = l != "}";
            let body = l
                .replace(">&2; return 1 ;;", "")
                .replace(" ;;", "")
                .replace(" || return 1", "");
            if shell_injected(&body) {
                return fail(
                    "render --hosts: .env line with an unquoted shell metacharacter",
                    format!("{name}: {l:?}"),
                );
            }
            continue;
        }
        let assignment = l.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if l.is_empty() || l.starts_with('#') || l == "set -e" {
            continue;
        }
        if !assignment || shell_injected(l) {
            return fail(
                "render --hosts: .env line that is neither comment nor safe assignment",
                format!("{name}: {l:?}"),
            );
        }
    }
    Ok(())
}

/// True when a shell line has a metacharacter (or whitespace in a word)
/// outside quotes: what a name must never bring into a script.
fn shell_injected(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with('#') {
        return false;
    }
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut prev = ' ';
    for c in t.chars() {
        if escaped {
            escaped = false;
        } else if single {
            single = c != '\'';
        } else if double {
            match c {
                '\\' => escaped = true,
                '"' => double = false,
                '`' => return true,
                '(' if prev == '$' => return true,
                _ => {}
            }
        } else {
            match c {
                '\\' => escaped = true,
                '\'' => single = true,
                '"' => double = true,
                ';' | '&' | '|' | '`' | '<' | '>' => return true,
                '(' if prev == '$' => return true,
                _ => {}
            }
        }
        prev = c;
    }
    single || double
}

/// No control character but tab and newline, and no Unicode line or
/// direction control, reaches a file that people or parsers read by line.
fn no_raw_controls(what: &str, name: &str, text: &str) -> Check {
    let bad = text.chars().find(|&c| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202e}' | '\u{feff}')
    });
    match bad {
        Some(c) => fail(
            format!("{what}: raw control character in the output"),
            format!("{name}: {c:?}"),
        ),
        None => Ok(()),
    }
}

/// export to every target; YAML parses back.
fn plan_export_case(seed: u64) -> (Input, Check) {
    with_plan(seed, "plan-export", |input, p, _| {
        for &t in Target::ALL {
            let what = format!("export --to {}", t.as_str());
            match export::export(p, t, DEFAULT_PREFIX).and_then(|e| e.text(t)) {
                Ok(text) => {
                    if !t.is_slurm() {
                        for doc in serde_norway::Deserializer::from_str(&text) {
                            if let Err(e) =
                                <serde_norway::Value as serde::Deserialize>::deserialize(doc)
                            {
                                return fail(
                                    format!("{what}: YAML does not parse back"),
                                    e.to_string(),
                                );
                            }
                        }
                    }
                }
                Err(e) => refused(&what, &e, &input.file)?,
            }
        }
        Ok(())
    })
}

/// cost, simulate (closed form) and iteration on a mutated plan.
fn plan_estimate_case(seed: u64) -> (Input, Check) {
    let catalog = Catalog::from_toml(&read(CATALOG), CATALOG).unwrap();
    with_plan(seed, "plan-cost-simulate-iteration", |input, p, _| {
        match cost::cost_plan(p, &catalog, None) {
            Ok(c) => {
                let _ = cost::render_plan_cost(&c, &catalog, &input.file);
            }
            Err(e) => refused_by("cost", &e, &[&input.file, CATALOG])?,
        }
        let options = Options {
            method: Method::ClosedForm,
            seeds: vec![0],
            threads: 1,
            routing: planner::ranks::Policy::Ecmp,
            sends: None,
        };
        for a in [estimate::Algorithm::Ring, estimate::Algorithm::Hdrm] {
            if let Err(e) = estimate::size_sweep(
                p,
                &[a],
                &[1 << 20, 1 << 26],
                None,
                &Params::default(),
                &options,
                &mut |_, _| {},
            ) {
                refused("simulate", &e, &input.file)?;
            }
        }
        iteration_on(p, &input.file, "iteration")
    })
}

fn iteration_on(p: &CheckedPlan, file: &str, what: &str) -> Check {
    let model = iteration::Model::built_in("resnet50").expect("resnet50 is built in");
    iteration_with(&model, p, file, what)
}

fn iteration_with(model: &iteration::Model, p: &CheckedPlan, file: &str, what: &str) -> Check {
    let setup = Setup {
        ranks: None,
        algorithms: vec![estimate::Algorithm::Ring],
        compute: Compute {
            batch: None,
            gpu_tflops: iteration::DEFAULT_TFLOPS,
            gpu_source: None,
            gradient_bytes: 4,
        },
        params: Params::default(),
        options: Options {
            method: Method::ClosedForm,
            seeds: vec![0],
            threads: 1,
            routing: planner::ranks::Policy::Ecmp,
            sends: None,
        },
        comm: None,
    };
    match iteration::report(model, std::slice::from_ref(p), &setup) {
        Ok(r) => {
            let _ = iteration::render_table(&r);
            Ok(())
        }
        Err(e) => refused(what, &e, file),
    }
}

/// validate --cabling with mutated cabling files, and the cable list of
/// another plan (cross-file).
fn cabling_case(seed: u64) -> (Input, Check) {
    let p = eflops_plan();
    let mut rng = Rng::new(seed ^ 0x5eed);
    // One case in six: the cable list of another design, unmutated.
    let input = if rng.chance(1, 6) {
        let other = *rng.pick(&[
            "topologies/fat-tree-64.toml",
            "topologies/fat-tree-k16.toml",
        ]);
        let inv = Inventory::from_toml(&read(other), other).unwrap();
        let opts = DesignOptions {
            topology: Topology::FatTree,
            ..DesignOptions::default()
        };
        let text = design(&inv, &opts).unwrap().cables_csv();
        Input {
            source: other,
            file: format!("fuzz-{seed:016x}-other.cables.csv"),
            mutated: Mutated {
                text,
                steps: vec![format!("the cable list of {other}'s fat-tree")],
            },
        }
    } else {
        Input::new(CABLING, seed)
    };
    let check = guarded("cabling", || {
        let rows = if input.file.ends_with(".json") {
            cabling::parse_lldp(input.text(), &input.file, "eflops-4x16.lldp")
        } else {
            cabling::parse_csv(input.text(), &input.file)
        };
        match rows {
            Ok(rows) => {
                let v = validate::validate_cabling(&p, &rows, std::slice::from_ref(&input.file));
                let _ = validate::render_table(&v, EFLOPS_PLAN);
                if input.source.starts_with("topologies/") && v.ok {
                    return fail(
                        "validate --cabling passes another plan's cable list",
                        String::new(),
                    );
                }
                Ok(())
            }
            Err(e) => refused("cabling", &e, &input.file),
        }
    });
    (input, check)
}

/// cost, compare with a catalog and purchase on a mutated catalog.
fn catalog_case(seed: u64) -> (Input, Check) {
    let p = eflops_plan();
    let input = Input::new(&[CATALOG], seed);
    let check = guarded("catalog", || {
        let catalog = match Catalog::from_toml(input.text(), &input.file) {
            Ok(c) => c,
            Err(e) => return refused("catalog", &e, &input.file),
        };
        match cost::cost_plan(&p, &catalog, None) {
            Ok(c) => {
                let _ = cost::render_plan_cost(&c, &catalog, EFLOPS_PLAN);
            }
            Err(e) => refused("cost", &e, &input.file)?,
        }
        let inv =
            Inventory::from_toml(&read("topologies/eflops-4x16.toml"), "eflops-4x16.toml").unwrap();
        let opts = DesignOptions {
            topology: Topology::FatTree,
            ..DesignOptions::default()
        };
        let c = compare::compare(&inv, &opts);
        let _ = cost::render_comparison_costs(&cost::cost_comparison(&c, &catalog), &catalog);
        for gpus in [64, 512] {
            let req = cost::Request {
                gpus,
                growth: None,
                topology: cost::Want::Any,
                budget: None,
                oversubscription: 1.0,
                min_bisection: 1.0,
                failures: None,
            };
            match cost::purchase(&catalog, &req) {
                Ok(pu) => {
                    let _ = cost::render_purchase(&pu, &catalog, &req);
                }
                Err(e) => refused(&format!("purchase --gpus {gpus}"), &e, &input.file)?,
            }
        }
        Ok(())
    });
    (input, check)
}

/// iteration with a mutated model file.
fn model_case(seed: u64) -> (Input, Check) {
    let p = eflops_plan();
    let input = Input::new(MODELS, seed);
    let check = guarded("model", || {
        let csv = input.file.ends_with(".csv");
        match iteration::format::parse(input.text(), &input.file, csv) {
            Ok(model) => iteration_with(&model, &p, &input.file, "iteration --model"),
            Err(e) => refused("model", &e, &input.file),
        }
    });
    (input, check)
}

/// render and check-qos with mutated QoS overrides.
fn qos_case(seed: u64) -> (Input, Check) {
    let mut p = eflops_plan();
    let input = Input::new(QOS, seed);
    let check = guarded("qos", || {
        let mut physical: Vec<String> = p
            .switch_list
            .iter()
            .map(|s| s.physical.to_string())
            .collect();
        physical.dedup();
        let physical: Vec<&str> = physical.iter().map(String::as_str).collect();
        let overrides = match qos_overrides_from_toml(input.text(), &input.file, &physical) {
            Ok(o) => o,
            Err(e) => return refused("qos overrides", &e, &input.file),
        };
        if let Err(e) = render::apply_qos_overrides(&mut p, &overrides) {
            return refused("qos overrides", &e, &input.file);
        }
        let _ = render::render_qos_table(&render::check_qos(&p));
        for vendor in Vendor::ALL {
            if let Ok(files) = render::render(&p, vendor) {
                for (name, text) in &files {
                    if let Err(e) = render_parse::parse(vendor, text, name) {
                        return fail(
                            format!(
                                "render --vendor {} --qos: output does not parse back",
                                vendor.as_str()
                            ),
                            e.to_string(),
                        );
                    }
                }
            }
        }
        Ok(())
    });
    (input, check)
}

/// verify-ranks --ranks-file with a mutated rank file.
fn rank_file_case(seed: u64) -> (Input, Check) {
    let p = eflops_plan();
    let input = Input::new(&[RANK_FILE], seed);
    let check = guarded("rank-file", || {
        match rank_format::read_rank_file(input.text(), &input.file, &p) {
            Ok((_, order)) => {
                let table = ranks::RankTable {
                    algorithm: Algorithm::Hd,
                    ranks: order,
                };
                if let Err(e) = rank_format::verify_report(
                    &p,
                    rank_format::VerifyRequest::new(&table, input.file.clone(), Default::default()),
                ) {
                    refused("verify-ranks --ranks-file", &e, &input.file)?;
                }
                Ok(())
            }
            Err(e) => refused("rank file", &e, &input.file),
        }
    });
    (input, check)
}

/// The compact plan (`planner design --out plan.cplan`): the plan (the
/// mutated JSON when it parses, else the bundled one) written compact
/// reads back equal; then its bytes are changed (a byte flipped, set,
/// inserted or removed, or the file cut), and half the time the header's
/// length and checksum are written again for the changed body, so that
/// the reader's own checks of the body are reached. The reader refuses
/// the file naming it, or reads a plan that the load check passes or
/// refuses naming it; never a panic.
fn compact_plan_case(seed: u64) -> (Input, Check) {
    let input = Input::new(PLANS, seed);
    let check = guarded("compact-plan", || {
        let plan = Plan::parse(input.text(), &input.file)
            .or_else(|_| Plan::parse(&read(input.source), &input.file))
            .map_err(|e| Failure {
                kind: "compact-plan: a bundled plan does not parse".to_string(),
                detail: e.to_string(),
            })?;
        let mut bytes = plan.to_compact().map_err(|e| Failure {
            kind: "compact-plan: the plan cannot be written compact".to_string(),
            detail: e.to_string(),
        })?;
        match Plan::from_compact(&bytes, &input.file) {
            Ok(back) if back == plan => {}
            Ok(_) => return fail("compact-plan: the plan reads back changed", ""),
            Err(e) => return fail("compact-plan: its own file is refused", e.to_string()),
        }
        // The layout of docs/plan-format.md: the body's length at byte
        // 12, its checksum at 20, the body from 28.
        let body = 28;
        let mut rng = Rng::new(seed ^ 0xc0a1_1c7a);
        for _ in 0..1 + rng.below(3) {
            let at = body + rng.below(bytes.len() - body);
            match rng.below(5) {
                0 => bytes[at] ^= 1 << rng.below(8),
                1 => bytes[at] = rng.next_u64() as u8,
                2 => bytes.insert(at, rng.next_u64() as u8),
                3 => {
                    bytes.remove(at);
                }
                _ => bytes.truncate(at),
            }
            if bytes.len() <= body {
                break;
            }
        }
        if rng.chance(1, 2) && bytes.len() >= body {
            let len = (bytes.len() - body) as u64;
            let sum = planner::plan_compact::checksum(&bytes[body..]);
            bytes[12..20].copy_from_slice(&len.to_le_bytes());
            bytes[20..28].copy_from_slice(&sum.to_le_bytes());
        }
        match Plan::from_compact(&bytes, &input.file) {
            Err(e) => refused("compact plan", &e, &input.file),
            Ok(p) => match p.check(&input.file) {
                Err(e) => refused("compact plan load", &e, &input.file),
                Ok(_) => Ok(()),
            },
        }
    });
    (input, check)
}

/// Names: one name of the EFLOPS inventory changed (newline, `;`, quotes,
/// commas, U+0085, trailing space, ...). Either the inventory is refused
/// naming the file, or every writer's output reads back with the name.
fn names_case(seed: u64) -> (Input, Check) {
    const SOURCE: &str = "topologies/eflops-4x16.toml";
    let original = read(SOURCE);
    let mut rng = Rng::new(seed);
    // Only name mutations: repeat until one changed the text.
    let mut mutated = mutate::mutate(&original, Format::Toml, Scale::Bounded, &mut rng);
    for _ in 0..32 {
        if mutated.steps.iter().all(|s| s.contains(": string ")) && mutated.text != original {
            break;
        }
        mutated = mutate::mutate(&original, Format::Toml, Scale::Bounded, &mut rng);
    }
    let input = Input {
        source: SOURCE,
        file: format!("fuzz-{seed:016x}-eflops-4x16.toml"),
        mutated,
    };
    let check = guarded("names", || {
        let inv = match Inventory::from_toml(input.text(), &input.file) {
            Ok(inv) => inv,
            Err(e) => return refused("inventory", &e, &input.file),
        };
        let p = match design(&inv, &DesignOptions::default()) {
            Ok(p) => p,
            Err(e) => return refused("design", &e, &input.file),
        };
        plan_revalidates("design", &p)?;
        let request = Request {
            algorithm: Algorithm::Hdrm,
            ranks: None,
            avoid: Vec::new(),
            solver: Solver::Heuristic,
            seed: 0,
            unavailable: Vec::new(),
            engine: ranks::Engine::Probe,
        };
        match ranks::plan_ranks(&p, &request) {
            Ok(o) => rank_formats_round_trip("ranks", &p, &o.table)?,
            Err(e) => refused("ranks", &e, &input.file)?,
        }
        for vendor in Vendor::ALL {
            if let Ok(files) = render::render(&p, vendor) {
                for (name, text) in &files {
                    render_keeps_names(vendor, name, text)?;
                }
            }
        }
        if let Ok(files) = render::render_hosts(&p) {
            for (name, text) in files.iter().filter(|(n, _)| n.ends_with(".env")) {
                env_file_lines_are_safe(name, text)?;
            }
        }
        Ok(())
    });
    (input, check)
}

/// A rendered configuration parses back, carries no raw control
/// character, and no name added a line: no `rank 99=evil` or stray
/// `shutdown` (Comware, EOS), no unquoted shell metacharacter (NVUE).
fn render_keeps_names(vendor: Vendor, name: &str, text: &str) -> Check {
    let what = format!("render --vendor {}", vendor.as_str());
    if let Err(e) = render_parse::parse(vendor, text, name) {
        return fail(format!("{what}: output does not parse back"), e.to_string());
    }
    no_raw_controls(&what, name, text)?;
    let mut prev = "";
    for l in text.lines() {
        let t = l.trim();
        let stray_shutdown = t.starts_with("shutdown")
            && (t != "shutdown" || !prev.starts_with("description free for growth"));
        // Every vendor: no line a name made (a JSON file's lines start
        // with a quote or a brace, an NVUE script's with `nv `, so the
        // check holds for them too); NVUE's shell script, besides, runs
        // only `nv` commands, and no name may end one.
        let shell_script = vendor == Vendor::Nvue
            && (!(t.is_empty() || t.starts_with('#') || t.starts_with("nv ") || t == "set -e")
                || shell_injected(l));
        let injected = stray_shutdown || t.starts_with("rank 99") || shell_script;
        if injected {
            return fail(
                format!("{what}: a name injected a line or a command"),
                format!("{name}: {l:?}"),
            );
        }
        prev = t;
    }
    Ok(())
}

// ---------------------------------------------------------------------
// The property tests, one per target, and the survey.

macro_rules! fuzz_test {
    ($test:ident, $target:literal) => {
        proptest! {
            #![proptest_config(config())]
            #[test]
            fn $test(seed in any::<u64>()) {
                let r = run(target($target), seed);
                prop_assert!(r.is_ok(), "{}", r.unwrap_err());
            }
        }
    };
}

fuzz_test!(fuzz_inventory_check_servers_design_compare, "inventory");
fuzz_test!(fuzz_plan_validate_cables, "plan-validate-cables");
fuzz_test!(fuzz_plan_ranks_all_formats_verify, "plan-ranks");
fuzz_test!(fuzz_plan_render_every_vendor_hosts_check_qos, "plan-render");
fuzz_test!(fuzz_plan_export_every_target, "plan-export");
fuzz_test!(
    fuzz_plan_cost_simulate_iteration,
    "plan-cost-simulate-iteration"
);
fuzz_test!(fuzz_cabling_files_and_cross_plan, "cabling");
fuzz_test!(fuzz_catalog_cost_compare_purchase, "catalog");
fuzz_test!(fuzz_iteration_model_files, "model");
fuzz_test!(fuzz_qos_overrides_render_check_qos, "qos");
fuzz_test!(fuzz_verify_ranks_rank_file, "rank-file");
fuzz_test!(fuzz_names_round_trip_every_writer, "names");
fuzz_test!(fuzz_compact_plan_bytes, "compact-plan");

/// The short campaign CI runs over the real binaries: a few hundred cases
/// (`FUZZ_CAMPAIGN_CASES`, default 300, from `FUZZ_SEED`, default 0) of
/// every command, each under a 10 s and 2 GiB limit, with no panic, no run
/// over a limit and no exit other than 0 or 2. The long campaign is
/// `examples/fuzz_campaign.rs` (docs/benchmarks.md, "Fuzzing").
#[test]
fn fuzz_campaign_over_the_binaries() {
    let planner = PathBuf::from(env!("CARGO_BIN_EXE_planner"));
    let provisioner = planner.with_file_name("provisioner");
    let env = mutate::env_number;
    let config = campaign::Config {
        cases: env("FUZZ_CAMPAIGN_CASES", 300),
        seed: env("FUZZ_SEED", 0),
        out: Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-campaign"),
        root: root(),
        planner,
        provisioner: provisioner.is_file().then_some(provisioner),
        time_limit: std::time::Duration::from_secs(10),
        memory_limit: 2048 << 20,
        jobs: 2,
        keep: 20,
    };
    if config.provisioner.is_none() {
        eprintln!("note: no provisioner binary beside planner; its commands are skipped");
    }
    // The memory limit needs util-linux's prlimit (and /proc, so Linux).
    let prlimit = std::process::Command::new("prlimit")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !prlimit {
        eprintln!(
            "skipped: prlimit (util-linux) is not installed; the campaign needs it for its memory limit"
        );
        return;
    }
    let _ = std::fs::remove_dir_all(&config.out);
    let summary = campaign::run(&config).expect("the campaign writes its summary");
    let failures: Vec<String> = summary
        .failures()
        .map(|r| {
            format!(
                "case {}: {:?} ({}): {}\n  {}",
                r.case,
                r.kind,
                r.status,
                r.line,
                r.stderr.replace('\n', "\n  ")
            )
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{}\n{}\nkept in {}",
        summary.render(&config),
        failures.join("\n"),
        config.out.display()
    );
}

/// Every target over `FUZZ_CASES` seeds (from `FUZZ_SEED`, default 0),
/// printing each distinct failure kind once with its first reproduction
/// and a count. For finding bugs, not for CI.
#[test]
#[ignore = "a survey for people: FUZZ_CASES=500 cargo test -p planner --test it fuzz_survey -- --ignored"]
fn fuzz_survey() {
    let start = mutate::env_number("FUZZ_SEED", 0);
    let only = std::env::var("FUZZ_TARGET").ok();
    let mut seen: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut total = 0;
    for t in TARGETS {
        if only.as_deref().is_some_and(|o| o != t.name) {
            continue;
        }
        for seed in start..start + u64::from(cases()) {
            total += 1;
            let (input, check) = (t.run)(seed);
            if let Err(f) = check {
                let key = format!("[{}] {}", t.name, f.kind);
                let entry = seen.entry(key).or_insert_with(|| {
                    (
                        0,
                        format!("seed {seed}: {}\n{}", f.detail, input.describe()),
                    )
                });
                entry.0 += 1;
            }
        }
    }
    println!("{total} cases, {} distinct failures", seen.len());
    for (kind, (count, first)) in &seen {
        println!("\n=== {kind} ({count} cases)\n{first}");
    }
}
