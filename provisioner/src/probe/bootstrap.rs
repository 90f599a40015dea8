//! Who this rank is and where the others are: torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), a host file, or a `planner ranks` table with the plan's addresses; and the size list.

use std::net::{SocketAddr, ToSocketAddrs};

use planner::plan::Plan;

use super::auth::Secret;
use super::data::MAX_RANKS;
use super::error::{Error, Result};
use super::schedule::Algorithm;
use super::transport::Peers;

/// This rank, the world size and where the peers are.
#[derive(Debug, Clone)]
pub struct Bootstrap {
    /// This rank, from 0.
    pub rank: usize,
    /// Ranks in the run.
    pub world: usize,
    /// Rank 0's address, or every rank's.
    pub peers: Peers,
    /// The job secret that authenticates every connection (`None`: peers
    /// are not authenticated; the binary always gives one).
    pub secret: Option<Secret>,
}

impl Bootstrap {
    /// Rank `rank` of `world`, meeting the others through rank 0 at
    /// `master` (`host:port`), as torchrun does.
    pub fn master(rank: usize, world: usize, master: impl Into<String>) -> Self {
        Bootstrap {
            rank,
            world,
            peers: Peers::Master(master.into()),
            secret: None,
        }
    }

    /// Rank `rank` of a run whose every rank's address is known.
    pub fn table(rank: usize, addresses: Vec<SocketAddr>) -> Self {
        Bootstrap {
            rank,
            world: addresses.len(),
            peers: Peers::Table(addresses),
            secret: None,
        }
    }

    /// The same, with every connection authenticated by `secret`.
    pub fn with_secret(mut self, secret: Secret) -> Self {
        self.secret = Some(secret);
        self
    }

    /// Refuses a rank outside the world, an empty world, one too large for
    /// the exact data check, and a table whose length is not the world size.
    pub fn check(&self) -> Result<()> {
        if self.world == 0 || self.world > MAX_RANKS {
            return Err(Error::parameter(
                "world-size",
                format!("{} ranks: give 1 to {MAX_RANKS}", self.world),
            ));
        }
        if self.rank >= self.world {
            return Err(Error::parameter(
                "rank",
                format!(
                    "rank {} in a world of {}: ranks are numbered 0 to {}",
                    self.rank,
                    self.world,
                    self.world - 1
                ),
            ));
        }
        if let Peers::Table(a) = &self.peers
            && a.len() != self.world
        {
            return Err(Error::parameter(
                "world-size",
                format!(
                    "the rank table has {} ranks but the world size is {}",
                    a.len(),
                    self.world
                ),
            ));
        }
        Ok(())
    }
}

/// Resolves `text` (`ip`, `ip:port`, `[v6]:port`, `host:port`) to one
/// address, with `port` when it gives none.
pub fn resolve(text: &str, port: u16) -> std::result::Result<SocketAddr, String> {
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Ok(ip) = text.trim_matches(['[', ']']).parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    let with_port = if text
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        text.to_string()
    } else {
        format!("{text}:{port}")
    };
    match with_port.to_socket_addrs() {
        Ok(mut a) => a.next().ok_or_else(|| format!("`{text}` has no address")),
        Err(e) => Err(format!("`{text}` is not an address: {e}")),
    }
}

/// Reads a host file: CSV with a header naming the columns `rank` and
/// `address` (in any order, other columns ignored), or one address per
/// line in rank order. An address without a port gets `port`. Every rank
/// from 0 must be given once.
pub fn read_hosts(text: &str, file: &str, port: u16) -> Result<Vec<SocketAddr>> {
    let records = planner::text::read_csv(text, file).map_err(|e| Error::Table {
        file: file.to_string(),
        message: e.to_string(),
    })?;
    let bad = |line: usize, message: String| Error::Table {
        file: file.to_string(),
        message: format!("line {line}: {message}"),
    };
    let header = records.first().and_then(|r| {
        let find = |n: &str| r.fields.iter().position(|f| f.eq_ignore_ascii_case(n));
        Some((find("rank")?, find("address")?))
    });
    let mut entries: Vec<(usize, usize, &str)> = Vec::new();
    match header {
        Some((rc, ac)) => {
            for r in &records[1..] {
                let get = |c: usize| r.fields.get(c).map_or("", String::as_str);
                let rank = get(rc).parse::<usize>().map_err(|_| {
                    bad(r.line, format!("rank `{}` is not a whole number", get(rc)))
                })?;
                entries.push((r.line, rank, get(ac)));
            }
        }
        None => {
            for (rank, r) in records.iter().enumerate() {
                entries.push((r.line, rank, r.fields.first().map_or("", String::as_str)));
            }
        }
    }
    if entries.is_empty() {
        return Err(Error::Table {
            file: file.to_string(),
            message: "it has no ranks; give one address per rank".to_string(),
        });
    }
    let n = entries.len();
    let mut out: Vec<Option<SocketAddr>> = vec![None; n];
    for (line, rank, addr) in entries {
        if rank >= n {
            return Err(bad(
                line,
                format!(
                    "rank {rank}, but the file has {n} ranks, numbered 0 to {}",
                    n - 1
                ),
            ));
        }
        if out[rank].is_some() {
            return Err(bad(line, format!("rank {rank} is given twice")));
        }
        out[rank] = Some(resolve(addr, port).map_err(|m| bad(line, format!("rank {rank}: {m}")))?);
    }
    let addrs: Vec<SocketAddr> = out.into_iter().flatten().collect();
    for (i, a) in addrs.iter().enumerate() {
        if let Some(j) = addrs[..i].iter().position(|b| b == a) {
            return Err(Error::Table {
                file: file.to_string(),
                message: format!(
                    "ranks {j} and {i} have the same address {a}; give every rank its own address or port"
                ),
            });
        }
    }
    Ok(addrs)
}

/// Reads a rank table written by `planner ranks` (CSV or JSON) for
/// `plan`, and gives every rank the address of its sub-node in the plan
/// with `port`. Returns the algorithm the JSON names, if any.
pub fn read_plan_table(
    text: &str,
    file: &str,
    plan: &Plan,
    port: u16,
) -> Result<(Option<Algorithm>, Vec<SocketAddr>)> {
    let (algorithm, table) =
        planner::ranks::format::read_rank_file(text, file, plan).map_err(|source| {
            Error::RankFile {
                file: file.to_string(),
                source: Box::new(source),
            }
        })?;
    let mut out = Vec::with_capacity(table.len());
    for (rank, &i) in table.iter().enumerate() {
        let sn = &plan.sub_node_list[i];
        let Some(ip) = sn.ip.as_deref() else {
            return Err(Error::Table {
                file: file.to_string(),
                message: format!(
                    "rank {rank} runs on {}, which has no IP address in the plan {}; give a host file with each rank's address instead",
                    sn.id, plan.name
                ),
            });
        };
        // The plan gives the NIC's address with its prefix length.
        let ip = ip.split('/').next().unwrap_or(ip);
        let a = resolve(ip, port).map_err(|m| Error::Table {
            file: file.to_string(),
            message: format!("rank {rank} ({}): {m}", sn.id),
        })?;
        out.push(a);
    }
    Ok((algorithm, out))
}

/// Parses a byte count as every command of the toolkit reads one
/// (`planner::estimate::SIZE_UNITS`: `KB` decimal, `KiB` or `K` binary, as
/// nccl-tests reads `K`).
pub fn parse_bytes(text: &str) -> std::result::Result<u64, String> {
    planner::estimate::parse_byte_count(text).map_err(|e| match e {
        planner::Error::Parameter { message, .. } => message,
        other => other.to_string(),
    })
}

/// Most bytes per rank a size may have.
pub const MAX_SIZE: u64 = 8 << 30;

/// Parses a size list in the planner's one grammar
/// (`planner::estimate::parse_sizes`: sizes and ranges separated by
/// commas, a range `a..b` being a, 2a, 4a, ... up to b). Every size must
/// also be a positive multiple of 4 bytes (one f32) and at most 8 GiB.
pub fn parse_sizes(text: &str) -> Result<Vec<u64>> {
    let bad = |m: String| Error::parameter("size", m);
    let out = planner::estimate::parse_sizes(text).map_err(|e| match e {
        planner::Error::Parameter { message, .. } => bad(message),
        other => bad(other.to_string()),
    })?;
    if let Some(&s) = out.iter().find(|&&s| s == 0 || s % 4 != 0 || s > MAX_SIZE) {
        return Err(bad(format!(
            "{s} B: every size must be a positive multiple of 4 bytes (the engine sums f32) and at most 8 GiB"
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_nccl_tests() {
        assert_eq!(parse_sizes("8B..64B").unwrap(), [8, 16, 32, 64]);
        assert_eq!(parse_sizes("1MiB").unwrap(), [1 << 20]);
        assert_eq!(parse_sizes("4, 1K,2M").unwrap(), [4, 1024, 2 << 20]);
        assert_eq!(parse_sizes("8B..256MiB").unwrap().len(), 26);
        assert_eq!(parse_sizes("12..50").unwrap(), [12, 24, 48]);
        // Decimal units as the planner reads them.
        assert_eq!(parse_sizes("1MB,200KB").unwrap(), [1_000_000, 200_000]);
        for bad in ["", "6B", "1XB", "0", "64..8", "x", "16GiB"] {
            let e = parse_sizes(bad).unwrap_err().to_string();
            assert!(e.starts_with("size: "), "{bad}: {e}");
        }
    }

    #[test]
    fn host_files_give_every_rank_an_address() {
        let a = read_hosts(
            "rank,address\n1,127.0.0.1:7001\n0,127.0.0.1\n",
            "h.csv",
            7000,
        )
        .unwrap();
        assert_eq!(
            a,
            [
                "127.0.0.1:7000".parse().unwrap(),
                "127.0.0.1:7001".parse().unwrap()
            ]
        );
        let b = read_hosts("# two ranks\n10.0.0.1\n[::1]:9\n", "h", 5).unwrap();
        assert_eq!(b[0], "10.0.0.1:5".parse().unwrap());
        assert_eq!(b[1], "[::1]:9".parse().unwrap());
        let e = |t: &str| read_hosts(t, "h.csv", 1).unwrap_err().to_string();
        assert_eq!(
            e("rank,address\n0,127.0.0.1\n0,127.0.0.2\n"),
            "h.csv: line 3: rank 0 is given twice"
        );
        assert!(e("rank,address\n0,127.0.0.1\n2,127.0.0.2\n").contains("numbered 0 to 1"));
        assert!(e("127.0.0.1\n127.0.0.1\n").contains("the same address"));
        assert!(e("").contains("no ranks"));
    }

    #[test]
    fn a_table_must_match_the_world_size() {
        let mut b = Bootstrap::table(0, vec!["127.0.0.1:1".parse().unwrap()]);
        assert!(b.check().is_ok());
        b.world = 2;
        assert!(
            b.check()
                .unwrap_err()
                .to_string()
                .contains("has 1 ranks but the world size is 2")
        );
        assert!(Bootstrap::master(3, 3, "x:1").check().is_err());
    }
}
