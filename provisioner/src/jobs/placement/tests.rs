use super::*;
use crate::jobs::view::PodUse;
use planner::design::shorthand::{self, Shorthand};

fn plan() -> CheckedPlan {
    let (inv, opts) = shorthand::bigraph(2, 4, &Shorthand::default()).unwrap();
    planner::design::design(&inv, &opts).unwrap()
}

fn job(ranks: usize) -> JobSpec {
    let text = format!("name = \"j\"\nimage = \"i\"\ncommand = [\"c\"]\nranks = {ranks}\n");
    JobSpec::from_toml(&text, "j.toml").unwrap()
}

#[test]
fn offline_places_like_the_rank_table() {
    let plan = plan();
    let bound = crate::nodes::bind(&plan, None, "p.json").unwrap();
    let view = ClusterView::all_free(&bound);
    let p = place(&plan, &bound, &view, &job(4)).unwrap();
    let want = planner::ranks::rank_table(&plan, Algorithm::Hdrm, Some(4)).unwrap();
    assert_eq!(p.table, want);
    assert_eq!(p.method, "algorithm-1");
    assert_eq!((p.worst_load, p.lower_bound), (1, 1));
    for r in &p.ranks {
        assert_eq!(plan.sub_node_list[r.sub_node].server, r.server);
    }
    assert!(p.unusable.is_empty());
}

#[test]
fn busy_nodes_are_skipped_and_named() {
    let plan = plan();
    let bound = crate::nodes::bind(&plan, None, "p.json").unwrap();
    let mut view = ClusterView::all_free(&bound);
    view.nodes[0].pods.push(PodUse {
        namespace: "ml".into(),
        name: "train-0".into(),
        gpus: 1,
    });
    view.nodes[1].unschedulable = true;
    let p = place(&plan, &bound, &view, &job(4)).unwrap();
    let busy = [view.nodes[0].name.as_str(), view.nodes[1].name.as_str()];
    assert!(p.nodes.iter().all(|n| !busy.contains(&n.node.as_str())));
    assert_eq!(p.unusable.len(), 2);
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("pod ml/train-0 (1 GPUs)"))
    );

    let e = place(&plan, &bound, &view, &job(8))
        .unwrap_err()
        .to_string();
    assert!(e.contains("needs 8 GPUs"), "{e}");
    assert!(
        e.contains(&format!(
            "only 4 of the plan {} are free: 4 more are needed",
            plan.source()
        )),
        "{e}"
    );
    assert!(
        e.contains("busy: 1 of 2 GPUs held by pod ml/train-0"),
        "{e}"
    );
    assert!(e.contains("cordoned"), "{e}");
    assert!(!e.contains("the plan has"), "{e}");

    let e = place(&plan, &bound, &ClusterView::all_free(&bound), &job(9))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("only 8 of the plan {} are free: 1 more is needed; nothing was placed\n  the plan has 8 GPUs in all; ask for at most 8 ranks", plan.source())),
        "{e}"
    );
    assert!(!e.contains("Nodes that offer none"), "{e}");
}
