//! The name rule ([`crate::names`]) applied to an inventory as written:
//! every name, pattern and switch model that can reach an output, each
//! refusal a [`crate::Problem`] with its line and object.

use toml::Spanned;

use super::Checker;
use super::raw::{RawInventory, RawQos};
use crate::names;

/// Which check a value gets.
#[derive(Clone, Copy)]
enum Rule {
    Name,
    Pattern,
    Address,
    Model,
}

impl Checker {
    /// Checks one value; `what` names the field (`name`, `port_name`).
    fn rule(&mut self, rule: Rule, line: Option<usize>, object: &str, what: &str, value: &str) {
        let checked = match rule {
            Rule::Name => names::check_name(value),
            Rule::Pattern => names::check_pattern(value),
            Rule::Address => names::check_address(value),
            Rule::Model => names::check_model(value),
        };
        if let Err(e) = checked {
            let fix = match rule {
                Rule::Model => {
                    "write the model as words of letters, digits, parentheses and `._-/:+@` separated by single spaces (see the name rule in docs/inventory.md)"
                        .to_string()
                }
                _ => format!("rename it: {}", names::RULE),
            };
            self.problem(line, object, format!("{what}: {e}"), fix);
        }
    }

    fn spanned(&mut self, rule: Rule, object: &str, what: &str, value: &Spanned<String>) {
        let line = self.line(value);
        self.rule(rule, line, object, what, value.get_ref());
    }

    /// Checks every name of the inventory against the name rule.
    pub(super) fn names(&mut self, raw: &RawInventory, file: &str) {
        match raw.inventory.as_ref().and_then(|m| m.name.as_deref()) {
            Some(name) => self.rule(Rule::Name, None, "[inventory]", "name", name),
            None => {
                let stem = super::file_stem(file);
                if let Err(e) = names::check_name(&stem) {
                    self.problem(
                        None,
                        "[inventory]",
                        format!("the inventory takes its name from the file name: {e}"),
                        format!(
                            "set `name` under [inventory], or rename the file: {}",
                            names::RULE
                        ),
                    );
                }
            }
        }
        for r in &raw.rack {
            let object = format!("rack {}", r.get_ref().name.get_ref());
            self.spanned(Rule::Pattern, &object, "name", &r.get_ref().name);
        }
        for s in &raw.server {
            let t = s.get_ref();
            let object = format!("server template {}", t.name.get_ref());
            self.spanned(Rule::Pattern, &object, "name", &t.name);
            if let Some(rack) = &t.rack {
                self.spanned(Rule::Pattern, &object, "rack", rack);
            }
            let sockets_line = self.line(&t.sockets);
            for socket in t.sockets.get_ref() {
                self.rule(Rule::Name, sockets_line, &object, "socket", socket);
            }
            for p in &t.pcie_switch {
                let line = self.line(p);
                let p = p.get_ref();
                let object = format!("{object} PCIe switch {}", p.name);
                self.rule(Rule::Name, line, &object, "name", &p.name);
                self.spanned(Rule::Name, &object, "socket", &p.socket);
                if let Some(rp) = &p.root_port {
                    self.rule(Rule::Name, line, &object, "root_port", rp);
                }
            }
            for g in &t.gpu {
                let line = self.line(g);
                let g = g.get_ref();
                let object = format!("{object} GPU {}", g.name.as_deref().unwrap_or("?"));
                for (what, v) in [("name", &g.name), ("slot", &g.slot)] {
                    if let Some(v) = v {
                        self.rule(Rule::Name, line, &object, what, v);
                    }
                }
                for (what, v) in [("pcie_switch", &g.pcie_switch), ("socket", &g.socket)] {
                    if let Some(v) = v {
                        self.spanned(Rule::Name, &object, what, v);
                    }
                }
            }
            for n in &t.nic {
                let line = self.line(n);
                let n = n.get_ref();
                let object = format!("{object} NIC {}", n.name.as_deref().unwrap_or("?"));
                for (what, v) in [("name", &n.name), ("slot", &n.slot)] {
                    if let Some(v) = v {
                        self.rule(Rule::Name, line, &object, what, v);
                    }
                }
                let refs = [
                    ("netdev", &n.netdev),
                    ("pcie_switch", &n.pcie_switch),
                    ("socket", &n.socket),
                ];
                for (what, v) in refs {
                    if let Some(v) = v {
                        self.spanned(Rule::Name, &object, what, v);
                    }
                }
                for (what, v) in [("mac", &n.mac), ("ip", &n.ip)] {
                    if let Some(v) = v {
                        self.spanned(Rule::Address, &object, what, v);
                    }
                }
                for g in n.gpus.iter().flat_map(|l| l.get_ref()) {
                    self.spanned(Rule::Name, &object, "gpus", g);
                }
            }
            for d in &t.nvlink {
                let line = self.line(d);
                let d = d.get_ref();
                let object = format!(
                    "{object} NVLink domain {}",
                    d.name.as_deref().unwrap_or("?")
                );
                if let Some(name) = &d.name {
                    self.rule(Rule::Name, line, &object, "name", name);
                }
                for g in d.gpus.iter().flat_map(|l| l.get_ref()) {
                    self.spanned(Rule::Name, &object, "gpus", g);
                }
            }
        }
        for s in &raw.switch {
            let line = self.line(s);
            let t = s.get_ref();
            let object = format!("switch template {}", t.name.get_ref());
            self.spanned(Rule::Pattern, &object, "name", &t.name);
            self.rule(Rule::Model, line, &object, "model", &t.model);
            if let Some(p) = &t.port_name {
                self.spanned(Rule::Pattern, &object, "port_name", p);
                if !p.get_ref().contains("{p}") && p.get_ref().contains('{') {
                    self.problem(
                        self.line(p),
                        &object,
                        format!(
                            "port_name `{}` has a placeholder other than {{p}}",
                            names::escape(p.get_ref())
                        ),
                        "write the port number as {p} (swp{p}, HundredGigE1/0/{p})",
                    );
                }
            }
            if let Some(rack) = &t.rack {
                self.spanned(Rule::Pattern, &object, "rack", rack);
            }
            for v in &t.virtual_switches {
                let suffix = &v.get_ref().suffix;
                let object = format!("{object} virtual switch {}", suffix.get_ref());
                self.spanned(Rule::Name, &object, "suffix", suffix);
            }
        }
        for a in &raw.nic_address {
            let a = a.get_ref();
            let object = format!("nic_address {} {}", a.server.get_ref(), a.nic.get_ref());
            for (what, v) in [("mac", &a.mac), ("ip", &a.ip)] {
                if let Some(v) = v {
                    self.spanned(Rule::Address, &object, what, v);
                }
            }
        }
        for p in &raw.catalog {
            let name = &p.get_ref().name;
            let object = format!("catalog part {}", name.get_ref());
            self.spanned(Rule::Name, &object, "name", name);
        }
        if let Some(q) = &raw.qos {
            self.qos_names(q);
        }
    }

    /// Checks the class names of a `[qos]` table (an inventory's or an
    /// overrides file's); `[[qos.switch]]` names must match a switch, so the
    /// rule holds for them already.
    pub(super) fn qos_names(&mut self, q: &Spanned<RawQos>) {
        for c in &q.get_ref().class {
            let name = &c.get_ref().name;
            let object = format!("qos class {}", name.get_ref());
            self.spanned(Rule::Name, &object, "name", name);
        }
    }
}
