//! Rank tables read back from CSV or JSON, each problem named with its
//! file and line.

use std::collections::BTreeMap;

use crate::algorithm::Command;
use crate::error::{Error, Problem, Result};
use crate::plan::Plan;
use crate::ranks::{Algorithm, Engine};

/// A rank table read back from a file ([`read_rank_table`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankFile {
    /// The algorithm a JSON table names, if any.
    pub algorithm: Option<Algorithm>,
    /// The engine a JSON table is made for, if it names one (`planner
    /// ranks --engine` writes it for every engine but `probe`).
    pub engine: Option<Engine>,
    /// Rank -> index into `plan.sub_node_list`.
    pub ranks: Vec<usize>,
    /// Rank -> its GPU (`gpu_index` numbering): the file's `gpu_index`,
    /// else the sub-node's one GPU; `None` where the plan names no GPU.
    pub gpus: Vec<Option<usize>>,
}

/// Reads a rank table written by `planner ranks` as CSV (header
/// `rank,server,sub_node,...`; `rank`, `server`, `sub_node` and
/// `gpu_index` are read) or JSON (`{"algorithm": .., "ranks": [{"rank",
/// "server", "sub_node", "gpu_index"?, ..}]}`), and returns the algorithm
/// the JSON names, if any, and the table as sub-node indices. See
/// [`read_rank_table`] for the checks; this drops the GPUs.
pub fn read_rank_file(
    text: &str,
    file: &str,
    plan: &Plan,
) -> Result<(Option<Algorithm>, Vec<usize>)> {
    read_rank_table(text, file, plan).map(|t| (t.algorithm, t.ranks))
}

/// Reads a rank table as [`read_rank_file`] does, with every rank's GPU.
/// Every problem is reported: unknown servers or sub-nodes, ranks given
/// twice or missing, a sub-node given twice (on a NIC shared by several
/// GPUs: more often than it has GPUs), a `gpu_index` that is not one of
/// the NIC's GPUs or that two ranks share, and a rank on a NIC shared by
/// several GPUs without a `gpu_index` (which GPU runs it is the file's to
/// say: `planner ranks` writes the column on such plans).
pub fn read_rank_table(text: &str, file: &str, plan: &Plan) -> Result<RankFile> {
    let entries = if text.trim_start().starts_with('{') {
        read_json(text, file)?
    } else {
        read_csv(text, file)?
    };
    // (server, "snK") -> sub-node index.
    let mut index: BTreeMap<(&str, String), usize> = BTreeMap::new();
    for (i, sn) in plan.sub_node_list.iter().enumerate() {
        index.insert((sn.server.as_str(), format!("sn{}", sn.index)), i);
    }
    let mut problems = Vec::new();
    let n = entries.rows.len();
    let mut table = vec![usize::MAX; n];
    let mut gpus = vec![None; n];
    let mut taken: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    // (sub-node, GPU) -> the rank on it.
    let mut on_gpu: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut column_missing = false;
    for e in &entries.rows {
        let object = format!("rank {}", e.rank);
        if e.rank >= n {
            problems.push(Problem::at(
                e.line,
                object,
                format!(
                    "the file has {n} ranks, numbered 0 to {}",
                    n.saturating_sub(1)
                ),
                "number the ranks from 0 without gaps",
            ));
            continue;
        }
        if table[e.rank] != usize::MAX {
            problems.push(Problem::at(
                e.line,
                object,
                "the rank is given twice",
                "give every rank once",
            ));
            continue;
        }
        let Some(&sn) = index.get(&(e.server.as_str(), e.sub_node.clone())) else {
            problems.push(Problem::at(
                e.line,
                object,
                format!(
                    "{} {} is not a sub-node of the plan {}",
                    e.server, e.sub_node, plan.name
                ),
                "use the server and sub-node names of `planner ranks` output for this plan",
            ));
            continue;
        };
        let here_gpus = plan.sub_node_list[sn].gpus();
        let count = here_gpus.len();
        let here = taken.entry(sn).or_default();
        if here.len() == count {
            let (what, fix) = if count == 1 {
                (
                    format!("{} {} already runs rank {}", e.server, e.sub_node, here[0]),
                    "give every rank its own sub-node (the table must be a permutation)"
                        .to_string(),
                )
            } else {
                let list: Vec<String> = here.iter().map(ToString::to_string).collect();
                (
                    format!(
                        "{} {} carries {count} GPUs and already runs ranks {}",
                        e.server,
                        e.sub_node,
                        list.join(", ")
                    ),
                    format!("give the sub-node at most {count} ranks, one per GPU behind its NIC"),
                )
            };
            problems.push(Problem::at(e.line, object, what, fix));
            continue;
        }
        here.push(e.rank);
        table[e.rank] = sn;
        let listed = || {
            here_gpus
                .iter()
                .flatten()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let gpu = match e.gpu_index {
            Some(g) if here_gpus.contains(&Some(g)) => g,
            Some(g) => {
                let (what, fix) = if here_gpus == [None] {
                    (
                        format!(
                            "gpu_index {g}: the plan names no GPU behind {} {}",
                            e.server, e.sub_node
                        ),
                        "leave gpu_index empty for this rank".to_string(),
                    )
                } else {
                    (
                        format!(
                            "gpu_index {g} is not behind the NIC of {} {}, which carries GPU{} {}",
                            e.server,
                            e.sub_node,
                            if count == 1 { "" } else { "s" },
                            listed()
                        ),
                        format!("give one of {}", listed()),
                    )
                };
                problems.push(Problem::at(e.line, object, what, fix));
                continue;
            }
            None if count == 1 => {
                gpus[e.rank] = here_gpus[0];
                continue;
            }
            None if !entries.gpu_column => {
                column_missing = true;
                continue;
            }
            None => {
                problems.push(Problem::at(
                    e.line,
                    object,
                    format!(
                        "no gpu_index, and the NIC of {} {} carries GPUs {}",
                        e.server,
                        e.sub_node,
                        listed()
                    ),
                    format!("give the rank's GPU, one of {}", listed()),
                ));
                continue;
            }
        };
        if let Some(other) = on_gpu.insert((sn, gpu), e.rank) {
            problems.push(Problem::at(
                e.line,
                object,
                format!(
                    "GPU {gpu} of {} {} already runs rank {other}",
                    e.server, e.sub_node
                ),
                "give every rank of a NIC its own GPU (gpu_index)",
            ));
            continue;
        }
        gpus[e.rank] = Some(gpu);
    }
    if column_missing {
        problems.insert(
            0,
            Problem::at(
                entries.header_line,
                "gpu_index",
                "the table has no gpu_index, and it puts ranks on NICs shared by several GPUs: which GPU runs which rank is not said",
                "add the gpu_index of every rank (`planner ranks --format csv` or `--format json` writes it on this plan)",
            ),
        );
    }
    if problems.is_empty() && n == 0 {
        problems.push(Problem::at(
            None,
            "rank table",
            "it has no ranks",
            "give at least one rank",
        ));
    }
    if problems.is_empty() {
        Ok(RankFile {
            algorithm: entries.algorithm,
            engine: entries.engine,
            ranks: table,
            gpus,
        })
    } else {
        Err(Error::Invalid {
            file: file.to_string(),
            what: "rank table",
            problems,
        })
    }
}

/// The rows of a rank file as written, before they are checked.
struct Entries {
    algorithm: Option<Algorithm>,
    engine: Option<Engine>,
    /// True when the file gives `gpu_index` (a CSV column, or a JSON key
    /// on some rank).
    gpu_column: bool,
    /// The CSV header's line.
    header_line: Option<usize>,
    rows: Vec<Entry>,
}

struct Entry {
    rank: usize,
    server: String,
    sub_node: String,
    gpu_index: Option<usize>,
    line: Option<usize>,
}

fn read_csv(text: &str, file: &str) -> Result<Entries> {
    let mut columns: Option<(usize, usize, usize, Option<usize>)> = None;
    let mut header_line = None;
    let mut rows = Vec::new();
    for record in crate::text::read_csv(text, file)? {
        let line = record.line;
        let fields: Vec<&str> = record.fields.iter().map(String::as_str).collect();
        let Some((r, s, sn, g)) = columns else {
            let find = |name: &str| fields.iter().position(|f| f.eq_ignore_ascii_case(name));
            match (find("rank"), find("server"), find("sub_node")) {
                (Some(r), Some(s), Some(sn)) => {
                    columns = Some((r, s, sn, find("gpu_index")));
                    header_line = Some(line);
                }
                _ => {
                    return Err(Error::Syntax {
                        file: file.to_string(),
                        line,
                        column: 1,
                        message: "the header needs the columns rank, server and sub_node (as `planner ranks --format csv` writes)".to_string(),
                    });
                }
            }
            continue;
        };
        let get = |c: usize| fields.get(c).copied().unwrap_or("");
        let number = |c: usize, what: &str| {
            get(c).parse::<usize>().map_err(|_| Error::Syntax {
                file: file.to_string(),
                line,
                column: 1,
                message: format!("{what} `{}` is not a whole number", get(c)),
            })
        };
        let rank = number(r, "rank")?;
        let gpu_index = match g {
            Some(g) if !get(g).is_empty() => Some(number(g, "gpu_index")?),
            _ => None,
        };
        rows.push(Entry {
            rank,
            server: get(s).to_string(),
            sub_node: get(sn).to_string(),
            gpu_index,
            line: Some(line),
        });
    }
    Ok(Entries {
        algorithm: None,
        engine: None,
        gpu_column: columns.is_some_and(|c| c.3.is_some()),
        header_line,
        rows,
    })
}

fn read_json(text: &str, file: &str) -> Result<Entries> {
    #[derive(serde::Deserialize)]
    struct Doc {
        algorithm: Option<String>,
        #[serde(default)]
        engine: Option<String>,
        ranks: Vec<Row>,
    }
    #[derive(serde::Deserialize)]
    struct Row {
        rank: usize,
        server: String,
        sub_node: String,
        #[serde(default)]
        gpu_index: Option<usize>,
    }
    let doc: Doc = serde_json::from_str(text).map_err(|e| Error::json(file, &e))?;
    let algorithm = match doc.algorithm {
        Some(a) => Some(
            Algorithm::parse(&a, Command::Ranks).map_err(|_| Error::Invalid {
                file: file.to_string(),
                what: "rank table",
                problems: vec![Problem::at(
                    None,
                    "algorithm",
                    format!("`{a}` is not an algorithm"),
                    format!("use {}", Algorithm::names(Command::Ranks)),
                )],
            })?,
        ),
        None => None,
    };
    let engine = match doc.engine {
        Some(e) => Some(e.parse::<Engine>().map_err(|_| Error::Invalid {
            file: file.to_string(),
            what: "rank table",
            problems: vec![Problem::at(
                None,
                "engine",
                format!("`{e}` is not an engine"),
                format!("use {}", Engine::ALL.map(Engine::as_str).join(", ")),
            )],
        })?),
        None => None,
    };
    Ok(Entries {
        algorithm,
        engine,
        gpu_column: doc.ranks.iter().any(|r| r.gpu_index.is_some()),
        header_line: None,
        rows: doc
            .ranks
            .into_iter()
            .map(|r| Entry {
                rank: r.rank,
                server: r.server,
                sub_node: r.sub_node,
                gpu_index: r.gpu_index,
                line: None,
            })
            .collect(),
    })
}
