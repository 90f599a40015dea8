//! Tests of the rank table's check: the quick pass over distinct sub-nodes accepts exactly what the check rank by rank accepts.

use proptest::prelude::*;

use super::{check_each_rank, check_ranks_of, distinct_in_range, has_repeats};
use crate::checked::CheckedPlan;
use crate::network::tests::bigraph_plan;

/// A plan whose NICs carry one GPU each, and one whose NICs carry two.
fn plan_of(shared: bool) -> CheckedPlan {
    if shared {
        crate::design::bundled("dgx1-v100", None)
    } else {
        bigraph_plan(4, 8)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Tables of any length with sub-nodes in and out of range, some of
    /// them twice or three times, on NICs of one GPU and of two: the
    /// check's answer, errors word for word, is the check rank by rank's;
    /// and a table has repeats exactly when the quick pass refuses it
    /// with every sub-node in range.
    #[test]
    fn quick_check_is_the_check_rank_by_rank(
        shared in any::<bool>(),
        picks in proptest::collection::vec((any::<u16>(), 0u8..8), 0..200),
    ) {
        let plan = plan_of(shared);
        let p = plan.sub_node_list.len();
        // Mostly in range, now and then one past it, and repeats.
        let ranks: Vec<usize> = picks
            .iter()
            .map(|&(v, kind)| match kind {
                0 => p + v as usize % 3,
                1 => v as usize % 4,
                _ => v as usize % p,
            })
            .collect();
        let quick = check_ranks_of(&plan, "t.json", &ranks).map_err(|e| e.to_string());
        let each = check_each_rank(&plan, "t.json", &ranks).map_err(|e| e.to_string());
        prop_assert_eq!(quick, each);
        let mut seen = std::collections::HashSet::new();
        let distinct = ranks.iter().all(|&sn| sn < p && seen.insert(sn));
        prop_assert_eq!(distinct_in_range(p, &ranks), distinct);
        prop_assert_eq!(has_repeats(&plan, &ranks), !distinct);
    }
}

/// The quick pass refuses a repeat, a sub-node past the end and one a
/// word past it, and takes a table of every sub-node.
#[test]
fn distinct_in_range_refuses_repeats_and_the_out_of_range() {
    assert!(distinct_in_range(70, &(0..70).rev().collect::<Vec<_>>()));
    assert!(distinct_in_range(70, &[]));
    assert!(!distinct_in_range(70, &[3, 69, 3]));
    assert!(!distinct_in_range(70, &[70]));
    assert!(!distinct_in_range(70, &[64 * 3]));
    assert!(!distinct_in_range(64, &[64]));
}
