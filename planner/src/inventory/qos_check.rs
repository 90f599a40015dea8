//! Checking the inventory's `[qos]` and `[addressing]` tables with the rules of [`crate::qos::rules`], each problem with its line.

use super::*;
use crate::qos::rules;

impl Checker {
    /// A whole number from a `[qos]` table, checked by its QoS rule; a
    /// problem with its line otherwise.
    fn qos_number(
        &mut self,
        object: &str,
        key: &str,
        v: Option<&Spanned<i64>>,
        rule: &rules::Range,
    ) -> Option<i64> {
        let v = v?;
        match rule.check(key, *v.get_ref()) {
            Ok(x) => Some(x),
            Err(e) => {
                self.problem(self.line(v), object, e.message, e.fix);
                None
            }
        }
    }

    /// The `[qos]` table: every value in range, names that exist, and the
    /// consistency the overrides show on their own; conflicts with a
    /// topology's defaults are found when `design` resolves the intent.
    pub(super) fn qos(
        &mut self,
        q: &Spanned<RawQos>,
        switches: &KnownSwitches<'_>,
        out: &mut QosOverrides,
    ) {
        let raw = q.get_ref();
        out.line = self.line(q);
        out.mtu = self
            .qos_number("qos", "mtu", raw.mtu.as_ref(), &rules::MTU)
            .map(|m| m as u32);
        out.per_direction = raw.per_direction;
        out.gid_index = self
            .qos_number(
                "qos",
                "gid_index",
                raw.gid_index.as_ref(),
                &rules::GID_INDEX,
            )
            .map(|g| g as u8);
        let mut dscps: BTreeMap<i64, String> = BTreeMap::new();
        for c in &raw.class {
            let v = c.get_ref();
            let line = self.line(c);
            let name = v.name.get_ref().trim().to_string();
            let object = format!("qos class {name}");
            if name.is_empty() {
                self.problem(
                    line,
                    "qos class",
                    "the name is empty",
                    "give the class a name",
                );
                continue;
            }
            if out.classes.iter().any(|o| o.name == name) {
                self.problem(
                    line,
                    &object,
                    "the class is given twice",
                    "merge the two [[qos.class]] tables",
                );
                continue;
            }
            let part = match v.part.as_ref().map(|p| (p, p.get_ref().as_str())) {
                None => None,
                Some((_, "upper")) => Some(Some(Part::Upper)),
                Some((_, "lower")) => Some(Some(Part::Lower)),
                Some((_, "any")) => Some(None),
                Some((p, other)) => {
                    self.problem(
                        self.line(p),
                        &object,
                        format!("part `{other}` is not known"),
                        "use \"upper\", \"lower\" or \"any\"",
                    );
                    None
                }
            };
            let dscp = self.qos_number(&object, "dscp", v.dscp.as_ref(), &rules::DSCP);
            if let (Some(d), Some(sp)) = (dscp, v.dscp.as_ref())
                && let Some(other) = dscps.insert(d, name.clone())
            {
                let v = rules::shared_dscp(d, &format!("class {other}"));
                self.problem(self.line(sp), &object, v.message, v.fix);
            }
            let priority =
                self.qos_number(&object, "priority", v.priority.as_ref(), &rules::PRIORITY);
            out.classes.push(ClassOverride {
                name,
                part,
                dscp: dscp.map(|d| d as u8),
                priority: priority.map(|p| p as u8),
                lossless: v.lossless,
                line,
            });
        }
        if let Some(c) = &raw.cnp {
            let v = c.get_ref();
            out.cnp_line = self.line(c);
            out.cnp_dscp = self
                .qos_number("qos cnp", "dscp", v.dscp.as_ref(), &rules::DSCP)
                .map(|d| d as u8);
            out.cnp_priority = self
                .qos_number("qos cnp", "priority", v.priority.as_ref(), &rules::PRIORITY)
                .map(|p| p as u8);
            if let Some(d) = out.cnp_dscp
                && let Some(other) = dscps.get(&i64::from(d))
            {
                let v = rules::shared_dscp(i64::from(d), &format!("class {other}"));
                self.problem(out.cnp_line, "qos cnp", v.message, v.fix);
            }
            if let Some(p) = out.cnp_priority
                && let Some(c) = out
                    .classes
                    .iter()
                    .find(|c| c.priority == Some(p) && c.lossless != Some(false))
            {
                let (name, line) = (c.name.clone(), c.line);
                let v = rules::lossless_on_cnp(i64::from(p));
                self.problem(line, format!("qos class {name}"), v.message, v.fix);
            }
        }
        if let Some(e) = &raw.ecn {
            let v = e.get_ref();
            out.ecn_line = self.line(e);
            let min = self.qos_number("qos ecn", "min_kb", v.min_kb.as_ref(), &rules::ECN_KB);
            let max = self.qos_number("qos ecn", "max_kb", v.max_kb.as_ref(), &rules::ECN_KB);
            let probability = self.qos_number(
                "qos ecn",
                "probability",
                v.probability.as_ref(),
                &rules::ECN_PROBABILITY,
            );
            if let (Some(a), Some(b)) = (min, max)
                && let Some(v) = rules::ecn_order(a, b)
            {
                self.problem(out.ecn_line, "qos ecn", v.message, v.fix);
            }
            out.ecn = (
                min.map(|x| x as u32),
                max.map(|x| x as u32),
                probability.map(|x| x as u8),
            );
        }
        if let Some(w) = &raw.pfc_watchdog {
            let v = w.get_ref();
            out.watchdog_line = self.line(w);
            let get = |c: &mut Self, key: &str, x: Option<&Spanned<i64>>| {
                c.qos_number("qos pfc_watchdog", key, x, &rules::WATCHDOG_MS)
                    .map(|x| x as u32)
            };
            out.watchdog = (
                get(self, "detection_ms", v.detection_ms.as_ref()),
                get(self, "restoration_ms", v.restoration_ms.as_ref()),
                get(self, "polling_ms", v.polling_ms.as_ref()),
            );
        }
        for sw in &raw.switch {
            let v = sw.get_ref();
            let line = self.line(sw);
            let name = v.name.get_ref().clone();
            let object = format!("qos switch {name}");
            if !switches.names.contains(&name.as_str()) {
                self.problem(
                    self.line(&v.name),
                    &object,
                    format!(
                        "switch {name} is not in the {} (dangling reference)",
                        switches.source
                    ),
                    switches.fix,
                );
                continue;
            }
            if out.switch_mtu.iter().any(|s| s.0 == name) {
                self.problem(
                    line,
                    &object,
                    "the switch is given twice",
                    "keep one [[qos.switch]] table per switch",
                );
                continue;
            }
            if let Some(m) = self.qos_number(&object, "mtu", Some(&v.mtu), &rules::SWITCH_MTU) {
                out.switch_mtu.push((name, m as u32, line));
            }
        }
    }

    /// The `[addressing]` table.
    pub(super) fn addressing(&mut self, a: &Spanned<RawAddressing>, out: &mut QosOverrides) {
        let raw = a.get_ref();
        for (key, value, max_len, target) in [
            ("sub_node_pool", raw.sub_node_pool.as_ref(), 30u8, 0),
            ("link_pool", raw.link_pool.as_ref(), 31u8, 1),
        ] {
            let Some(v) = value else { continue };
            match Ipv4Prefix::parse(v.get_ref()) {
                Ok(p) if p.len <= max_len => {
                    let s = p.to_string_with_len();
                    if target == 0 {
                        out.addressing.sub_node_pool = s;
                    } else {
                        out.addressing.link_pool = s;
                    }
                }
                Ok(p) => self.problem(
                    self.line(v),
                    "addressing",
                    format!("{key} {p} is too small"),
                    format!("give a prefix of length {max_len} or shorter"),
                ),
                Err(e) => self.problem(
                    self.line(v),
                    "addressing",
                    format!("{key}: {e}"),
                    "write an IPv4 prefix such as 10.0.0.0/8",
                ),
            }
        }
        if let Some(v) = self.number(
            "addressing",
            "vlan",
            raw.vlan.as_ref(),
            1..=4094,
            "use a VLAN id between 1 and 4094",
        ) {
            out.addressing.vlan = v as u16;
        }
    }
}
