use super::*;

#[test]
fn cel_selectors() {
    let p = Profile::nvidia_dranet();
    assert_eq!(
        p.gpu.cel(&Attr::Int(3)),
        r#"device.attributes["gpu.nvidia.com"].index == 3"#
    );
    assert_eq!(
        p.nic.cel(&Attr::Str("mlx5_\"3".into())),
        r#"device.attributes["dra.net"].rdmaDevName == "mlx5_\"3""#
    );
    let mut q = p.gpu.clone();
    q.attribute = "resource.kubernetes.io/pciBusID".into();
    assert_eq!(
        q.cel(&Attr::Str("0000:3b:00.0".into())),
        r#"device.attributes["resource.kubernetes.io"].pciBusID == "0000:3b:00.0""#
    );
}

fn plan() -> CheckedPlan {
    let (inv, opts) = planner::design::shorthand::bigraph(
        2,
        4,
        &planner::design::shorthand::Shorthand::default(),
    )
    .unwrap();
    planner::design::design(&inv, &opts).unwrap()
}

#[test]
fn the_plans_own_devices_map_back_to_every_sub_node() {
    let plan = plan();
    let bound = crate::nodes::bind(&plan, None, "p.json").unwrap();
    let profile = Profile::nvidia_dranet();
    let view = DraView::from_plan(&plan, &bound, &profile);
    let map = map_devices(&plan, &bound, &view, &profile).unwrap();
    let with_gpu = plan
        .sub_node_list
        .iter()
        .filter(|s| s.gpu.is_some())
        .count();
    assert_eq!(map.sub_nodes.len(), with_gpu);
    assert!(
        map.sub_nodes
            .values()
            .all(|d| d.busy.is_none() && d.nics.len() == 1)
    );
    assert!(map.unusable.is_empty());
}

#[test]
fn busy_reserved_and_silent_nodes() {
    let plan = plan();
    let bound = crate::nodes::bind(&plan, None, "p.json").unwrap();
    let profile = Profile::nvidia_dranet();
    let mut view = DraView::from_plan(&plan, &bound, &profile);
    let (first, second) = (&bound[0], &bound[1]);
    // The first Node's second NIC is allocated; its first sub-node is
    // named by an earlier submission's template.
    let nic = view
        .devices
        .iter()
        .find(|d| d.node == first.node && d.driver == "dra.net" && d.name == "nic-1")
        .unwrap()
        .clone();
    view.allocated.push(Allocated {
        driver: nic.driver,
        pool: nic.pool,
        device: nic.name,
        claim: "ml/other-3-sub-node".into(),
    });
    view.reserved.push(Reserved {
        sub_node: first.sub_nodes[0].id.clone(),
        by: "ml/train-0".into(),
    });
    // The second Node publishes nothing.
    view.devices.retain(|d| d.node != second.node);
    let map = map_devices(&plan, &bound, &view, &profile).unwrap();
    let busy: Vec<&str> = map
        .sub_nodes
        .values()
        .filter_map(|d| d.busy.as_deref())
        .collect();
    assert_eq!(
        busy,
        [
            "named by ResourceClaimTemplate ml/train-0 of an earlier submission",
            &format!(
                "dra.net {}/nic-1 is allocated to ResourceClaim ml/other-3-sub-node",
                first.node
            ),
        ]
    );
    assert_eq!(map.unusable.len(), 1);
    assert_eq!(map.unusable[0].0, second.node);
    assert!(
        map.unusable[0]
            .1
            .starts_with("publishes no ResourceSlice device of gpu.nvidia.com or dra.net")
    );
}

#[test]
fn sriov_matches_the_virtual_functions_of_the_port_and_needs_netdevs() {
    let plan = plan();
    let bound = crate::nodes::bind(&plan, None, "p.json").unwrap();
    let profile = Profile::nvidia_sriov();
    // The shorthand plan has no netdevs: the NIC selector has nothing
    // to compare with.
    let view = DraView::from_plan(&plan, &bound, &Profile::nvidia_dranet());
    let e = map_devices(&plan, &bound, &view, &profile)
        .unwrap_err()
        .to_string();
    assert!(e.contains("the plan gives it no netdev to compare with sriovnetwork.k8snetworkplumbingwg.io/PFName"), "{e}");
    // With netdevs, two virtual functions of one port both belong to
    // its sub-node.
    let mut raw = serde_json::to_value(&*plan).unwrap();
    for (i, sn) in raw["sub_node_list"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        sn["netdev"] = json!(format!("eth{i}"));
    }
    let plan = CheckedPlan::load(&raw.to_string(), "p.json").unwrap();
    let mut view = DraView::from_plan(&plan, &bound, &profile);
    let vf = view
        .devices
        .iter()
        .find(|d| d.driver == profile.nic.driver)
        .unwrap()
        .clone();
    view.devices.push(SliceDevice {
        name: format!("{}-vf1", vf.name),
        ..vf
    });
    let map = map_devices(&plan, &bound, &view, &profile).unwrap();
    assert!(map.sub_nodes.values().any(|d| d.nics.len() == 2));
    let sn = &plan.sub_node_list[0];
    let spec = claim_spec(&profile, sn).unwrap();
    assert_eq!(
        spec["devices"]["requests"][1]["exactly"]["selectors"][0]["cel"]["expression"],
        r#"device.attributes["sriovnetwork.k8snetworkplumbingwg.io"].PFName == "eth0""#
    );
}

#[test]
fn attribute_names() {
    assert!(qualified_attribute_problem(PCIE_ROOT).is_none());
    for bad in ["pcieRoot", "Bad Domain/x", "resource.kubernetes.io/1x"] {
        assert!(qualified_attribute_problem(bad).is_some(), "{bad}");
    }
}

/// A whole server's claim: a GPU and NIC request per sub-node, each pair
/// under one PCIe root; more devices than one claim is allocated (32,
/// Kubernetes 1.34) are refused.
#[test]
fn a_servers_claim_pairs_every_gpu_with_its_nic() {
    let plan = plan();
    let profile = Profile::nvidia_dranet();
    let subs: Vec<&PlanSubNode> = plan.sub_node_list.iter().take(2).collect();
    let spec = server_claim_spec(&profile, &subs).unwrap();
    let names: Vec<&str> = spec["devices"]["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["gpu-0", "nic-0", "gpu-1", "nic-1"]);
    assert_eq!(
        spec["devices"]["constraints"][1],
        json!({ "requests": ["gpu-1", "nic-1"], "matchAttribute": PCIE_ROOT })
    );
    assert_eq!(
        spec["devices"]["requests"][3]["exactly"]["selectors"][0]["cel"]["expression"],
        profile.nic.cel(&Attr::Str(subs[1].nic.to_string()))
    );
    let many: Vec<&PlanSubNode> = std::iter::repeat_n(subs[0], 17).collect();
    let e = server_claim_spec(&profile, &many).unwrap_err();
    assert!(e.contains("34 devices (17 GPUs and their NICs)"), "{e}");
}
