//! As-built cabling against the plan: missing, extra, crossed and miswired cables, speeds, silent devices.

use super::*;

/// Compares observed cabling with the plan, once the plan passes its own
/// check ([`validate_plan`]; its findings are returned instead otherwise).
pub fn validate_cabling(plan: &Plan, observed: &[Observed], sources: &[String]) -> Validation {
    // Cabling is compared only with a plan that passes its own check: a
    // hand-edited, inconsistent plan is reported as `validate PLAN` reports
    // it (validate is the strictest reader, with or without cabling).
    let own = validate_plan(plan);
    if !own.ok {
        return own;
    }
    let mut findings = Vec::new();
    let idx = Index::new(plan, &mut findings);
    let n = idx.ends();

    // Planned peer and cable of every end.
    let mut expected = vec![NONE; n];
    let mut cable_of = vec![NONE; n];
    let mut planned: Vec<(End, End)> = Vec::with_capacity(plan.cables.len());
    for k in 0..plan.cables.len() {
        if let Some((a, b)) = idx.cable_ends(k) {
            expected[idx.id(a)] = idx.id(b) as u32;
            expected[idx.id(b)] = idx.id(a) as u32;
            cable_of[idx.id(a)] = k as u32;
            cable_of[idx.id(b)] = k as u32;
            planned.push((a, b));
        }
    }
    let expected_of = |e: End| -> Option<End> {
        let p = expected[idx.id(e)];
        (p != NONE).then(|| idx.end(p as usize))
    };

    // Observed cables, each once, with conflicts reported.
    struct Seen<'o> {
        a: End,
        b: End,
        gbps: Option<f64>,
        source: &'o cabling::Origin,
    }
    let mut cables: Vec<Seen> = Vec::with_capacity(observed.len());
    let mut seen = vec![NONE; n];
    let mut reporting = vec![false; idx.phys_names.len() + plan.servers.len()];
    for o in observed {
        let a = idx.resolve(&o.device, &o.port);
        let b = idx.resolve(&o.peer, &o.peer_port);
        let (a, b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            (Err((kind, msg)), _) => {
                findings.push(finding(
                    kind,
                    format!("{} {}", o.device, o.port),
                    msg,
                    "fix the name or cable it as planned",
                    Some(o.origin.to_string()),
                ));
                continue;
            }
            (_, Err((kind, msg))) => {
                findings.push(finding(
                    kind,
                    format!("{} {}", o.peer, o.peer_port),
                    msg,
                    "fix the name or cable it as planned",
                    Some(o.origin.to_string()),
                ));
                continue;
            }
        };
        if let Some(r) = reporting.get_mut(idx.device_id(a)) {
            *r = true;
        }
        if a == b {
            findings.push(finding(
                "miswired",
                idx.name(a),
                "the port is cabled to itself",
                "remove the cable",
                Some(o.origin.to_string()),
            ));
            continue;
        }
        let (ia, ib) = (idx.id(a), idx.id(b));
        let k_a = seen[ia];
        if k_a != NONE {
            let prev = &cables[k_a as usize];
            if (prev.a == a && prev.b == b) || (prev.a == b && prev.b == a) {
                // The same cable seen from its other end.
                if let (Some(x), Some(y)) = (prev.gbps, o.gbps)
                    && (x - y).abs() > 1e-6
                {
                    findings.push(finding(
                        "speed-mismatch",
                        format!("{} - {}", idx.name(a), idx.name(b)),
                        format!("the two ends report {} and {} Gbps", gbps(x), gbps(y)),
                        "check the port speed settings at both ends",
                        Some(format!("{}, {}", prev.source, o.origin)),
                    ));
                }
                continue;
            }
        }
        let mut conflict = false;
        for (e, other) in [(a, b), (b, a)] {
            let k = seen[idx.id(e)];
            if k != NONE {
                let prev = &cables[k as usize];
                let prev_peer = if prev.a == e { prev.b } else { prev.a };
                findings.push(finding(
                    "conflict",
                    idx.name(e),
                    format!(
                        "reported connected to {} ({}) and to {} ({})",
                        idx.name(prev_peer),
                        prev.source,
                        idx.name(other),
                        o.origin
                    ),
                    "a port holds one cable: correct the cabling record",
                    Some(o.origin.to_string()),
                ));
                conflict = true;
            }
        }
        if conflict {
            continue;
        }
        let k = cables.len() as u32;
        cables.push(Seen {
            a,
            b,
            gbps: o.gbps,
            source: &o.origin,
        });
        seen[ia] = k;
        seen[ib] = k;
    }
    let observed_peer = |e: End| -> Option<End> {
        let k = seen[idx.id(e)];
        (k != NONE).then(|| {
            let c = &cables[k as usize];
            if c.a == e { c.b } else { c.a }
        })
    };

    // Classify every observed cable.
    let mut matching = 0;
    let mut handled = vec![false; cables.len()];
    for k in 0..cables.len() {
        if handled[k] {
            continue;
        }
        let Seen {
            a,
            b,
            gbps: speed,
            source,
        } = &cables[k];
        let (a, b) = (*a, *b);
        let exp_a = expected_of(a);
        let exp_b = expected_of(b);
        if exp_a == Some(b) {
            matching += 1;
            let planned_gbps = plan.cables[cable_of[idx.id(a)] as usize].gbps;
            if let (Some(s), p) = (speed, planned_gbps)
                && (s - f64::from(p)).abs() > 1e-6
            {
                findings.push(finding(
                    "speed-mismatch",
                    format!("{} - {}", idx.name(a), idx.name(b)),
                    format!("runs at {} Gbps, the plan expects {p} Gbps", gbps(*s)),
                    "check the cable, the optics and the port speed setting",
                    Some(source.to_string()),
                ));
            }
            continue;
        }
        // Crossed: the planned peers of a and b are cabled to each other.
        if let (Some(pa), Some(pb)) = (exp_a, exp_b)
            && observed_peer(pb) == Some(pa)
        {
            let other = seen[idx.id(pa)] as usize;
            handled[other] = true;
            let (x, y) = if idx.device(a) == idx.device(pb) {
                (a, pb)
            } else {
                (b, pa)
            };
            findings.push(finding(
                "crossed",
                format!("{} and {}", idx.name(x), idx.name(y)),
                format!(
                    "two cables are swapped: {} goes to {} and {} to {}; the plan has {} - {} and {} - {}",
                    idx.name(a),
                    idx.name(b),
                    idx.name(pb),
                    idx.name(pa),
                    idx.name(a),
                    idx.name(pa),
                    idx.name(pb),
                    idx.name(b)
                ),
                format!("swap the cables in {} and {}", idx.name(x), idx.name(y)),
                Some(format!("{}, {}", source, cables[other].source)),
            ));
            continue;
        }
        findings.push(classify(&idx, a, b, exp_a, exp_b, &source.to_string()));
    }

    // Planned cables nobody reported, on devices that reported.
    let mut silent: BTreeMap<&str, usize> = BTreeMap::new();
    for &(a, b) in &planned {
        if seen[idx.id(a)] != NONE || seen[idx.id(b)] != NONE {
            continue;
        }
        let reported = |e| reporting.get(idx.device_id(e)).copied().unwrap_or(false);
        if reported(a) || reported(b) {
            findings.push(finding(
                "missing",
                format!("{} - {}", idx.name(a), idx.name(b)),
                "the planned cable is not there".to_string(),
                format!("cable {} to {}", idx.name(a), idx.name(b)),
                None,
            ));
        } else {
            *silent.entry(idx.device(a)).or_default() += 1;
        }
    }
    for (device, n) in silent {
        findings.push(finding(
            "no-data",
            format!("switch {device}"),
            format!("the cabling input says nothing about it ({n} planned cables unchecked)"),
            "add its cabling (CSV rows or its LLDP neighbours)",
            None,
        ));
    }

    // The as-built graph must still be the topology.
    let mut links = Vec::new();
    let mut loads = vec![0usize; plan.switch_list.len()];
    for c in &cables {
        match (idx.owner_of(c.a), idx.owner_of(c.b)) {
            (Some(x), Some(y)) => links.push((x, y)),
            (Some(x), None) | (None, Some(x)) => loads[x] += 1,
            (None, None) => {}
        }
    }
    if !cables.is_empty() && findings.iter().all(|f| f.kind != "no-data") {
        for mut f in topology_invariants(&idx, &links, &loads, "as-built") {
            f.message = format!("as built: {}", f.message);
            findings.push(f);
        }
    }
    result(plan, sources.to_vec(), cables.len(), matching, findings)
}

/// Explains one observed cable that is not in the plan.
pub(super) fn classify(
    idx: &Index<'_>,
    a: End,
    b: End,
    exp_a: Option<End>,
    exp_b: Option<End>,
    source: &str,
) -> Finding {
    let src = Some(source.to_string());
    // A sub-node cable: name the NIC and where the plan wants it.
    let nic_port = match (a, b) {
        (End::Nic { .. }, End::Port { .. }) => Some((a, b, exp_a)),
        (End::Port { .. }, End::Nic { .. }) => Some((b, a, exp_b)),
        _ => None,
    };
    if let Some((nic, port, Some(planned))) = nic_port
        && let (
            End::Port {
                phys: pp,
                port: pport,
                ..
            },
            End::Port {
                phys: op,
                port: oport,
                ..
            },
        ) = (planned, port)
    {
        let planned_vs = idx.owner_of(planned);
        let seen_vs = idx.owner_of(port);
        let fix = format!(
            "move the cable from {} to {}",
            idx.name(port),
            idx.name(planned)
        );
        if pp != op {
            return finding(
                "wrong-switch",
                idx.name(nic),
                format!(
                    "cabled to {}; the plan puts it on {}",
                    idx.name(port),
                    idx.name(planned)
                ),
                fix,
                src,
            );
        }
        if planned_vs != seen_vs {
            return finding(
                "wrong-vlan-half",
                idx.name(nic),
                format!(
                    "cabled to {} port {oport}, which is in {}; the plan puts it in {} on port {pport}",
                    idx.phys_names[op],
                    seen_vs.map_or("no VLAN half".to_string(), |v| idx.half(v)),
                    planned_vs.map_or("no VLAN half".to_string(), |v| idx.half(v)),
                ),
                fix,
                src,
            );
        }
        return finding(
            "wrong-port",
            idx.name(nic),
            format!(
                "cabled to {} port {oport} instead of port {pport} (same switch; port descriptions and configs expect {pport})",
                idx.phys_names[op]
            ),
            fix,
            src,
        );
    }
    match (exp_a, exp_b) {
        (None, None) => finding(
            "extra",
            format!("{} - {}", idx.name(a), idx.name(b)),
            "a cable the plan does not have (both ports are free in the plan)".to_string(),
            "remove it, or design the plan again if it is meant to be there",
            src,
        ),
        _ => {
            let mut planned = Vec::new();
            if let Some(p) = exp_a {
                planned.push(format!("{} - {}", idx.name(a), idx.name(p)));
            }
            if let Some(p) = exp_b {
                planned.push(format!("{} - {}", idx.name(b), idx.name(p)));
            }
            let fix = match exp_a.or(exp_b) {
                Some(_) => format!("recable as planned: {}", planned.join(" and ")),
                None => "remove it".to_string(),
            };
            finding(
                "miswired",
                format!("{} - {}", idx.name(a), idx.name(b)),
                format!("not in the plan; the plan has {}", planned.join(" and ")),
                fix,
                src,
            )
        }
    }
}
