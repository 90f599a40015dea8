//! Checking switch templates: ports, port lists, roles and the VLAN split into virtual switches.

use super::*;

impl Checker {
    pub(super) fn port_list(
        &mut self,
        object: &str,
        field: &str,
        v: &Spanned<RawPortList>,
    ) -> Option<Vec<u32>> {
        let parsed = match v.get_ref() {
            RawPortList::Text(t) => text::parse_port_list(t),
            RawPortList::List(l) => {
                let mut out = Vec::new();
                let mut err = None;
                for &p in l {
                    if !(1..=i64::from(u32::MAX)).contains(&p) {
                        err = Some(format!("port {p}: ports are numbered from 1"));
                        break;
                    }
                    out.push(p as u32);
                }
                match err {
                    Some(e) => Err(e),
                    None => {
                        out.sort_unstable();
                        let n = out.len();
                        out.dedup();
                        if out.len() == n {
                            Ok(out)
                        } else {
                            Err("the list names some ports more than once".to_string())
                        }
                    }
                }
            }
        };
        match parsed {
            Ok(p) => Some(p),
            Err(e) => {
                self.problem(self.line(v), object, format!("{field}: {e}"), "");
                None
            }
        }
    }

    pub(super) fn switch_template(
        &mut self,
        s: &Spanned<RawSwitch>,
        switches: &mut Vec<Switch>,
        racks: &BTreeSet<String>,
        names: &mut NameRegistry,
    ) -> Option<SwitchTemplate> {
        let raw = s.get_ref();
        let line = self.line(s);
        let object = format!("switch template {}", raw.name.get_ref());
        let before = self.problems.len();
        let numbers =
            self.template_numbers(&object, &raw.name, raw.count.as_ref(), raw.start.as_ref());

        let ports = *raw.ports.get_ref();
        if !(1..=4096).contains(&ports) {
            self.problem(
                self.line(&raw.ports),
                &object,
                format!("ports is {ports}"),
                "set ports to the switch's port count (1 to 4096)",
            );
        }
        let port_gbps = *raw.port_gbps.get_ref();
        if !(1..=100_000).contains(&port_gbps) {
            self.problem(
                self.line(&raw.port_gbps),
                &object,
                format!("port_gbps is {port_gbps}"),
                "set the speed of the ports in Gbps, e.g. 100",
            );
        }
        let ports = ports.clamp(0, 4096) as u32;
        if let Some(p) = &raw.port_name
            && !p.get_ref().contains("{p}")
        {
            self.problem(
                self.line(p),
                &object,
                format!(
                    "port_name `{}` has no {{p}} for the port number",
                    p.get_ref()
                ),
                "write it like \"HundredGigE1/0/{p}\" or \"Ethernet{p}\"",
            );
        }
        if let Some(p) = &raw.price
            && !(p.get_ref().is_finite() && *p.get_ref() >= 0.0)
        {
            self.problem(
                self.line(p),
                &object,
                format!("price is {}", p.get_ref()),
                "set a price of 0 or more",
            );
        }
        let reserved = match &raw.reserved_ports {
            None => Vec::new(),
            Some(r) => self
                .port_list(&object, "reserved_ports", r)
                .unwrap_or_default(),
        };
        if let Some(&p) = reserved.iter().find(|&&p| p > ports)
            && let Some(r) = &raw.reserved_ports
        {
            self.problem(
                self.line(r),
                &object,
                format!("reserved port {p} does not exist on a {ports}-port switch"),
                "reserve ports between 1 and the port count",
            );
        }
        let breakout = match &raw.breakout {
            Some(b) if (1..=100_000).contains(&port_gbps) => {
                match Breakout::parse(b.get_ref(), port_gbps as u32) {
                    Ok(b) => Some(b),
                    Err(e) => {
                        self.problem(
                            self.line(b),
                            &object,
                            e,
                            format!(
                                "write breakout as lanes x lane speed that make up the {port_gbps} Gbps port, such as \"2x{}G\" or \"4x{}G\", or drop it",
                                port_gbps / 2,
                                port_gbps / 4
                            ),
                        );
                        None
                    }
                }
            }
            _ => None,
        };
        let virtual_switches = self.virtual_switches(&object, raw, ports, &reserved);
        // A broken-out switch is counted in lanes from here on: every
        // layer above sees ports of the lane speed, and a reserved cage
        // or a half's cage brings all its lanes.
        let lanes_of = |cages: &[u32], b: Breakout| -> Vec<u32> {
            (cages.iter())
                .flat_map(|&c| (0..b.lanes).map(move |l| b.port(c, l)))
                .collect()
        };
        let (ports, port_gbps, reserved, virtual_switches) = match breakout {
            None => (ports, port_gbps as u32, reserved, virtual_switches),
            Some(b) => (
                ports * b.lanes,
                b.lane_gbps(),
                lanes_of(&reserved, b),
                (virtual_switches.into_iter())
                    .map(|v| VirtualSpec {
                        ports: lanes_of(&v.ports, b),
                        ..v
                    })
                    .collect(),
            ),
        };

        let rack_pattern = match &raw.rack {
            None => None,
            Some(r) => match NamePattern::parse(r.get_ref()) {
                Ok(p) => Some(p),
                Err(e) => {
                    self.problem(self.line(r), &object, e, "");
                    None
                }
            },
        };
        let elevation = self.elevation(
            &object,
            raw.u_height.as_ref(),
            raw.position.as_ref(),
            raw.rack.is_some(),
            DEFAULT_SWITCH_U,
            line,
        );
        let switch_errors = self.problems.len() > before;
        let (pattern, numbers) = numbers?;
        let rack_line = raw.rack.as_ref().and_then(|r| self.line(r));
        let expanded = self.expand(
            "switch",
            &pattern,
            numbers,
            line,
            rack_pattern.as_ref(),
            rack_line,
            racks,
            names,
        )?;
        let start = switches.len();
        let racks_of: Vec<Option<String>> = expanded.iter().map(|(_, _, r)| r.clone()).collect();
        let positions = elevation.map(|e| super::expand::stacked(e, &racks_of));
        switches.extend(
            expanded
                .into_iter()
                .enumerate()
                .map(|(i, (number, name, rack))| Switch {
                    name,
                    template: 0,
                    number,
                    rack,
                    position: positions.as_ref().and_then(|p| p[i]),
                }),
        );
        let elevation = elevation?;
        if switch_errors {
            switches.truncate(start);
            return None;
        }
        Some(SwitchTemplate {
            pattern: raw.name.get_ref().clone(),
            line,
            model: raw.model.clone(),
            ports,
            port_gbps,
            breakout,
            port_name: raw.port_name.as_ref().map(|p| p.get_ref().clone()),
            rack: raw.rack.as_ref().map(|r| r.get_ref().clone()),
            price: raw.price.as_ref().map(|p| *p.get_ref()),
            role: raw.role.map(|r| match r {
                RawRole::Leaf => SwitchRole::Leaf,
                RawRole::Spine => SwitchRole::Spine,
                RawRole::Core => SwitchRole::Core,
            }),
            reserved_ports: reserved,
            virtual_switches,
            elevation,
            instances: start..switches.len(),
        })
    }

    pub(super) fn virtual_switches(
        &mut self,
        object: &str,
        raw: &RawSwitch,
        ports: u32,
        reserved: &[u32],
    ) -> Vec<VirtualSpec> {
        let halves: &[Spanned<RawVirtual>] = &raw.virtual_switches;
        if halves.is_empty() {
            return Vec::new();
        }
        if halves.len() != 2 {
            self.problem(
                self.line(&halves[0]),
                object,
                format!(
                    "{} virtual switches; a split switch has exactly two halves, one per BiGraph part",
                    halves.len()
                ),
                "declare two [[switch.virtual]] tables or none",
            );
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut owner: BTreeMap<u32, String> = BTreeMap::new();
        for h in halves {
            let v = h.get_ref();
            let line = self.line(h);
            let suffix = v.suffix.get_ref().trim().to_string();
            let vobject = format!("{object} virtual switch {suffix}");
            if suffix.is_empty() || suffix.contains(char::is_whitespace) {
                self.problem(
                    self.line(&v.suffix),
                    &vobject,
                    "the suffix is empty or has spaces",
                    "use a short suffix such as \"u\" or \"a\"",
                );
                continue;
            }
            let vlan = *v.vlan.get_ref();
            if !(1..=4094).contains(&vlan) {
                self.problem(
                    self.line(&v.vlan),
                    &vobject,
                    format!("VLAN {vlan} is not a usable VLAN id"),
                    "use a VLAN id between 1 and 4094",
                );
                continue;
            }
            let Some(list) = self.port_list(&vobject, "ports", &v.ports) else {
                continue;
            };
            let mut bad = false;
            for &p in &list {
                if p > ports {
                    self.problem(
                        self.line(&v.ports),
                        &vobject,
                        format!("port {p} does not exist on a {ports}-port switch"),
                        "list ports between 1 and the port count",
                    );
                    bad = true;
                    break;
                }
                if reserved.binary_search(&p).is_ok() {
                    self.problem(
                        self.line(&v.ports),
                        &vobject,
                        format!("port {p} is also reserved (port overbooked)"),
                        "take reserved ports out of the half's port list",
                    );
                    bad = true;
                    break;
                }
                if let Some(other) = owner.insert(p, suffix.clone()) {
                    self.problem(
                        self.line(&v.ports),
                        &vobject,
                        format!(
                            "port {p} also belongs to virtual switch {other} (port overbooked)"
                        ),
                        "give each port to one half only",
                    );
                    bad = true;
                    break;
                }
            }
            if list.is_empty() {
                self.problem(
                    self.line(&v.ports),
                    &vobject,
                    "no ports",
                    "list the ports of this half, e.g. ports = \"1-16\"",
                );
                bad = true;
            }
            if bad {
                continue;
            }
            out.push(VirtualSpec {
                suffix,
                ports: list,
                vlan: vlan as u16,
                part: match v.part {
                    Some(RawBiPart::Upper) => Part::Upper,
                    Some(RawBiPart::Lower) => Part::Lower,
                    None => Part::Upper,
                },
                line,
            });
        }
        if out.len() != 2 {
            return Vec::new();
        }
        // Parts: explicit ones win; a missing one is the other's opposite;
        // neither given: first upper, second lower.
        let given: Vec<Option<RawBiPart>> = halves.iter().map(|h| h.get_ref().part).collect();
        match (given[0], given[1]) {
            (None, None) => {
                out[0].part = Part::Upper;
                out[1].part = Part::Lower;
            }
            (Some(_), None) => out[1].part = out[0].part.other(),
            (None, Some(_)) => out[0].part = out[1].part.other(),
            (Some(a), Some(b)) if a == b => {
                self.problem(
                    out[1].line,
                    format!("{object} virtual switch {}", out[1].suffix),
                    format!("both halves are in the {} part", out[0].part.as_str()),
                    "put one half in the upper part and the other in the lower part",
                );
                return Vec::new();
            }
            _ => {}
        }
        if out[0].suffix == out[1].suffix {
            self.problem(
                out[1].line,
                format!("{object} virtual switch {}", out[1].suffix),
                "both halves have the same suffix",
                "give the halves different suffixes",
            );
            return Vec::new();
        }
        if out[0].vlan == out[1].vlan {
            self.problem(
                out[1].line,
                format!("{object} virtual switch {}", out[1].suffix),
                format!("both halves use VLAN {}", out[0].vlan),
                "give each half its own VLAN id",
            );
            return Vec::new();
        }
        out
    }
}
