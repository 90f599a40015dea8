//! `nccl-ring`: NCCL-style rings, one per NIC of a server, inside a
//! server over NVLink and between servers on one rail; its schedule from
//! [`schedules::nccl_rings`].

use super::{AlgorithmRow, Collective};
use crate::error::Result;
use crate::estimate::context::Context;
use crate::estimate::{SendSchedule, schedules};

/// NCCL-style rings, one per rail.
#[derive(Debug)]
pub(super) struct NcclRing;

/// `nccl-ring`'s row of the algorithm table.
pub(super) const ROW: AlgorithmRow = AlgorithmRow {
    description: "NCCL-style rings, one per NIC of a server (C = ranks per server), each over every rank with 1/C of the message: inside a server over NVLink from the GPU of rail c through the others and back to it (PXN), between servers on rail c only",
    closed_form: "2(P-1) ring steps of N/(CP) bytes, each as slow as the slower of the NVLink hop (C rings share a GPU's NVLink) and the rail hop, plus one NVLink hand-over; α and β per level",
    in_order: false,
    colour: [57, 59, 121],
    collective: &NcclRing,
};

impl Collective for NcclRing {
    fn closed_form(&self, ctx: &Context<'_>, n: u64) -> Result<(f64, usize)> {
        let servers = ctx.server_groups()?;
        Ok((closed_form(ctx, &servers, n as f64)?, 1))
    }

    fn schedule(&self, ctx: &Context<'_>, n: u64, _chunks: usize) -> Result<SendSchedule> {
        schedules::nccl_rings(&ctx.server_groups()?, n, ctx.params.gamma_us())
    }
}

/// The closed form of `nccl-ring` (see [`schedules::nccl_rings`]) over
/// the ranks of `servers`, `nf` bytes: C = g rings of `nf / C` bytes
/// over P = m·g ranks, each ring step moving N/(CP) bytes. An NVLink
/// hop (α of one switch) carries one flow of every ring on each GPU's
/// link, `C·N/(CP)` at the NVLink speed; a rail hop one flow of its
/// ring at the fabric's speed per rank. Each ring step waits for the
/// slower of the two (the rings and hops run at once), and the first
/// rail hop waits for the first NVLink hand-over. Without the tier
/// every hop crosses the fabric, and both cost one step of all the
/// rings' flows at once on their paths, ideally balanced. γ: a
/// reduce-scatter step's NVLink hop reduces its N/(CP) bytes first.
fn closed_form(ctx: &Context<'_>, servers: &[Vec<u32>], nf: f64) -> Result<f64> {
    let (m, g) = (servers.len(), servers[0].len());
    let p = m * g;
    if p <= 1 {
        return Ok(0.0);
    }
    let (c, pf) = (g as f64, p as f64);
    let b = nf / (c * pf);
    // Rail hops: GPU c of server s to GPU c of server s + 1.
    let rail_pairs = || {
        (0..m).flat_map(move |s| {
            (0..g).map(move |j| (servers[s][j] as usize, servers[(s + 1) % m][j] as usize))
        })
    };
    let (t_in, t_out) = match &ctx.tier {
        Some(t) => {
            let w0 = if t.all_nvlink {
                t.nv_w
            } else {
                ctx.fabric_w.min(ctx.share)
            };
            let t_in = ctx.params.latency_us(1) + c * b / w0;
            let t_out = ctx.alpha_of(rail_pairs()) + b / ctx.fabric_w.min(ctx.share);
            (t_in, t_out)
        }
        None => {
            // Every rank's hop in every ring, and the hand-overs.
            let mut pairs = Vec::with_capacity(p * g + m * g);
            for r in 0..g {
                for (s, server) in servers.iter().enumerate() {
                    for k in 0..g {
                        let from = server[(r + k) % g] as usize;
                        let to = if k + 1 < g {
                            server[(r + k + 1) % g] as usize
                        } else if m > 1 && g > 1 {
                            pairs.push((server[r] as usize, servers[(s + 1) % m][r] as usize));
                            server[r] as usize
                        } else {
                            servers[(s + 1) % m][r] as usize
                        };
                        pairs.push((from, to));
                    }
                }
            }
            let beta = ctx.spread_beta(&pairs)?.max(ctx.beta0());
            let t = ctx.alpha_of(pairs.into_iter()) + b * beta;
            (t, t)
        }
    };
    // A reduce-scatter send first reduces what it received (γ), the
    // all-gather's do not; the rail hop forwards without reducing.
    let reduce = ctx.params.gamma_us() * b;
    let step = |t_in: f64| match (m > 1, g > 1) {
        (true, true) => t_in.max(t_out),
        (false, _) => t_in,
        (true, false) => t_out,
    };
    let first = if m > 1 && g > 1 { t_in } else { 0.0 };
    Ok((pf - 1.0) * (step(t_in + reduce) + step(t_in)) + first)
}
