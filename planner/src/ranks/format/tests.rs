use super::*;
use crate::design::shorthand::{self, Shorthand};
use crate::plan::Plan;
use crate::ranks::{Policy, rank_table};

fn plan() -> crate::checked::CheckedPlan {
    let (inv, opts) = shorthand::bigraph(2, 4, &Shorthand::default()).unwrap();
    crate::design::design(&inv, &opts).unwrap()
}

#[test]
fn outputs_round_trip() {
    let plan = plan();
    let t = rank_table(&plan, Algorithm::Hdrm, None).unwrap();
    let csv = to_csv(&plan, &t);
    assert!(csv.starts_with("rank,server,sub_node,gpu,nic,switch,part\n0,"));
    let (_, back) = read_rank_file(&csv, "r.csv", &plan).unwrap();
    assert_eq!(back, t.ranks);
    let request = Request::default();
    let outcome = crate::ranks::plan_ranks(&plan, &request).unwrap();
    assert_eq!(outcome.table, t);
    let doc = RankDocument::new(&plan, &request, &outcome);
    let json = serde_json::to_string(&doc).unwrap();
    let (alg, back) = read_rank_file(&json, "r.json", &plan).unwrap();
    assert_eq!((alg, back), (Some(Algorithm::Hdrm), t.ranks.clone()));
}

/// cloud-8x16 (eight GPUs behind each server's one NIC) with the
/// NVLink mesh cut in two quads, GPUs 0-3 and 4-7: which flows inside
/// a server go over NVLink depends on which GPU runs which rank.
fn two_quads() -> CheckedPlan {
    let text = crate::design::bundled_text("cloud-8x16").replace(
        "[[server.nvlink]]\nname = \"nvlink\"\nkind = \"mesh\"\ngbytes_per_s = 150\n",
        "[[server.nvlink]]\nname = \"quad0\"\nkind = \"mesh\"\ngbytes_per_s = 150\n\
         gpus = [\"gpu0\", \"gpu1\", \"gpu2\", \"gpu3\"]\n\n\
         [[server.nvlink]]\nname = \"quad1\"\nkind = \"mesh\"\ngbytes_per_s = 150\n\
         gpus = [\"gpu4\", \"gpu5\", \"gpu6\", \"gpu7\"]\n",
    );
    let inv = crate::inventory::Inventory::from_toml(&text, "two-quads.toml").unwrap();
    let opts = crate::design::DesignOptions {
        topology: crate::plan::Topology::FatTree,
        ..Default::default()
    };
    let plan = crate::design::design(&inv, &opts).unwrap();
    assert_eq!(plan.servers[0].nvlink.len(), 2);
    plan
}

/// Every step group's NVLink flows, in order.
fn nvlink(r: &VerifyReport) -> Vec<usize> {
    r.table.steps.iter().map(|g| g.nvlink_flows).collect()
}

/// `ranks --format csv` read back gives every rank its GPU and the
/// same report; a file with two ranks' GPUs swapped gives the report
/// of that mapping (which flows inside a server stay in a quad).
#[test]
fn gpu_index_read_back_and_swapped() {
    let plan = two_quads();
    let request = Request {
        algorithm: Algorithm::Hd,
        ..Request::default()
    };
    let t = crate::ranks::plan_gpu_ranks(&plan, &request).unwrap().table;
    let report = |gpus: &[Option<usize>]| {
        let how = Checked::default();
        let asked = VerifyRequest {
            gpus: Some(gpus),
            ..VerifyRequest::new(&t, "t".into(), how)
        };
        verify_report(&plan, asked).unwrap()
    };
    let csv = to_csv(&plan, &t);
    let back = read_rank_table(&csv, "t.csv", &plan).unwrap();
    assert_eq!(back.ranks, t.ranks);
    assert_eq!(back.gpus, crate::ranks::rank_gpus(&plan, &t.ranks));
    let plain = verify_report(
        &plan,
        VerifyRequest::new(&t, "t".into(), Checked::default()),
    )
    .unwrap();
    assert_eq!(report(&back.gpus), plain);
    assert!(plain.plan_order.is_none());
    // Distances 1 and 2 stay in a quad, 4 crosses; 8 and up leave
    // the server.
    assert_eq!(
        nvlink(&plain),
        [128, 128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 128, 128]
    );
    // Ranks 1 and 4 of vm01 swap GPUs 1 and 4: rank 0 (GPU 0) and 4
    // (GPU 1) now share quad 0, ranks 1 (GPU 4) and 5 share quad 1;
    // 0-1, 1-3, 4-5 and 4-6 now cross (both directions each).
    let swapped = csv
        .replace("\n1,vm01,sn0,,1,", "\n1,vm01,sn0,,4,")
        .replace("\n4,vm01,sn0,,4,", "\n4,vm01,sn0,,1,");
    assert_ne!(swapped, csv);
    let back = read_rank_table(&swapped, "s.csv", &plan).unwrap();
    assert_eq!(back.ranks, t.ranks);
    assert_eq!((back.gpus[1], back.gpus[4]), (Some(4), Some(1)));
    let r = report(&back.gpus);
    assert_eq!(
        nvlink(&r),
        [124, 124, 4, 0, 0, 0, 0, 0, 0, 0, 0, 4, 124, 124]
    );
    // Only the GPUs moved: the same fabric loads, and the plan order
    // (k-th rank on the k-th GPU) beside it.
    assert_eq!(r.table.worst_load, plain.table.worst_load);
    let p = r.plan_order.as_ref().unwrap();
    assert_eq!(
        p.steps.iter().map(|g| g.nvlink_flows).collect::<Vec<_>>(),
        nvlink(&plain)
    );
    let text = render_verify(&r);
    assert!(
        text.contains("reduce-scatter 3 (128 of 128, 4 NVLink, 124 PCIe)"),
        "{text}"
    );
}

/// Why `text` is refused as a rank file of `plan`.
fn refusal(text: &str, file: &str, plan: &Plan) -> String {
    read_rank_table(text, file, plan).unwrap_err().to_string()
}

/// A rank file's GPUs are checked: one of the NIC's, one rank each,
/// and given on a plan whose NICs carry several.
#[test]
fn bad_gpu_indices_name_the_line_and_fix() {
    let plan = crate::design::bundled("cloud-8x16", Some(crate::plan::Topology::FatTree));
    let request = Request {
        algorithm: Algorithm::Ring,
        ranks: Some(8),
        ..Request::default()
    };
    let t = crate::ranks::plan_gpu_ranks(&plan, &request).unwrap().table;
    let csv = to_csv(&plan, &t);
    let bad = csv
        .replace("\n1,vm01,sn0,,1,", "\n1,vm01,sn0,,0,")
        .replace("\n2,vm01,sn0,,2,", "\n2,vm01,sn0,,8,")
        .replace("\n3,vm01,sn0,,3,", "\n3,vm01,sn0,,,");
    let e = refusal(&bad, "b.csv", &plan);
    assert!(
        e.contains("b.csv:3: rank 1: GPU 0 of vm01 sn0 already runs rank 0"),
        "{e}"
    );
    assert!(
        e.contains("b.csv:4: rank 2: gpu_index 8 is not behind the NIC of vm01 sn0, which carries GPUs 0, 1, 2, 3, 4, 5, 6, 7; give one of"),
        "{e}"
    );
    assert!(e.contains("b.csv:5: rank 3: no gpu_index"), "{e}");
    let e = refusal("x,y\n", "b.csv", &plan);
    assert!(e.starts_with("b.csv:1:1:"), "{e}");
    let no_column: String = csv
        .lines()
        .map(|l| {
            let mut f: Vec<&str> = l.split(',').collect();
            f.remove(4);
            f.join(",") + "\n"
        })
        .collect();
    let e = refusal(&no_column, "n.csv", &plan);
    assert!(
        e.contains("n.csv:1: gpu_index: the table has no gpu_index"),
        "{e}"
    );
    assert!(e.contains("planner ranks --format csv"), "{e}");
    // JSON: the same checks, and the GPUs read back.
    let outcome = crate::ranks::plan_gpu_ranks(&plan, &request).unwrap();
    let json = serde_json::to_string(&RankDocument::new(&plan, &request, &outcome)).unwrap();
    let back = read_rank_table(&json, "t.json", &plan).unwrap();
    assert_eq!(back.gpus, crate::ranks::rank_gpus(&plan, &t.ranks));
    let e = read_rank_table(
        &json.replace("\"gpu_index\":5", "\"gpu_index\":4"),
        "t.json",
        &plan,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("rank 5: GPU 4 of vm01 sn0 already runs rank 4"),
        "{e}"
    );
    // A plan with one GPU per NIC: the column may be absent, and a
    // GPU given must be the sub-node's own.
    let small = self::plan();
    let t = rank_table(&small, Algorithm::Hd, None).unwrap();
    let rows: String = (0..t.ranks.len())
        .map(|r| {
            let sn = &small.sub_node_list[t.ranks[r]];
            format!("{r},{},sn{},\n", sn.server, sn.index)
        })
        .collect();
    let csv = format!("rank,server,sub_node,gpu_index\n{rows}");
    let back = read_rank_table(&csv, "o.csv", &small).unwrap();
    assert_eq!(back.ranks, t.ranks);
    assert_eq!(back.gpus, crate::ranks::rank_gpus(&small, &t.ranks));
    let csv = csv.replacen(",sn0,\n", ",sn0,99\n", 1);
    let e = refusal(&csv, "o.csv", &small);
    assert!(e.contains("o.csv:2: rank 0: gpu_index 99"), "{e}");
}

#[test]
fn rankfile_and_hostfile() {
    let plan = plan();
    let t = rank_table(&plan, Algorithm::Hd, None).unwrap();
    let rf = to_rankfile(&plan, &t).unwrap();
    // Two sub-nodes per server, one per socket.
    assert!(
        rf.starts_with("rank 0=node1 slot=0:*\nrank 1=node1 slot=1:*\n"),
        "{rf}"
    );
    assert_eq!(
        to_hostfile(&plan, &t).unwrap().lines().next(),
        Some("node1 slots=2")
    );
}

#[test]
fn bad_rank_files_name_every_problem() {
    let plan = plan();
    let csv = "rank,server,sub_node\n0,node1,sn0\n0,node1,sn1\n1,node9,sn0\n2,node1,sn0\n";
    let e = read_rank_file(csv, "r.csv", &plan).unwrap_err().to_string();
    assert!(
        e.contains("r.csv:3: rank 0: the rank is given twice"),
        "{e}"
    );
    assert!(
        e.contains("r.csv:4: rank 1: node9 sn0 is not a sub-node"),
        "{e}"
    );
    assert!(
        e.contains("r.csv:5: rank 2: node1 sn0 already runs rank 0"),
        "{e}"
    );
    let e = read_rank_file("a,b\n", "r.csv", &plan)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("r.csv:1:1:"), "{e}");
    let e = read_rank_file("{\"ranks\": 3}", "r.json", &plan)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("r.json:1:"), "{e}");
}

/// Issue #33: a rank count left to the plan asks what the count it came
/// to asks; the solver matters only where the algorithm searches (HDRM's
/// mapping); anything else that differs is another request.
#[test]
fn issue33_requests_ask_alike_once_normalised() {
    let hd = Request {
        algorithm: Algorithm::Hd,
        ..Request::default()
    };
    let given = |r: &Request, ranks, solver| Request {
        ranks,
        solver,
        ..r.clone()
    };
    assert!(hd.asks_as(&given(&hd, Some(16), crate::ranks::Solver::Exact), 16));
    assert!(!hd.asks_as(&given(&hd, Some(8), crate::ranks::Solver::Auto), 16));
    let hdrm = Request::default();
    assert!(hdrm.asks_as(&given(&hdrm, Some(16), crate::ranks::Solver::Auto), 16));
    assert!(!hdrm.asks_as(&given(&hdrm, Some(16), crate::ranks::Solver::Exact), 16));
    for other in [
        Request {
            algorithm: Algorithm::Ring,
            ..hd.clone()
        },
        Request {
            seed: 1,
            ..hd.clone()
        },
        Request {
            engine: crate::ranks::Engine::Nccl,
            ..hd.clone()
        },
        Request {
            unavailable: vec![0],
            ..hd.clone()
        },
        Request {
            avoid: vec![crate::ranks::Avoid::Switch("s".into())],
            ..hd.clone()
        },
    ] {
        assert!(!hd.asks_as(&other, 16), "{other:?}");
        assert!(!other.asks_as(&hd, 16), "{other:?}");
    }
}

/// Issue #33: `verify-ranks --algorithm hd` (or `ring`) takes the table it
/// searched as the plan order beside it ([`Known::Searched`])
/// instead of searching and proving the plan order again; whatever the
/// request (every algorithm, engine and solver, a rank count left to the
/// plan or given, a whole job or a folded one), the report is the one
/// searching again gives, on plans with one GPU and several GPUs per NIC,
/// under every routing policy.
#[test]
fn issue33_a_searched_table_reports_as_one_searched_again() {
    let plans = [
        plan(),
        two_quads(),
        crate::network::tests::fat_tree_plan("tiers=2,sub-nodes=32,ports=16"),
    ];
    let mut reused = 0;
    for plan in &plans {
        let net = crate::ranks::Network::new(plan, plan.source()).unwrap();
        for algorithm in [Algorithm::Hd, Algorithm::Ring, Algorithm::Hdrm] {
            for engine in crate::ranks::Engine::ALL {
                let all = Request {
                    algorithm,
                    engine,
                    seed: 5,
                    ..Request::default()
                };
                let Ok(whole) = crate::ranks::plan_gpu_ranks_on(&net, plan, &all) else {
                    continue;
                };
                let x = whole.table.ranks.len();
                for (ranks, solver) in [
                    (None, crate::ranks::Solver::Auto),
                    (Some(x), crate::ranks::Solver::Heuristic),
                    (Some(x - 1), crate::ranks::Solver::Auto),
                ] {
                    let request = Request {
                        ranks,
                        solver,
                        ..all.clone()
                    };
                    let Ok(outcome) = crate::ranks::plan_gpu_ranks_on(&net, plan, &request) else {
                        continue;
                    };
                    let gpus = crate::ranks::rank_gpus(plan, &outcome.table.ranks);
                    for routing in [Policy::Ecmp, Policy::DModK, Policy::Spray] {
                        let how = Checked {
                            engine,
                            avoid: &[],
                            seed: 5,
                            routing,
                        };
                        let order = || "table".to_string();
                        let asked = || VerifyRequest {
                            gpus: Some(&gpus),
                            ..VerifyRequest::new(&outcome.table, order(), how)
                        };
                        let again = verify_report(plan, asked()).unwrap();
                        let searched = verify_report(
                            plan,
                            VerifyRequest {
                                known: Known::Searched {
                                    net: &net,
                                    request: &request,
                                    steps: &outcome.steps,
                                },
                                ..asked()
                            },
                        )
                        .unwrap();
                        let what = format!(
                            "{} on {} for {engine} under {routing}, {ranks:?} ranks",
                            algorithm.as_str(),
                            plan.name
                        );
                        assert_eq!(searched, again, "{what}");
                        reused += usize::from(algorithm != Algorithm::Hdrm);
                    }
                }
            }
        }
    }
    assert!(reused > 50, "{reused} reports reused the search");
}
