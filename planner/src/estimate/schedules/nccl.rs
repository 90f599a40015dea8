//! NCCL-style schedules over the ranks of every server: rail-aligned
//! rings (`nccl-ring`) and the chain-and-double-binary trees
//! (`nccl-tree`).
//!
//! NCCL-style rings (`nccl-ring`, [`nccl_rings`]): one ring per NIC of a
//! server (C of them), each a ring over every rank with 1/C of the
//! message. Ring c enters a server at the GPU on rail c, visits the
//! others over the intra-server links, and the last GPU hands the data
//! back to the GPU on rail c (NCCL's PXN), which sends it on rail c to
//! the next server: every inter-server hop stays on one rail. Each rank
//! runs one program per ring (NCCL's channels), and every send waits
//! for the previous send into the same buffer, so the rendezvous of the
//! event-driven mode is per channel and adds no wait.
//!
//! NCCL-style trees (`nccl-tree`, [`nccl_trees`]): per NIC c of a server
//! two trees over every rank ([`nccl_tree_parents`]), a chain from the
//! GPU on rail c through the others inside each server and NCCL's double
//! binary tree ([`btree`] and [`mirror_tree`]) over the servers' rail-c
//! GPUs, run as the overlapped trees ([`super::trees`]) in NCCL's chunks
//! ([`nccl_tree_chunk`], [`nccl_tree_chunks`]), each tree a channel as the rings are.

use super::builder::Builder;
use super::trees::{btree, mirror_tree, trees_in_chunks};
use super::{NONE, SendSchedule, StepPhase, check_same_size, check_sends, split};
use crate::error::{Error, Result};

/// NCCL-style rail-aligned rings over `servers` (the ranks of every
/// server, all of one size g, position j of a server being the GPU on its
/// NIC of rail j), `n` bytes: C = g rings, ring c carrying part c of
/// `split(n, C)`, each a ring allreduce over all P ranks. Ring c visits
/// server s from its GPU c through the others in position order
/// (c, c + 1, ..., c - 1 mod g) over the intra-server links; the last GPU
/// hands the data back to GPU c over NVLink (NCCL's PXN), which sends it
/// through its NIC, on rail c, to GPU c of server s + 1. The hand-over is
/// a relay: it forwards what it receives without reducing it, and posts
/// one forward at a time per ring. The rings run at once, each rank
/// following one program per ring (NCCL's channels), so a rank's sends of
/// different rings do not wait for each other. With one server the rings
/// close inside it and there is no relay; with one GPU per server
/// (g = 1) this is [`ring`] over the servers in order.
///
/// Steps: ring step t of every ring is step 2t, its relays step 2t + 1
/// (step t when there is no relay).
pub(crate) fn nccl_rings(servers: &[Vec<u32>], n: u64, gamma_us: f64) -> Result<SendSchedule> {
    let m = servers.len();
    let g = servers.first().map_or(0, Vec::len);
    check_same_size(servers)?;
    let p = m * g;
    let relays = m > 1 && g > 1;
    let ring_steps = 2 * p.saturating_sub(1) as u128;
    let per_step = p as u128 + if relays { m as u128 } else { 0 };
    check_sends(p, g as u128 * ring_steps * per_step)?;
    let mut b = Builder::new(p, gamma_us)?;
    // A ring send waits for its sender's previous one on the ring, the
    // hand-over for the last GPU's previous hand-over and the rail hop for
    // the previous rail hop: each the previous send into its buffer.
    b.s.channel_credit = true;
    if p == 1 {
        return b.finish();
    }
    let mut final_recv = vec![NONE; p];
    for (c, share) in split(n, g).into_iter().enumerate() {
        // Ring c in position order: rank of position i.
        let order: Vec<u32> = (0..p).map(|i| servers[i / g][(c + i % g) % g]).collect();
        let chunks = split(share, p);
        let mut last_recv = vec![NONE; p];
        let mut last_send = vec![NONE; p];
        let mut pending = vec![0.0f64; p];
        let mut relay_last = vec![NONE; m];
        let mut ids = Vec::with_capacity(p);
        for t in 0..2 * (p - 1) {
            let reduce = t < p - 1;
            let s = if reduce { t } else { t - (p - 1) };
            let phase = if reduce {
                StepPhase::ReduceScatter
            } else {
                StepPhase::AllGather
            };
            let (at, relay_at) = if relays { (2 * t, 2 * t + 1) } else { (t, t) };
            let step = b.step(at, phase, None);
            let relay_step = b.step(relay_at, phase, None);
            ids.clear();
            for i in 0..p {
                let chunk = if reduce {
                    (i + p - s % p) % p
                } else {
                    (i + 1 + p - s % p) % p
                };
                let bytes = chunks[chunk];
                let next = (i + 1) % p;
                let delay = std::mem::take(&mut pending[i]);
                let deps = [last_recv[i], last_send[i]];
                let leaves = relays && next.is_multiple_of(g);
                let dst = if leaves {
                    order[i - (g - 1)]
                } else {
                    order[next]
                };
                let mut id = b.push(order[i], dst, bytes, step, &deps, delay);
                last_send[i] = id;
                if leaves {
                    // GPU c of this server forwards it on rail c.
                    let server = i / g;
                    let deps = [id, relay_last[server]];
                    id = b.push(dst, order[next], bytes, relay_step, &deps, 0.0);
                    relay_last[server] = id;
                }
                ids.push((next, id, bytes));
            }
            for &(next, id, bytes) in &ids {
                last_recv[next] = id;
                if reduce {
                    pending[next] += gamma_us * bytes as f64;
                }
            }
        }
        for (i, &id) in last_recv.iter().enumerate() {
            final_recv[order[i] as usize] = id;
        }
    }
    b.last_recv = final_recv;
    b.finish()
}

/// NCCL's default pipeline chunk of a tree: its Simple protocol's buffer
/// of 4 MiB (`NCCL_BUFFSIZE`) over its 8 steps (`NCCL_STEPS`), one step a
/// chunk for the tree.
pub(crate) const NCCL_TREE_CHUNK: u64 = 512 << 10;

/// NCCL's estimate of the depth of its trees over `servers` (m servers of
/// g ranks): `nRanks/nNodes - 1 + log2i(nNodes)`, `g - 1 + ⌊log2 m⌋`
/// (NCCL v2.19.4-1, `src/graph/connect.cc`, `ncclTopoPostset`).
pub(crate) fn nccl_tree_depth(servers: &[Vec<u32>]) -> usize {
    let (m, g) = (servers.len(), servers.first().map_or(1, Vec::len));
    g.saturating_sub(1) + m.max(1).ilog2() as usize
}

/// The chunk size NCCL's tree uses for `n` bytes over `trees` trees
/// (channels) of depth `depth` ([`nccl_tree_depth`]):
/// [`NCCL_TREE_CHUNK`], halved while the message holds fewer than 8·depth
/// chunks per tree and the chunk is above 128 KiB, then fewer than
/// 4·depth above 64 KiB, then fewer than depth above 32 KiB. This is
/// NCCL v2.19.4-1's `computeColl` (`src/enqueue.cc`, the Simple
/// protocol's tree with the `ncclPatternTreeUpDown` pattern, which an
/// allreduce has), the last release with the rule: from v2.20 the Simple
/// tree keeps its 512 KiB (v2.30.7-1's `calcCollChunking` halves only
/// for LL128) and each channel takes one contiguous part of the message
/// (`ncclCollCbdPart`, `src/include/device.h`). The model follows
/// v2.19.4-1 throughout: this rule and [`nccl_tree_chunks`].
pub(crate) fn nccl_tree_chunk(n: u64, trees: usize, depth: usize) -> u64 {
    let per_tree = |chunk: u64| n / (trees.max(1) as u64 * chunk);
    let mut chunk = NCCL_TREE_CHUNK;
    for (times, floor) in [(8, 128 << 10), (4, 64 << 10), (1, 32 << 10)] {
        while per_tree(chunk) < (times * depth) as u64 && chunk > floor {
            chunk /= 2;
        }
    }
    chunk
}

/// The chunks (bytes, in order) each of `trees` trees sends for `n`
/// bytes in chunks of `chunk` bytes, as NCCL v2.19.4-1's tree allreduce
/// cuts the message (`src/device/all_reduce.h`, `runTreeSplit`, the
/// kernel of `NCCL_ALGO_TREE` with the Simple protocol; `runTreeUpDown`
/// only on CUDA 11.2-11.3 and sm80, and it cuts the same way): in loops
/// of `loopSize = nChannels·chunkSize` bytes, channel (tree) t taking
/// the chunk at `offset = gridOffset + t·chunkSize` of `nelem =
/// min(chunkSize, size - offset)` bytes, none past the end. Every tree
/// runs the same ⌈n / (trees·chunk)⌉ steps, all of them full chunks but
/// the last loop's: there the tree holding the end of the message sends
/// the remainder, the trees before it full chunks and the trees after it
/// an empty step (0 bytes: NCCL's primitives clamp `nelem` to 0 and
/// still post the step).
///
/// Not modelled, as the model keeps its 2C trees at every size: for
/// messages under trees × 32 KiB NCCL also drops channels (`getAlgoInfo`
/// in `src/enqueue.cc`: one less while n < nChannels · 512 threads · 64
/// bytes), so there a remainder runs as a second loop of channel 0 rather
/// than on one more channel, and the channels dropped send nothing
/// rather than an empty step; and when one loop exceeds the message
/// `runTreeSplit` shrinks the chunk to a multiple of its threads' grain,
/// which with those channels dropped happens only on one channel under
/// 32 KiB, where it sends the whole message in one chunk, as here.
pub(crate) fn nccl_tree_chunks(n: u64, trees: usize, chunk: u64) -> Vec<Vec<u64>> {
    let (trees, chunk) = (trees.max(1), chunk.max(1));
    let loop_size = trees as u64 * chunk;
    let loops = n.div_ceil(loop_size).max(1);
    (0..trees as u64)
        .map(|t| {
            (0..loops)
                .map(|l| {
                    let offset = l * loop_size + t * chunk;
                    n.saturating_sub(offset).min(chunk)
                })
                .collect()
        })
        .collect()
}

/// The trees of `nccl-tree` over `servers` (the ranks of every server,
/// all of one size g, position j of a server being the GPU on its NIC of
/// rail j), as parent arrays over all ranks: for every rail c, two trees
/// (2c and 2c + 1). Inside every server both are the chain from GPU c
/// through c + 1, ..., c - 1 (mod g), each GPU's parent the one before it
/// (NCCL's tree inside a node); between servers GPU c of a server has as
/// parent GPU c of the server's parent in [`btree`] (tree 2c) or
/// [`mirror_tree`] (tree 2c + 1) over the servers: NCCL's double binary
/// tree, both trees entering and leaving a server at GPU c, so every
/// inter-server edge of rail c's trees joins two NICs of rail c.
pub(crate) fn nccl_tree_parents(servers: &[Vec<u32>]) -> Result<Vec<Vec<u32>>> {
    check_same_size(servers)?;
    let m = servers.len();
    let g = servers.first().map_or(0, Vec::len);
    let p = m * g;
    let between = [btree(m), mirror_tree(m)];
    let mut out = Vec::with_capacity(2 * g);
    for c in 0..g {
        for tree in &between {
            let mut parent = vec![NONE; p];
            for (s, server) in servers.iter().enumerate() {
                for i in 1..g {
                    parent[server[(c + i) % g] as usize] = server[(c + i - 1) % g];
                }
                if tree[s] != NONE {
                    parent[server[c] as usize] = servers[tree[s] as usize][c];
                }
            }
            out.push(parent);
        }
    }
    Ok(out)
}

/// `nccl-tree`: the trees of [`nccl_tree_parents`], tree t sending its
/// chunks as NCCL does ([`nccl_tree_chunks`] in [`nccl_tree_chunk`]'s
/// chunks): `k` of them a tree, which must be NCCL's count (an internal
/// error otherwise: the closed form and the schedule count alike). They
/// are pipelined with the broadcast of chunk c as soon as the root has
/// reduced it ([`trees_in_chunks`] with overlap: NCCL's tree kernel runs
/// the reduction and the broadcast at once). Each tree is a channel of
/// its own with its buffers and credit, and every send already waits for
/// the previous send into its buffer (a child's chunk c - 1 up, a
/// parent's chunk c - 1 down to that child), so the event-driven mode's
/// rendezvous per rank and step does not apply.
pub(crate) fn nccl_trees(
    servers: &[Vec<u32>],
    n: u64,
    k: usize,
    gamma_us: f64,
) -> Result<SendSchedule> {
    let p = servers.len() * servers.first().map_or(0, Vec::len);
    let parents = nccl_tree_parents(servers)?;
    let chunk = nccl_tree_chunk(n, parents.len(), nccl_tree_depth(servers));
    let chunks = nccl_tree_chunks(n, parents.len(), chunk);
    let loops = chunks.first().map_or(0, Vec::len);
    if loops != k.max(1) {
        return Err(Error::Internal(format!(
            "nccl-tree asked for {k} chunks a tree; NCCL sends {loops} of {chunk} bytes"
        )));
    }
    let mut s = trees_in_chunks(p, parents, chunks, true, gamma_us)?;
    s.channel_credit = true;
    Ok(s)
}
