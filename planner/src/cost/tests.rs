use proptest::prelude::*;

use super::*;
use crate::error::Error;
use crate::plan::Media;

const EXAMPLE: &str = include_str!("../../../examples/data/catalog-example.toml");

fn example() -> Catalog {
    Catalog::from_toml(EXAMPLE, "catalog-example.toml").expect("example catalog")
}

fn request(gpus: u64, topology: Want) -> Request {
    Request {
        gpus,
        growth: None,
        topology,
        budget: None,
        oversubscription: 1.0,
        min_bisection: 0.0,
        failures: None,
    }
}

#[test]
fn example_catalog_has_twenty_parts() {
    let c = example();
    let parts = c.part_count();
    assert!(parts >= 20, "{parts} parts");
    assert_eq!(c.currency, "USD");
    assert!(c.note.as_deref().unwrap_or("").contains("illustrative"));
}

#[test]
fn cable_choice_follows_reach_and_price() {
    let c = example();
    // The 1 m DAC is cheaper but does not reach across a 3 m rack.
    assert_eq!(c.dac_for(100).unwrap().name, "dac-100g-3m");
    // At 100G the AOC is cheaper than fibre and two optics; at 200G not.
    assert!(matches!(
        c.optical_for(100, c.between_racks_m),
        Some(catalog::OpticalLink::Aoc(_))
    ));
    assert!(matches!(
        c.optical_for(200, c.between_racks_m),
        Some(catalog::OpticalLink::Fibre(_, _))
    ));
}

fn problems(text: &str) -> Vec<String> {
    match Catalog::from_toml(text, "c.toml") {
        Err(Error::Invalid { problems, .. }) => {
            problems.iter().map(|p| p.display_in("c.toml")).collect()
        }
        other => panic!("expected problems, got {other:?}"),
    }
}

#[test]
fn bad_parts_are_named_with_their_line() {
    let p = problems(
        "[[switch]]\nname = \"a\"\nports = 0\ngbps = 100\nprice = -1\n\n[[switch]]\nname = \"a\"\nports = 8\ngbps = 100\nprice = 1\nsplit = 3\n\n[[cable]]\nname = \"c\"\ngbps = 100\nprice = 5\n",
    );
    assert_eq!(
        p,
        [
            "c.toml:2: switch \"a\": price is -1; set price to 0 or more",
            "c.toml:2: switch \"a\": ports is 0; set ports to the port count",
            "c.toml:8: switch \"a\": the name is used twice; give every part its own name",
            "c.toml:8: switch \"a\": split is 3; set split to 1 (no virtual switches) or an even number of at most half the ports",
            "c.toml:15: cable \"c\": reach_m is missing; add reach_m = <longest run in metres>",
            "c.toml:15: cable \"c\": kind is missing; add kind = \"dac\", \"aoc\" or \"fibre\"",
        ]
    );
}

#[test]
fn unknown_keys_are_syntax_errors_at_their_line() {
    let e = Catalog::from_toml(
        "[[switch]]\nname = \"a\"\nports = 8\ngbps = 100\nprice = 1\nprise = 2\n",
        "c.toml",
    )
    .unwrap_err();
    assert!(matches!(e, Error::Syntax { line: 6, .. }), "{e}");
}

#[test]
fn a_catalog_needs_a_switch() {
    assert_eq!(
        problems("currency = \"EUR\"\n"),
        [
            "c.toml: catalog: there is no switch; add a [[switch]] table with name, ports, gbps and price"
        ]
    );
}

#[test]
fn sixty_four_gpus_fit_one_switch() {
    let p = purchase(&example(), &request(64, Want::Any)).unwrap();
    assert_eq!(p.chosen.topology, crate::plan::Topology::FatTree);
    assert_eq!(p.chosen.switches, 1);
    // The runner-up is of the other family: a BiGraph.
    let r = p.runner_up.unwrap();
    assert_eq!(r.design.topology, crate::plan::Topology::BiGraph);
    assert!(r.cost_difference > 0.0);
    let sum: f64 = p
        .chosen
        .parts
        .iter()
        .map(|l| l.count as f64 * l.unit_price)
        .sum();
    assert!((sum - p.chosen.total_cost).abs() < 0.01);
}

#[test]
fn bigraph_keeps_m_at_most_half_n() {
    let p = purchase(&example(), &request(4096, Want::BiGraph)).unwrap();
    assert_eq!(p.chosen.topology, crate::plan::Topology::BiGraph);
    assert!(p.chosen.capacity >= 4096);
    // "BiGraph MxN: ..."
    let shape = p.chosen.design.split(':').next().unwrap();
    let (m, n) = shape
        .trim_start_matches("BiGraph ")
        .split_once('x')
        .unwrap();
    let (m, n): (u64, u64) = (m.parse().unwrap(), n.parse().unwrap());
    assert!(m <= n / 2, "{}", p.chosen.design);
    assert!(m * n >= 4096);
}

#[test]
fn growth_buys_ports_not_gpus() {
    let mut req = request(512, Want::Any);
    req.growth = Some(2048);
    let p = purchase(&example(), &req).unwrap();
    assert!(p.chosen.capacity >= 2048);
    let gpus = p.chosen.parts.iter().find(|l| l.kind == "gpu").unwrap();
    assert_eq!(gpus.count, 512);
}

#[test]
fn an_unreachable_budget_says_so() {
    let mut req = request(64, Want::Any);
    req.budget = Some(1000.0);
    let e = purchase(&example(), &req).unwrap_err().to_string();
    assert!(e.contains("the budget of 1,000 USD cannot be met"), "{e}");
}

#[test]
fn too_many_gpus_name_the_port_constraint() {
    let e = purchase(&example(), &request(100_000, Want::BiGraph))
        .unwrap_err()
        .to_string();
    assert!(e.contains("port counts cannot be met"), "{e}");
    assert!(e.contains("largest BiGraph"), "{e}");
}

#[test]
fn oversubscription_allows_smaller_fabrics() {
    let strict = purchase(&example(), &request(1024, Want::FatTree)).unwrap();
    let mut req = request(1024, Want::FatTree);
    req.oversubscription = 3.0;
    let loose = purchase(&example(), &req).unwrap();
    assert!(loose.chosen.total_cost <= strict.chosen.total_cost);
    assert!(loose.chosen.bisection_gbps <= strict.chosen.bisection_gbps);
}

#[test]
fn money_has_thousands_separators() {
    assert_eq!(money(1_234_567.4), "1,234,567");
    assert_eq!(money(999.0), "999");
    assert_eq!(money(0.1), "0.10");
    assert_eq!(money(-12_000.0), "-12,000");
}

/// The cheapest design by brute force over every shape, for catalogs of
/// switches at one speed with no power figures.
fn brute_force(c: &Catalog, g: u64, want: Want, floor: f64) -> Option<f64> {
    use crate::metrics::{CutShape, bisection_gbps, bisection_ratio};
    let meets = |shape: CutShape| {
        let p = g as usize;
        bisection_ratio(bisection_gbps(shape, p, 1.0, 1.0), p, 1.0, 1) >= floor - 1e-9
    };
    let opt = c.optical_tco(&c.optical_for(100, c.between_racks_m)?);
    let fixed = g as f64 * (c.nic_for(100)?.price + c.dac_for(100)?.price);
    let mut best = f64::INFINITY;
    for s in &c.switches {
        let p = u64::from(s.ports);
        if want != Want::BiGraph && p >= g {
            best = best.min(s.price + fixed);
        }
        if want != Want::FatTree {
            let mut splits = vec![1];
            splits.extend((2..=s.split).step_by(2));
            for v in splits {
                let pv = p / u64::from(v);
                // N = 2h a power of two, as HDRM needs.
                for h in (1..pv).filter(|h| h.is_power_of_two()) {
                    let shape = CutShape::BiGraph {
                        upper: h as usize,
                        lower: h as usize,
                    };
                    if !meets(shape) {
                        continue;
                    }
                    for m in 1..=h.min(pv - h) {
                        if 2 * h * m >= g {
                            let phys = (2 * h).div_ceil(u64::from(v));
                            best = best.min(phys as f64 * s.price + (h * h) as f64 * opt + fixed);
                        }
                    }
                }
            }
        }
        if want != Want::BiGraph {
            for sp in &c.switches {
                let ps = u64::from(sp.ports);
                for u in 1..p {
                    for d in 1..=(p - u).min(u) {
                        let leaves = g.div_ceil(d);
                        let spines = (leaves * u).div_ceil(ps).max(1);
                        let shape = CutShape::LeafSpine {
                            leaves: leaves as usize,
                            spines: spines as usize,
                            links_per_leaf_spine: u as f64 / spines as f64,
                        };
                        let leaf_share = d as f64 * floor <= u as f64 + 1e-9;
                        if spines <= u && leaves <= ps && leaf_share && meets(shape) {
                            let cost = leaves as f64 * s.price
                                + spines as f64 * sp.price
                                + (leaves * u) as f64 * opt
                                + fixed;
                            best = best.min(cost);
                        }
                    }
                }
            }
        }
    }
    best.is_finite().then_some(best)
}

fn small_catalog(switches: &[(u32, u32, bool)]) -> Catalog {
    let mut text = String::from(
        "[[nic]]\nname = \"n\"\ngbps = 100\nprice = 500\n\n[[cable]]\nname = \"d\"\nkind = \"dac\"\ngbps = 100\nreach_m = 3\nprice = 50\n\n[[cable]]\nname = \"a\"\nkind = \"aoc\"\ngbps = 100\nreach_m = 30\nprice = 400\n",
    );
    for (i, (ports, price, split)) in switches.iter().enumerate() {
        text.push_str(&format!(
            "\n[[switch]]\nname = \"s{i}\"\nports = {ports}\ngbps = 100\nprice = {price}\nsplit = {}\n",
            if *split { 2 } else { 1 }
        ));
    }
    Catalog::from_toml(&text, "random.toml").unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The programs' choice is never dearer than any feasible shape found
    /// by brute force, and brute force finds nothing cheaper.
    #[test]
    fn purchase_matches_brute_force(
        switches in prop::collection::vec(
            (prop::sample::select(vec![4u32, 8, 12, 16]), 1000u32..20000, any::<bool>()),
            1..4,
        ),
        gpus in 2u64..80,
        want in prop::sample::select(vec![Want::BiGraph, Want::FatTree, Want::Any]),
        floor in prop::sample::select(vec![0.0, 0.5, 0.75, 1.0]),
    ) {
        let c = small_catalog(&switches);
        let brute = brute_force(&c, gpus, want, floor);
        let req = Request {
            min_bisection: floor,
            ..request(gpus, want)
        };
        match purchase(&c, &req) {
            Ok(p) => {
                let b = brute.expect("brute force finds a design too");
                prop_assert!((p.chosen.total_cost - b).abs() < 0.01,
                    "programs {} ({}), brute force {b}", p.chosen.total_cost, p.chosen.design);
                // Every design shown meets the floor.
                prop_assert!(p.chosen.bisection_ratio >= floor - 1e-9, "{}", p.chosen.design);
                if let Some(r) = &p.runner_up {
                    prop_assert!(r.design.bisection_ratio >= floor - 1e-9, "{}", r.design.design);
                }
            }
            Err(e) => prop_assert!(brute.is_none(), "{e}, brute force found {brute:?}"),
        }
    }
}

#[test]
fn issue13_purchase_and_compare_agree_on_bisection() {
    use crate::design::shorthand::{self, Shorthand};
    let p = purchase(&example(), &request(512, Want::Any)).unwrap();
    assert!(
        p.chosen.design.starts_with("BiGraph 16x32:"),
        "{}",
        p.chosen.design
    );
    // The same fabric as `compare --bigraph 16x32` and `design` see it.
    let (inv, opts) = shorthand::bigraph(16, 32, &Shorthand::default()).unwrap();
    let c = crate::compare::compare(
        &inv,
        &crate::design::DesignOptions {
            topology: crate::plan::Topology::FatTree,
            ..opts
        },
    );
    let gbps = |t| {
        c.designs
            .iter()
            .find(|d| d.topology == t)
            .and_then(|d| d.metrics.as_ref())
            .map(|m| m.bisection_gbps)
            .unwrap()
    };
    let (big, fat) = (
        gbps(crate::plan::Topology::BiGraph),
        gbps(crate::plan::Topology::FatTree),
    );
    // N^2/8 links of 100 Gbps: half of full bisection for M = N/2.
    assert_eq!(big, 32.0 * 32.0 / 8.0 * 100.0);
    assert_eq!(p.chosen.bisection_gbps, big);
    let r = p.runner_up.unwrap().design;
    assert_eq!(r.topology, crate::plan::Topology::FatTree);
    assert_eq!(r.bisection_gbps, fat);
    // So both call the fat-tree cheaper per Gbps of bisection.
    assert!(r.cost_per_bisection_gbps < p.chosen.cost_per_bisection_gbps);
}

/// Issue #33: with the default floor of full bisection, `purchase` no
/// longer picks a half-bisection BiGraph for being cheaper in total; with
/// a 50 % floor it may, and says which is cheaper per Gbps the same way
/// `compare` does.
#[test]
fn issue33_purchase_holds_the_bisection_floor() {
    let floored = |gpus, floor| {
        let req = Request {
            min_bisection: floor,
            ..request(gpus, Want::Any)
        };
        purchase(&example(), &req).unwrap()
    };
    for gpus in [512, 2048, 8192] {
        let p = floored(gpus, 1.0);
        assert_eq!(p.min_bisection, 1.0);
        assert_eq!(p.chosen.bisection_ratio, 1.0, "{}", p.chosen.design);
        let r = p.runner_up.expect("a runner-up").design;
        assert_eq!(r.bisection_ratio, 1.0, "{gpus}: {}", r.design);
        for d in [&p.chosen, &r] {
            assert_eq!(
                d.cost_per_bisection_gbps,
                super::bom::per_bisection_gbps(d.total_cost, d.bisection_gbps)
            );
        }
    }
    let half = floored(512, 0.5);
    assert!(
        half.chosen.design.starts_with("BiGraph 16x32:"),
        "{}",
        half.chosen.design
    );
    assert_eq!(half.chosen.bisection_ratio, 0.5);
    assert!(
        half.binding_constraints
            .iter()
            .any(|b| b.constraint == "bisection floor"),
        "{:?}",
        half.binding_constraints
    );
    let e = purchase(
        &example(),
        &Request {
            min_bisection: 1.5,
            ..request(512, Want::Any)
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("min-bisection: 150%"), "{e}");
    // A floor nothing meets names the best design without it.
    let e = purchase(
        &example(),
        &Request {
            min_bisection: 1.0,
            ..request(32768, Want::BiGraph)
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("no design reaches the bisection floor of 100% of full; the cheapest design without it, BiGraph 128x256"),
        "{e}"
    );
}

#[test]
fn issue13_purchase_proposes_only_hdrm_bigraphs() {
    for gpus in [512, 1000, 4096] {
        let p = purchase(&example(), &request(gpus, Want::BiGraph)).unwrap();
        let shape = p.chosen.design.split(':').next().unwrap();
        let (m, n) = shape
            .trim_start_matches("BiGraph ")
            .split_once('x')
            .unwrap();
        let (m, n): (usize, usize) = (m.parse().unwrap(), n.parse().unwrap());
        assert!(n.is_power_of_two(), "{gpus}: {}", p.chosen.design);
        let x = 1usize << (m * n).min(gpus as usize).ilog2();
        crate::ranks::hdrm::check(n, m, x, "x")
            .unwrap_or_else(|e| panic!("{gpus}: {}: {e}", p.chosen.design));
    }
}

#[test]
fn issue13_purchase_linear_in_switch_ports() {
    // One 65,535-port switch ran for minutes (a program over every shape).
    // The catalog now refuses a switch above the ports-per-switch limit,
    // and the largest it takes plans at once.
    let text = "[[switch]]\nname = \"big\"\nports = 65535\ngbps = 100\nprice = 1\n";
    let e = Catalog::from_toml(text, "big.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("65535 ports per switch is above the limit of 4096"),
        "{e}"
    );
    let c = small_catalog(&[(4096, 500_000, false), (16, 2000, true)]);
    let start = std::time::Instant::now();
    for want in [Want::Any, Want::BiGraph, Want::FatTree] {
        purchase(&c, &request(4096, want)).unwrap();
    }
    let took = start.elapsed();
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
}

#[test]
fn leaf_spine_may_have_more_spines_than_a_spine_has_ports() {
    // 3 leaves of 12 ports with 6 uplinks each over 5 spines of 4 ports: 18
    // links on 20 spine ports, cheaper than 5 of the 12-port switch.
    let c = small_catalog(&[(4, 4763, false), (12, 11908, false)]);
    let p = purchase(&c, &request(16, Want::FatTree)).unwrap();
    let b = brute_force(&c, 16, Want::FatTree, 0.0).unwrap();
    assert!(
        (p.chosen.total_cost - b).abs() < 0.01,
        "{}",
        p.chosen.design
    );
}

/// A rail-optimized purchase has whole groups: a rail switch per GPU of
/// the catalog's server in each, so the leaf count is a multiple of the
/// rails, and it costs at least the plain leaf-spine of the same parts.
#[test]
fn rail_optimized_purchase_buys_whole_groups() {
    for gpus in [512u64, 1024, 4096] {
        let rail = purchase(&example(), &request(gpus, Want::RailOptimized)).unwrap();
        assert_eq!(rail.chosen.topology, crate::plan::Topology::RailOptimized);
        assert!(
            rail.chosen.design.starts_with("rail-optimized "),
            "{}",
            rail.chosen.design
        );
        let leaf = purchase(&example(), &request(gpus, Want::FatTree)).unwrap();
        assert!(
            rail.chosen.total_cost >= leaf.chosen.total_cost - 0.01,
            "{gpus}"
        );
        assert!(rail.chosen.capacity >= gpus);
    }
    // Without a server in the catalog the rails are unknown.
    let mut c = example();
    c.servers.clear();
    let e = purchase(&c, &request(512, Want::RailOptimized))
        .unwrap_err()
        .to_string();
    assert!(e.contains("its GPUs are the rails"), "{e}");
}

/// How many parts of a purchased design `keep` keeps.
fn count_parts(
    d: &crate::cost::purchase::Design,
    keep: impl Fn(&crate::cost::purchase::BomLine) -> bool,
) -> u64 {
    d.parts.iter().filter(|p| keep(p)).map(|p| p.count).sum()
}

/// An HPN purchase is the cheapest rail-optimized fabric once per plane:
/// twice its switches, two NIC ports and two optical links per GPU, twice its
/// bisection; with `Any` it is never chosen over the rail-optimized
/// fabric it doubles.
#[test]
fn hpn_purchase_is_the_rail_fabric_per_plane() {
    for gpus in [512u64, 1024] {
        let rail = purchase(&example(), &request(gpus, Want::RailOptimized)).unwrap();
        let hpn = purchase(&example(), &request(gpus, Want::Hpn)).unwrap();
        let (r, h) = (&rail.chosen, &hpn.chosen);
        assert_eq!(h.topology, crate::plan::Topology::Hpn);
        assert!(h.design.starts_with("HPN 2 planes of "), "{}", h.design);
        assert_eq!(h.switches, 2 * r.switches, "{gpus}");
        assert!((h.bisection_gbps - 2.0 * r.bisection_gbps).abs() < 1e-6);
        let count =
            |d: &crate::cost::purchase::Design, kind: &str| count_parts(d, |p| p.kind == kind);
        assert_eq!(count(h, "nic"), 2 * gpus);
        assert_eq!(count(h, "nic"), 2 * count(r, "nic"));
        assert!(h.total_cost > r.total_cost);
        let any = purchase(&example(), &request(gpus, Want::Any)).unwrap();
        assert_ne!(any.chosen.topology, crate::plan::Topology::Hpn);
    }
}

/// Server-to-rail cables are priced by the catalog's rule for a run
/// between racks: a rail switch (or an HPN ToR) takes one NIC of every
/// server of its group, so it stands in no server's rack. `purchase`
/// buys the optical link for every NIC port on rails and a DAC on a
/// leaf-spine or BiGraph (leaf in the rack), and `cost` prices a designed
/// plan by the same rule.
#[test]
fn server_to_rail_cables_are_optical() {
    use crate::design::shorthand::{self, Shorthand};
    let c = example();
    let count = |d: &crate::cost::purchase::Design, part: &str| count_parts(d, |p| p.part == part);
    let dac = c.dac_for(100).unwrap().name.clone();
    let aoc = match c.optical_for(100, c.between_racks_m).unwrap() {
        catalog::OpticalLink::Aoc(a) => a.name.clone(),
        catalog::OpticalLink::Fibre(..) => panic!("the example catalog's 100G link is an AOC"),
    };
    for gpus in [512u64, 1024] {
        let leaf = purchase(&c, &request(gpus, Want::FatTree)).unwrap().chosen;
        assert_eq!(count(&leaf, &dac), gpus, "{}", leaf.design);
        let rail = purchase(&c, &request(gpus, Want::RailOptimized))
            .unwrap()
            .chosen;
        let hpn = purchase(&c, &request(gpus, Want::Hpn)).unwrap().chosen;
        for (d, ports) in [(&rail, 1), (&hpn, 2)] {
            assert_eq!(count(d, &dac), 0, "{}", d.design);
            // One AOC per NIC port, and one per inter-switch link: a
            // non-blocking leaf-spine has as many uplinks as downlinks.
            assert_eq!(
                count(d, &aoc),
                2 * ports * gpus.max(d.capacity),
                "{}",
                d.design
            );
        }
    }
    // `cost` of designed plans: the rail-optimized plan's NIC cables are
    // optical, the fat-tree's DAC.
    let (inv, opts) =
        shorthand::rail_optimized("sub-nodes=64,rails=8,ports=16", &Shorthand::default()).unwrap();
    let rail = crate::design::design(&inv, &opts).unwrap();
    let (inv, opts) =
        shorthand::fat_tree("tiers=2,sub-nodes=64,ports=16", &Shorthand::default()).unwrap();
    let leaf = crate::design::design(&inv, &opts).unwrap();
    let (rc, lc) = (
        cost_plan(&rail, &c, None).unwrap(),
        cost_plan(&leaf, &c, None).unwrap(),
    );
    let line = |p: &bom::PlanCost, part: &str| -> u64 {
        p.bom
            .parts
            .iter()
            .filter(|l| l.part == part)
            .map(|l| l.count)
            .sum()
    };
    assert_eq!((line(&rc, &dac), line(&rc, &aoc)), (0, 128));
    assert_eq!((line(&lc, &dac), line(&lc, &aoc)), (64, 64));
}

/// The racked 1,024-GPU inventory's leaf-spine, priced from the 400 Gbps
/// catalog.
fn racked_cost() -> PlanCost {
    let c = Catalog::from_toml(
        include_str!("../../../examples/data/catalog-400g.toml"),
        "catalog-400g.toml",
    )
    .unwrap();
    let plan = crate::design::bundled("h100-1024-racked", Some(crate::plan::Topology::FatTree));
    cost_plan(&plan, &c, None).unwrap()
}

#[test]
fn power_per_rack_adds_up_to_the_bill_of_materials() {
    let mut cost = racked_cost();
    let p = &cost.power;
    // Every watt of the bill is drawn somewhere: in a rack or outside any.
    let bom_watts: f64 = cost
        .bom
        .parts
        .iter()
        .map(|l| l.count as f64 * l.watts)
        .sum();
    let racks: f64 = p.racks.iter().map(|r| r.watts).sum();
    assert!(
        (p.total_watts - bom_watts).abs() < 1.0,
        "{} vs {bom_watts}",
        p.total_watts
    );
    assert!((racks + p.unracked_watts - p.total_watts).abs() < 1.0);
    assert_eq!(p.unracked_watts, 0.0);
    // A server rack: 4 servers of chassis 2,000 W, 8 GPUs of 700 W and 8
    // NICs of 25 W; its leaf (1,100 W) and the optics of its 32 uplinks
    // (10 W each); DACs draw nothing.
    let r01 = &p.racks[0];
    assert_eq!(
        (r01.rack.as_str(), r01.servers, r01.switches),
        ("r01", 4, 1)
    );
    assert_eq!(
        r01.watts,
        4.0 * (2000.0 + 8.0 * 700.0 + 8.0 * 25.0) + 1100.0 + 32.0 * 10.0
    );
    assert_eq!(r01.max_kw, Some(40.0));
    // The network rack: 16 spines and the spine ends of 1,024 fibres.
    let net = p.racks.last().unwrap();
    assert!(net.network);
    assert_eq!((net.servers, net.switches), (0, 16));
    assert_eq!(net.watts, 16.0 * 1100.0 + 1024.0 * 10.0);
    assert!(p.over.is_empty());
    // A limit for the racks without one flags the network rack alone; the
    // server racks keep their own 40 kW.
    cost.limit_racks(20.0);
    assert_eq!(cost.power.over, vec!["network".to_string()]);
    assert!((cost.power.racks.last().unwrap().over_kw().unwrap() - 7.84).abs() < 1e-9);
    // What draws r01: servers, its leaf, the optics of its uplinks.
    assert_eq!(
        (r01_draws(&cost)),
        (4.0 * (2000.0 + 8.0 * 700.0 + 8.0 * 25.0), 1100.0, 320.0)
    );
}

fn r01_draws(c: &PlanCost) -> (f64, f64, f64) {
    let d = c.power.racks[0].draws;
    (d.servers, d.switches, d.cables)
}

/// The racked inventory with every server rack's limit at `kw`, designed
/// as `topology`.
fn racked_at(
    kw: u32,
    topology: crate::plan::Topology,
) -> (crate::inventory::Inventory, crate::checked::CheckedPlan) {
    let text = crate::design::bundled_text("h100-1024-racked")
        .replace("max_kw = 40", &format!("max_kw = {kw}"));
    let inv = crate::inventory::Inventory::from_toml(&text, "h100-1024-racked.toml").unwrap();
    let plan = crate::design::design(
        &inv,
        &crate::design::DesignOptions {
            topology,
            ..crate::design::DesignOptions::default()
        },
    )
    .unwrap();
    (inv, plan)
}

fn catalog_400g() -> Catalog {
    Catalog::from_toml(
        include_str!("../../../examples/data/catalog-400g.toml"),
        "catalog-400g.toml",
    )
    .unwrap()
}

/// `design --catalog` refuses a rack over its limit, naming the racks
/// (grouped when they draw alike), the inventory line, the draw, the limit
/// and what draws it; allowed, the power report flags them.
#[test]
fn a_design_over_a_racks_limit_is_refused_or_flagged() {
    let c = catalog_400g();
    let (inv, plan) = racked_at(32, crate::plan::Topology::FatTree);
    let err = check_rack_power(&plan, &inv, &c, false)
        .unwrap_err()
        .to_string();
    for want in [
        "h100-1024-racked.toml:17: 32 racks: r01, r02, r03, r04 and 28 more",
        "each draws 32.6 kW, over its 32.0 kW limit by 0.6 kW (4 servers 31.2 kW, 1 switch 1.1 kW, cable ends and optics 0.3 kW)",
        "allow designs over a rack's limit",
    ] {
        assert!(err.contains(want), "missing `{want}` in:\n{err}");
    }
    let p = check_rack_power(&plan, &inv, &c, true).unwrap();
    assert_eq!(p.over.len(), 32);
    assert!(
        render_power_line(&p, "c")
            .contains("rack r01 draws 32.6 kW, OVER its 32.0 kW limit by 0.6 kW (32 racks over)")
    );
    // Within the limit: no refusal, the worst rack against its limit.
    let (inv, plan) = racked_at(40, crate::plan::Topology::FatTree);
    let p = check_rack_power(&plan, &inv, &c, false).unwrap();
    assert!(
        render_power_line(&p, "c")
            .contains("highest rack against its limit: r01 at 32.6 kW of 40.0 kW")
    );
}

/// `compare --catalog` ranks a design that puts a rack over its limit
/// below one that does not: at 32 kW the rail-optimized design (31.5 kW
/// racks, its switches in network racks) is the verdict's cheapest,
/// though the fat-tree costs less.
#[test]
fn compare_ranks_designs_over_a_rack_limit_last() {
    let c = catalog_400g();
    let text =
        crate::design::bundled_text("h100-1024-racked").replace("max_kw = 40", "max_kw = 32");
    let inv = crate::inventory::Inventory::from_toml(&text, "h100-1024-racked.toml").unwrap();
    let cmp = crate::compare::compare(
        &inv,
        &crate::design::DesignOptions {
            topology: crate::plan::Topology::FatTree,
            ..crate::design::DesignOptions::default()
        },
    );
    let text = render_comparison_costs(&cost_comparison(&cmp, &c), &c);
    assert!(
        text.contains("32.6 kW of 32.0 (r01), 32 OVER limit"),
        "{text}"
    );
    assert!(
        text.contains("cheapest: rail-optimized; cheapest per Gbps of bisection: rail-optimized; ranked below, a rack over its power limit: bigraph, fat-tree"),
        "{text}"
    );
}

/// The 400 Gbps catalog with a short AOC and a long fibre, and the run
/// lengths given.
fn catalog_with_runs(runs: &str) -> Catalog {
    let text = include_str!("../../../examples/data/catalog-400g.toml")
        .replace("between_racks_m = 30\n", &format!("{runs}\n"))
        + r#"
[[cable]]
name = "aoc-400g-20m"
kind = "aoc"
gbps = 400
reach_m = 20
price = 500
watts = 12

[[cable]]
name = "fibre-smf-100m"
kind = "fibre"
gbps = 400
reach_m = 100
price = 90
"#;
    Catalog::from_toml(&text, "runs.toml").unwrap()
}

#[test]
fn each_run_is_priced_at_the_length_the_catalog_gives_it() {
    // Rail-optimized on the racked inventory: server to rail switch within
    // the row (the rail switch stands in `network-a` or `network-b`), rail
    // switch to spine between a row's rack and the row-less `network`.
    let plan = crate::design::bundled(
        "h100-1024-racked",
        Some(crate::plan::Topology::RailOptimized),
    );
    let c = catalog_with_runs("same_row_m = 15\nbetween_racks_m = 60");
    let cost = cost_plan(&plan, &c, None).unwrap();
    let runs: Vec<_> = (cost.cable_runs.iter())
        .map(|r| (r.run.as_str(), r.media, r.count, r.metres, r.part.as_str()))
        .collect();
    assert_eq!(
        runs,
        [
            ("same_row", Media::Optical, 1024, 15.0, "aoc-400g-20m"),
            (
                "between_racks",
                Media::Optical,
                1024,
                60.0,
                "fibre-smf-100m + 2 optic-400g-dr4"
            ),
        ]
    );
    // The AOCs draw their watts at both ends: 1,024 x 12 W in all.
    let aoc_watts: f64 = (cost.bom.parts.iter())
        .filter(|l| l.part == "aoc-400g-20m")
        .map(|l| l.count as f64 * l.watts)
        .sum();
    assert_eq!(aoc_watts, 1024.0 * 12.0);
    let text = render_plan_cost(&cost, &c, "racked.json");
    assert!(
        text.contains("same_row") && text.contains("15,360"),
        "{text}"
    );

    // Rows given but no long run: the leaf-spine's uplinks run between a
    // row's rack and the row-less network rack, so `between_rows_m` does
    // not apply, and `between_racks_m` beyond every link is named.
    let leaf_spine =
        crate::design::bundled("h100-1024-racked", Some(crate::plan::Topology::FatTree));
    let c = catalog_with_runs("between_rows_m = 900\nbetween_racks_m = 700");
    let err = cost_plan(&leaf_spine, &c, None).unwrap_err().to_string();
    assert!(
        err.contains("1024 optical cables at 400 Gbps running between_racks")
            && err.contains("reaching 700 m (between_racks_m)")
            && err.contains("lower between_racks_m"),
        "{err}"
    );
    assert!(!err.contains("between_rows"), "{err}");
}

const BREAKOUT: &str = include_str!("../../../examples/data/catalog-breakout.toml");

/// How many of a part the bill of materials holds (0 when none).
fn count_of(cost: &PlanCost, part: &str) -> u64 {
    (cost.bom.parts.iter())
        .find(|l| l.part == part)
        .map_or(0, |l| l.count)
}

fn breakout_cost(catalog: &str) -> Result<PlanCost, Error> {
    let plan = crate::design::bundled("breakout-200g", Some(crate::plan::Topology::FatTree));
    let c = Catalog::from_toml(catalog, "catalog-breakout.toml").expect("catalog");
    cost_plan(&plan, &c, None)
}

#[test]
fn a_breakout_cable_is_priced_once_with_its_optics_per_end() {
    let cost = breakout_cost(BREAKOUT).unwrap();
    let count = |part: &str| count_of(&cost, part);
    // 32 sub-node legs in 16 cages: 16 breakout DACs, not 32.
    assert_eq!(count("dac-400g-2x200g-3m"), 16);
    // 32 spine legs in 16 leaf cages: 16 breakout fibres, each with one
    // 400G optic at the cage and a 200G optic per leg.
    assert_eq!(count("fibre-mpo-breakout-30m"), 16);
    assert_eq!(count("optic-400g-dr4"), 16);
    assert_eq!(count("optic-200g-dr2"), 32);
    // The switches are priced by their cages at 400G.
    assert_eq!(count("sw-16x400"), 4);
    assert_eq!(count("nic-200g"), 32);
    let parts: Vec<&str> = cost.cable_runs.iter().map(|r| r.part.as_str()).collect();
    assert!(
        parts.contains(&"dac-400g-2x200g-3m (breakout 2x200G)"),
        "{parts:?}"
    );
}

#[test]
fn a_catalog_without_the_breakout_part_names_it() {
    let text = BREAKOUT.replace("breakout = \"2x200G\"\nreach_m = 3", "reach_m = 3");
    match breakout_cost(&text).unwrap_err() {
        Error::CatalogLacks { problems, .. } => {
            let p = problems
                .iter()
                .find(|p| p.object.contains("DAC breakout cables 2x200G"))
                .unwrap_or_else(|| panic!("{problems:?}"));
            assert_eq!(p.object, "16 DAC breakout cables 2x200G at 400 Gbps");
            assert!(p.message.contains("(in_rack_m)"), "{}", p.message);
            assert_eq!(
                p.fix,
                "add a [[cable]] with kind = \"dac\", gbps = 400, breakout = \"2x200G\", reach_m >= 3"
            );
        }
        e => panic!("{e}"),
    }
}

#[test]
fn a_bad_breakout_part_is_named_with_its_line() {
    let text = BREAKOUT.replacen("breakout = \"2x200G\"", "breakout = \"2x100G\"", 1);
    let p = problems(&text);
    assert!(
        p.iter().any(|p| p.contains("cable \"dac-400g-2x200g-3m\"") && p.contains("is 200 Gbps in all")),
        "{p:?}"
    );
}

#[test]
fn a_straight_cable_between_broken_out_cages_is_a_whole_cable() {
    // Spines broken out alike: each leaf cage meets one spine cage lane to
    // lane, a straight 400G cable with a 400G optic at each end.
    let text = crate::design::bundled_text("breakout-200g").replace(
        "port_gbps = 400\nrole = \"spine\"",
        "port_gbps = 400\nbreakout = \"2x200G\"\nrole = \"spine\"",
    );
    let inv = crate::inventory::Inventory::from_toml(&text, "b.toml").unwrap();
    let opts = crate::design::DesignOptions {
        topology: crate::plan::Topology::FatTree,
        ..Default::default()
    };
    let plan = crate::design::design(&inv, &opts).unwrap();
    let straight = plan.physical_cables().iter().filter(|c| c.straight).count();
    assert_eq!(straight, 16);
    let catalog = format!(
        "{BREAKOUT}\n[[cable]]\nname = \"fibre-400g-30m\"\nkind = \"fibre\"\ngbps = 400\nreach_m = 30\nprice = 40\n"
    );
    let c = Catalog::from_toml(&catalog, "c.toml").unwrap();
    let cost = cost_plan(&plan, &c, None).unwrap();
    let count = |part: &str| count_of(&cost, part);
    assert_eq!(count("fibre-400g-30m"), 16);
    assert_eq!(count("optic-400g-dr4"), 32);
    assert_eq!(count("fibre-mpo-breakout-30m"), 0);
    assert_eq!(count("dac-400g-2x200g-3m"), 16);
}
