use super::*;
use crate::inventory::Inventory;

fn eflops() -> Inventory {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../topologies/eflops-4x16.toml"
    ))
    .unwrap();
    Inventory::from_toml(&text, "eflops-4x16.toml").unwrap()
}

#[test]
fn eflops_bigraph_is_4x16() {
    let plan = design(&eflops(), &DesignOptions::default()).unwrap();
    let b = plan.bigraph.as_ref().unwrap();
    assert_eq!((b.m, b.n, b.regular), (4, 16, true));
    assert_eq!(plan.links, 64);
    assert_eq!(plan.switches, 16);
    assert_eq!(plan.physical_switches, 8);
}
