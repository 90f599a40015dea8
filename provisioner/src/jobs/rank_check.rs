//! The rank-order guard: does this pod (or MPI rank) sit where the rank
//! table says?
//!
//! Every rank pod runs `provisioner rank-check` as an init container with
//! the job's `ranks.csv` (mounted from its ConfigMap) and its Node name
//! (`NODE_NAME`, from the Downward API):
//!
//! - with a rank (`--rank`, or `OMPI_COMM_WORLD_RANK` under mpirun), the
//!   rank's Node in the table must be this Node;
//! - without one, this Node must carry ranks of the table: pods follow
//!   their Node (see [`super::manifests`]), so a pod on any other Node means
//!   the placement drifted. The completion index (`JOB_COMPLETION_INDEX`)
//!   is reported with the pod's ranks.
//!
//! A mismatch fails fast with expected and actual Node named.

use serde::Serialize;

use crate::error::{Error, Result};

/// One row of `ranks.csv`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableRow {
    /// Rank.
    pub rank: usize,
    /// The plan's server.
    pub server: String,
    /// Sub-node in the server (`sn0`).
    pub sub_node: String,
    /// GPU: its name, or `#<index>` for a GPU of a shared NIC that the
    /// table gives by `gpu_index` only.
    pub gpu: String,
    /// NIC.
    pub nic: String,
    /// Kubernetes Node.
    pub node: String,
}

/// Reads `ranks.csv` as `provisioner submit` writes it (header
/// `rank,server,sub_node,gpu,nic,switch,part,node`; columns are found by
/// name; a `gpu_index` column, written with one rank per GPU on shared
/// NICs, names the GPUs the `gpu` column leaves empty) per RFC 4180, with `planner::text::read_csv`. `file` names it in
/// errors.
pub fn read_table(text: &str, file: &str) -> Result<Vec<TableRow>> {
    let bad = |line: usize, message: String| Error::RankTable {
        file: file.to_string(),
        line,
        message,
    };
    let records = planner::text::read_csv(text, file).map_err(|e| match e {
        planner::Error::Syntax { line, message, .. } => bad(line, message),
        other => bad(1, other.to_string()),
    })?;
    let mut lines = records.iter();
    let header: Vec<&str> = match lines.next() {
        Some(h) => h.fields.iter().map(String::as_str).collect(),
        None => return Err(bad(1, "the rank table is empty".to_string())),
    };
    let col = |name: &str| {
        header.iter().position(|h| *h == name).ok_or_else(|| {
            bad(
                1,
                format!(
                    "the header has no `{name}` column; give the ranks.csv of the job's ConfigMap (rank,server,sub_node,gpu,nic,switch,part,node)"
                ),
            )
        })
    };
    let (c_rank, c_server, c_sub, c_gpu, c_nic, c_node) = (
        col("rank")?,
        col("server")?,
        col("sub_node")?,
        col("gpu")?,
        col("nic")?,
        col("node")?,
    );
    let c_gpu_index = header.iter().position(|h| *h == "gpu_index");
    let mut rows: Vec<TableRow> = Vec::new();
    for record in lines {
        let n = record.line;
        let cells: Vec<&str> = record.fields.iter().map(String::as_str).collect();
        if cells.len() != header.len() {
            return Err(bad(
                n,
                format!("{} cells, and the header has {}", cells.len(), header.len()),
            ));
        }
        let rank: usize = cells[c_rank]
            .parse()
            .map_err(|_| bad(n, format!("rank `{}` is not a number", cells[c_rank])))?;
        if rank != rows.len() {
            return Err(bad(
                n,
                format!(
                    "rank {rank} where rank {} was expected: the table lists ranks 0, 1, 2, ... in order",
                    rows.len()
                ),
            ));
        }
        if cells[c_node].is_empty() {
            return Err(bad(n, format!("rank {rank} has no node")));
        }
        rows.push(TableRow {
            rank,
            server: cells[c_server].to_string(),
            sub_node: cells[c_sub].to_string(),
            gpu: match c_gpu_index.map(|c| cells[c]) {
                Some(i) if cells[c_gpu].is_empty() && !i.is_empty() => format!("#{i}"),
                _ => cells[c_gpu].to_string(),
            },
            nic: cells[c_nic].to_string(),
            node: cells[c_node].to_string(),
        });
    }
    if rows.is_empty() {
        return Err(bad(1, "the rank table has no ranks".to_string()));
    }
    Ok(rows)
}

/// What a passed check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// The Node checked.
    pub node: String,
    /// The ranks this Node carries (only the one given, when a rank was
    /// given).
    pub ranks: Vec<TableRow>,
    /// The completion index, when given (reported only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completion_index: Option<usize>,
    /// One line for the pod's log.
    pub message: String,
}

/// Checks `node` against the table (read from `table`, named in a
/// failure), for `rank` when given.
pub fn check(
    rows: &[TableRow],
    table: &str,
    node: &str,
    rank: Option<usize>,
    completion_index: Option<usize>,
) -> Result<Verdict> {
    let fail = |message: String| {
        Err(Error::RankCheck {
            table: table.to_string(),
            message,
        })
    };
    if node.is_empty() {
        return fail(
            "the Node name is empty; set NODE_NAME from the Downward API (fieldRef spec.nodeName) or pass --node"
                .to_string(),
        );
    }
    let index = completion_index.map_or(String::new(), |i| format!(" (completion index {i})"));
    let chosen = || {
        let mut n: Vec<&str> = rows.iter().map(|r| r.node.as_str()).collect();
        n.sort_unstable();
        n.dedup();
        n.join(", ")
    };
    let ranks: Vec<TableRow> = match rank {
        Some(r) => {
            let Some(row) = rows.get(r) else {
                return fail(format!(
                    "rank {r} is not in the rank table, which has ranks 0 to {}",
                    rows.len() - 1
                ));
            };
            if row.node != node {
                return fail(format!(
                    "rank {r} belongs on Node {} (server {} {}, GPU {}, NIC {}) but runs on Node {node}{index}: the placement drifted; delete the job and submit it again",
                    row.node, row.server, row.sub_node, row.gpu, row.nic
                ));
            }
            vec![row.clone()]
        }
        None => {
            let mine: Vec<TableRow> = rows.iter().filter(|r| r.node == node).cloned().collect();
            if mine.is_empty() {
                return fail(format!(
                    "this pod{index} runs on Node {node}, which carries no rank of the table; the job's Nodes are {}: the placement drifted; delete the job and submit it again",
                    chosen()
                ));
            }
            mine
        }
    };
    let list: Vec<String> = ranks
        .iter()
        .map(|r| {
            format!(
                "rank {} on {} {} ({}, {})",
                r.rank, r.server, r.sub_node, r.gpu, r.nic
            )
        })
        .collect();
    Ok(Verdict {
        node: node.to_string(),
        message: format!(
            "rank check passed: Node {node}{index} carries {}",
            list.join("; ")
        ),
        ranks,
        completion_index,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "rank,server,sub_node,gpu,nic,switch,part,node\n\
        0,node01,sn0,gpu0,mlx5_0,sw01-u,upper,k8s-a\n\
        1,node02,sn0,gpu0,mlx5_0,sw01-l,lower,k8s-b\n\
        2,node01,sn1,gpu1,mlx5_1,sw01-u,upper,k8s-a\n";

    #[test]
    fn pass_and_fail() {
        let rows = read_table(TABLE, "ranks.csv").unwrap();
        let v = check(&rows, "ranks.csv", "k8s-a", None, Some(3)).unwrap();
        assert_eq!(
            v.message,
            "rank check passed: Node k8s-a (completion index 3) carries rank 0 on node01 sn0 (gpu0, mlx5_0); rank 2 on node01 sn1 (gpu1, mlx5_1)"
        );
        assert_eq!(
            check(&rows, "ranks.csv", "k8s-b", Some(1), None)
                .unwrap()
                .ranks
                .len(),
            1
        );
        let e = check(&rows, "ranks.csv", "k8s-b", Some(2), None)
            .unwrap_err()
            .to_string();
        // issue13: a refusal names the file it is about.
        assert!(
            e.starts_with("rank check failed against the rank table ranks.csv: "),
            "{e}"
        );
        assert!(
            e.contains("rank 2 belongs on Node k8s-a (server node01 sn1, GPU gpu1, NIC mlx5_1) but runs on Node k8s-b"),
            "{e}"
        );
        let e = check(&rows, "ranks.csv", "k8s-c", None, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("runs on Node k8s-c, which carries no rank of the table; the job's Nodes are k8s-a, k8s-b"),
            "{e}"
        );
        let e = check(&rows, "ranks.csv", "k8s-a", Some(7), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("rank 7 is not in the rank table"), "{e}");
        assert!(check(&rows, "ranks.csv", "", None, None).is_err());
    }

    #[test]
    fn bad_tables_name_the_line() {
        for (text, want) in [
            ("", "ranks.csv:1: the rank table is empty"),
            (
                "rank,server\n",
                "ranks.csv:1: the header has no `sub_node` column",
            ),
            (
                "rank,server,sub_node,gpu,nic,node\n0,a,sn0,g,n\n",
                "ranks.csv:2: 5 cells, and the header has 6",
            ),
            (
                "rank,server,sub_node,gpu,nic,node\n1,a,sn0,g,n,k\n",
                "ranks.csv:2: rank 1 where rank 0 was expected",
            ),
            (
                "rank,server,sub_node,gpu,nic,node\nx,a,sn0,g,n,k\n",
                "ranks.csv:2: rank `x` is not a number",
            ),
        ] {
            let e = read_table(text, "ranks.csv").unwrap_err().to_string();
            assert!(e.contains(want), "want {want:?}, got {e}");
        }
    }

    /// Issue 13: a GPU named `gpu,0` gave 8 cells under a 7-cell header
    /// and every pod's rank check failed; the table is RFC 4180 now.
    #[test]
    fn issue13_ranks_csv_gpu_comma() {
        let header = [
            "rank", "server", "sub_node", "gpu", "nic", "switch", "part", "node",
        ];
        let row = [
            "0",
            "node01",
            "sn0",
            "gpu,0",
            "mlx5 \"0\"",
            "sw01-u",
            "upper",
            "k8s-a",
        ];
        let text = planner::text::write_csv([header, row]);
        assert!(text.contains("\"gpu,0\""), "{text}");
        let rows = read_table(&text, "ranks.csv").unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].gpu, "gpu,0");
        assert_eq!(rows[0].nic, "mlx5 \"0\"");
        assert_eq!(rows[0].node, "k8s-a");
        let e = read_table(
            "rank,server,sub_node,gpu,nic,node\n0,a,sn0,\"g,n,k\n",
            "ranks.csv",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("ranks.csv:2:"), "{e}");
    }
}
