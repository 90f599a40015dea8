//! Tests of the batched count: the loads of [`Network::count_ecmp`] are those of the routes [`Network::route_seeded`] walks, flow by flow.

use proptest::prelude::*;

use super::hash::{EcmpPrefix, PortSeed, ecmp_hash, fmix64, fnv1a64, sub_node_ip};
use super::hpn_tests::hpn_plan;
use super::tests::{bigraph_plan, fat_tree_plan, rail_plan};
use super::{Avoid, CountScratch, Network, Route};
use crate::checked::CheckedPlan;

/// The loads and crossing flows of `flows` walked one at a time: the
/// reference the batched count is held to.
fn walked(
    net: &Network<'_>,
    flows: &[(usize, usize, u64)],
    seed: u64,
) -> crate::error::Result<(Vec<u32>, usize)> {
    let mut load = vec![0u32; net.link_count()];
    let mut crossing = 0;
    let mut route = Route::default();
    for &(src, dst, flow) in flows {
        net.route_seeded(src, dst, flow, PortSeed::new(seed), &mut route)?;
        crossing += usize::from(!route.inter_switch().is_empty());
        for &l in route.links() {
            load[l] += 1;
        }
    }
    Ok((load, crossing))
}

/// The same flows counted by [`Network::count_ecmp`], `batch` at a time.
fn batched(
    net: &Network<'_>,
    flows: &[(usize, usize, u64)],
    seed: u64,
    batch: usize,
) -> crate::error::Result<(Vec<u32>, usize)> {
    let mut load = vec![0u32; net.link_count()];
    let mut crossing = 0;
    let mut scratch = CountScratch::default();
    for chunk in flows.chunks(batch.max(1)) {
        crossing += net.count_ecmp(chunk, PortSeed::new(seed), &mut scratch, &mut load)?;
    }
    Ok((load, crossing))
}

/// The switches of each flow's two ends, as [`Network::count_between`]
/// takes them.
pub(crate) fn switch_pairs(net: &Network<'_>, flows: &[(usize, usize, u64)]) -> Vec<(u32, u32)> {
    flows
        .iter()
        .map(|&(s, d, _)| {
            (
                net.switch_of(s).unwrap() as u32,
                net.switch_of(d).unwrap() as u32,
            )
        })
        .collect()
}

/// A plan of each kind the walk knows: BiGraphs, leaf-spines (one and
/// several links per pair), a 3-tier fat-tree, a rail-optimized fabric
/// and HPN's two planes.
pub(crate) fn plan_of(kind: usize) -> CheckedPlan {
    match kind {
        0 => bigraph_plan(4, 8),
        1 => bigraph_plan(2, 4),
        2 => fat_tree_plan("tiers=2,sub-nodes=64,ports=16"),
        3 => fat_tree_plan("tiers=2,sub-nodes=32,ports=16"),
        4 => fat_tree_plan("k=4"),
        5 => rail_plan("sub-nodes=64,rails=4,ports=16"),
        _ => hpn_plan("sub-nodes=128,rails=4,ports=16"),
    }
}

/// `plan`'s route graph, with its last switch avoided when `avoided`,
/// and the sub-nodes that keep their switch.
pub(crate) fn last_avoided(plan: &CheckedPlan, avoided: bool) -> (Network<'_>, Vec<usize>) {
    let avoid: Vec<Avoid> = if avoided {
        vec![Avoid::Switch(
            plan.switch_list.last().unwrap().name.to_string(),
        )]
    } else {
        Vec::new()
    };
    let net = Network::avoiding(plan, plan.source(), &avoid).unwrap();
    let usable = (0..plan.sub_node_list.len())
        .filter(|&sn| !net.cut_off(sn))
        .collect();
    (net, usable)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random flows on every kind of fabric, whole and with its last
    /// switch avoided, in random batches: the batched count gives every
    /// link the load and the step the crossing flows that walking each
    /// flow's route gives.
    #[test]
    fn batched_counts_are_the_walked_routes(
        kind in 0usize..7,
        avoided in any::<bool>(),
        seed in any::<u64>(),
        batch in 1usize..300,
        picks in proptest::collection::vec((any::<u32>(), any::<u32>(), any::<u64>()), 0..600),
    ) {
        let plan = plan_of(kind);
        let (net, usable) = last_avoided(&plan, avoided);
        let flows: Vec<(usize, usize, u64)> = picks
            .iter()
            .map(|&(s, d, f)| (usable[s as usize % usable.len()], usable[d as usize % usable.len()], f))
            .collect();
        let want = walked(&net, &flows, seed).map_err(|e| e.to_string());
        let got = batched(&net, &flows, seed, batch).map_err(|e| e.to_string());
        prop_assert_eq!(got, want);
    }

    /// Random flows between switches on every kind of fabric: the
    /// inter-switch loads [`Network::count_between`] counts are those of
    /// walking each flow's route, its access links left untouched; a
    /// network it does not count (avoiding a switch, HPN's two planes)
    /// is refused.
    #[test]
    fn counts_between_switches_are_the_walked_routes(
        kind in 0usize..7,
        avoided in any::<bool>(),
        seed in any::<u64>(),
        picks in proptest::collection::vec((any::<u32>(), any::<u32>(), any::<u64>()), 0..300),
    ) {
        let plan = plan_of(kind);
        let (net, usable) = last_avoided(&plan, avoided);
        let flows: Vec<(usize, usize, u64)> = picks
            .iter()
            .map(|&(s, d, f)| (usable[s as usize % usable.len()], usable[d as usize % usable.len()], f))
            .filter(|&(s, d, _)| net.switch_of(s) != net.switch_of(d))
            .collect();
        let switches = switch_pairs(&net, &flows);
        let port = PortSeed::new(seed);
        let prefix = |i: usize| {
            let (s, d, f) = flows[i];
            EcmpPrefix::new(sub_node_ip(s), sub_node_ip(d), port.port(f))
        };
        let mut load = vec![0u32; net.link_count()];
        let counted = net.count_between(&switches, prefix, &mut CountScratch::default(), &mut load);
        prop_assert_eq!(counted.is_some(), !avoided && kind != 6);
        if counted.is_some() {
            let (mut want, _) = walked(&net, &flows, seed).unwrap();
            for l in net.access_links() {
                want[l] = 0;
            }
            prop_assert_eq!(load, want);
        }
    }

    /// A source's share of its flows' hashes, finished for a destination
    /// and the flow id's low half, is the flow's share of the ECMP hash
    /// with the source port of the whole flow id.
    #[test]
    fn source_share_finishes_as_the_flow_share(
        seed in any::<u64>(),
        src in any::<u32>(),
        dst in any::<u32>(),
        high in any::<u32>(),
        low in any::<u32>(),
    ) {
        let port = PortSeed::new(seed);
        let flow = u64::from(high) << 32 | u64::from(low);
        prop_assert_eq!(
            port.source(src, high).prefix(dst, low),
            EcmpPrefix::new(src, dst, port.port(flow))
        );
    }

    /// The flow's share of the ECMP hash finished at a switch is the hash
    /// of all 17 bytes in one pass (the module documentation's layout).
    #[test]
    fn ecmp_prefix_finishes_as_the_hash(src in any::<u32>(), dst in any::<u32>(), port in any::<u16>(), switch in any::<u32>()) {
        let mut bytes = Vec::with_capacity(17);
        bytes.extend(src.to_be_bytes());
        bytes.extend(dst.to_be_bytes());
        bytes.push(17);
        bytes.extend(port.to_be_bytes());
        bytes.extend(4791u16.to_be_bytes());
        bytes.extend(switch.to_be_bytes());
        let one_pass = fmix64(fnv1a64(&bytes));
        prop_assert_eq!(EcmpPrefix::new(src, dst, port).at(switch), one_pass);
        prop_assert_eq!(ecmp_hash(src, dst, port, switch), one_pass);
    }
}

/// A flow the walk refuses (a sub-node out of range, a rank on an avoided
/// switch) gets the walk's own error from the batched count, whichever
/// flow of the batch it is.
#[test]
fn batched_counts_refuse_as_the_walk_does() {
    let plan = bigraph_plan(4, 8);
    let net = Network::new(&plan, plan.source()).unwrap();
    let n = plan.sub_node_list.len();
    let mut flows: Vec<(usize, usize, u64)> =
        (0..40).map(|i| (i % n, (i * 7) % n, i as u64)).collect();
    flows.push((0, n + 3, 99));
    flows.extend((0..10).map(|i| (i, n - 1 - i, 5)));
    let want = walked(&net, &flows, 1).unwrap_err().to_string();
    assert!(want.contains("out of range"), "{want}");
    assert_eq!(batched(&net, &flows, 1, 64).unwrap_err().to_string(), want);

    let last = plan.switch_list.last().unwrap().name.to_string();
    let net = Network::avoiding(&plan, plan.source(), &[Avoid::Switch(last)]).unwrap();
    let cut = (0..n).find(|&sn| net.cut_off(sn)).unwrap();
    let flows = vec![(0, 1, 0), (cut, 0, 1), (1, 0, 2)];
    let want = walked(&net, &flows, 1).unwrap_err().to_string();
    assert_eq!(batched(&net, &flows, 1, 2).unwrap_err().to_string(), want);
}

/// Too short a load table is refused, not indexed past its end.
#[test]
fn batched_counts_want_every_link() {
    let plan = bigraph_plan(2, 4);
    let net = Network::new(&plan, plan.source()).unwrap();
    let mut load = vec![0u32; net.link_count() - 1];
    let e = net
        .count_ecmp(
            &[(0, 1, 0)],
            PortSeed::new(0),
            &mut CountScratch::default(),
            &mut load,
        )
        .unwrap_err();
    assert!(e.to_string().contains("link loads given"), "{e}");
}
