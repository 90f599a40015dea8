//! The plan's references as numbers: a sub-node's switch and server, a
//! port's peer, a cable's ends, resolved once into positions so that the
//! checks after it compare and index numbers instead of hashing names.
//!
//! A reference is resolved by its text, through the same tables the
//! checks used before ([`super::Index`]'s `vs`, `phys` and `servers`), so
//! a name the plan lacks resolves to [`NONE`] and the checks report it
//! where they always did. A plan read from a file holds each distinct name
//! once ([`crate::plan::Name`]), so the lookups remember each name's
//! allocation: a name seen before is found by its address, without
//! reading or hashing its text. That is only a shortcut: two equal names
//! in two allocations resolve alike, by their text.

use rustc_hash::FxHashMap as HashMap;

use super::NONE;
use crate::plan::{CableKind, Plan, PortRole};

/// Where a string lives: its address and length. Two strings borrowed
/// from one plan for as long as the key is used have the same key only
/// when they are the same bytes.
type Place = (usize, usize);

fn place(text: &str) -> Place {
    (text.as_ptr() as usize, text.len())
}

/// Lookups of names in a table keyed by text, remembered by the names'
/// places (see the module documentation).
pub(super) struct Lookup<'t, 'p> {
    by_text: &'t HashMap<&'p str, usize>,
    by_place: HashMap<Place, u32>,
    last: (Place, u32),
}

impl<'t, 'p> Lookup<'t, 'p> {
    pub(super) fn new(by_text: &'t HashMap<&'p str, usize>) -> Self {
        Lookup {
            by_text,
            by_place: HashMap::default(),
            last: ((0, 0), NONE),
        }
    }

    /// The number `name` has in the table, or [`NONE`].
    pub(super) fn get(&mut self, name: &'p str) -> u32 {
        let key = place(name);
        if key == self.last.0 {
            return self.last.1;
        }
        let by_text = self.by_text;
        let n = *self
            .by_place
            .entry(key)
            .or_insert_with(|| by_text.get(name).map_or(NONE, |&i| i as u32));
        self.last = (key, n);
        n
    }
}

/// Names numbered in the order first seen, remembered by their places
/// like [`Lookup`]: equal texts get one number.
#[derive(Default)]
pub(super) struct Numbers<'p> {
    by_text: HashMap<&'p str, u32>,
    by_place: HashMap<Place, u32>,
    last: Option<(Place, u32)>,
}

impl<'p> Numbers<'p> {
    /// How many distinct names are numbered.
    pub(super) fn len(&self) -> usize {
        self.by_text.len()
    }

    /// The number of `name`.
    pub(super) fn of(&mut self, name: &'p str) -> u32 {
        let key = place(name);
        if let Some((k, n)) = self.last
            && k == key
        {
            return n;
        }
        let n = match self.by_place.get(&key) {
            Some(&n) => n,
            None => {
                let next = self.by_text.len() as u32;
                let n = *self.by_text.entry(name).or_insert(next);
                self.by_place.insert(key, n);
                n
            }
        };
        self.last = Some((key, n));
        n
    }
}

/// Names that passed a check, by place: a name used a hundred thousand
/// times is checked about once. A fixed table (a slot per address, a
/// later name taking an earlier one's slot), so a plan of distinct
/// allocations costs no more memory than one of shared names; a name not
/// found is checked again, so what is found never depends on sharing.
pub(super) struct Passed {
    slots: Vec<Place>,
}

impl Passed {
    const SLOTS: usize = 4096;

    pub(super) fn new() -> Self {
        Passed {
            slots: vec![(0, 0); Self::SLOTS],
        }
    }

    fn slot(key: Place) -> usize {
        // Allocations are 8-byte aligned or more; mix in the length.
        ((key.0 >> 3) ^ key.1.wrapping_mul(0x9E37)) % Self::SLOTS
    }

    /// `check(text)`, or Ok when `text` (these bytes) passed it before.
    pub(super) fn check(
        &mut self,
        text: &str,
        check: fn(&str) -> Result<(), String>,
    ) -> Result<(), String> {
        let key = place(text);
        let s = Self::slot(key);
        if key.1 > 0 && self.slots[s] == key {
            return Ok(());
        }
        check(text)?;
        self.slots[s] = key;
        Ok(())
    }
}

/// The plan's references as numbers.
pub(super) struct Refs {
    /// Per sub-node: the switch (index into `switch_list`) its NIC's port
    /// 0 is on, or [`NONE`].
    pub sub_switch: Vec<u32>,
    /// Per sub-node: the switch of its NIC's port 1, or [`NONE`]; for a
    /// single-port NIC its port 0's (as `attachment` reads port 1 of one).
    pub sub_switch1: Vec<u32>,
    /// Per sub-node: its server (index into `servers`), or [`NONE`].
    pub sub_server: Vec<u32>,
    /// Position of each switch's first port in `peer`; one more at the end.
    pub port_base: Vec<usize>,
    /// Per port of every switch, in switch and port order: the peer of an
    /// inter-switch port as a switch, of a sub-node port as a server;
    /// [`NONE`] when it names nothing of the plan or the port has no peer.
    pub peer: Vec<u32>,
    /// Per cable: its `a` end's physical switch, and its `b` end's
    /// physical switch (inter-switch) or server (sub-node), or [`NONE`].
    pub cable: Vec<(u32, u32)>,
}

impl Refs {
    /// Resolves every reference of `plan` through the index's tables.
    pub(super) fn new<'p>(
        plan: &'p Plan,
        vs: &HashMap<&'p str, usize>,
        phys: &HashMap<&'p str, usize>,
        servers: &HashMap<&'p str, usize>,
    ) -> Self {
        let mut switch = Lookup::new(vs);
        let mut box_ = Lookup::new(phys);
        let mut server = Lookup::new(servers);
        let n = plan.sub_node_list.len();
        let mut sub_switch = Vec::with_capacity(n);
        let mut sub_switch1 = Vec::with_capacity(n);
        let mut sub_server = Vec::with_capacity(n);
        for sn in &plan.sub_node_list {
            let s0 = switch.get(&sn.switch);
            sub_switch.push(s0);
            sub_switch1.push(sn.port1.as_ref().map_or(s0, |a| switch.get(&a.switch)));
            sub_server.push(server.get(&sn.server));
        }
        let total = plan.switch_list.iter().map(|s| s.ports.len()).sum();
        let mut port_base = Vec::with_capacity(plan.switch_list.len() + 1);
        let mut peer = Vec::with_capacity(total);
        for s in &plan.switch_list {
            port_base.push(peer.len());
            for p in &s.ports {
                peer.push(match (p.role, &p.peer) {
                    (PortRole::InterSwitch, Some(name)) => switch.get(name),
                    (PortRole::SubNode, Some(name)) => server.get(name),
                    _ => NONE,
                });
            }
        }
        port_base.push(peer.len());
        let cable = (plan.cables.iter())
            .map(|c| {
                let b = match c.kind {
                    CableKind::InterSwitch => box_.get(&c.b),
                    CableKind::SubNode => server.get(&c.b),
                };
                (box_.get(&c.a), b)
            })
            .collect();
        Refs {
            sub_switch,
            sub_switch1,
            sub_server,
            port_base,
            peer,
            cable,
        }
    }

    /// The switch the sub-node's NIC port `nic_port` is on (port 1 of a
    /// single-port NIC: port 0's), as `attachment` names it, or [`NONE`].
    pub(super) fn attached(&self, sub_node: usize, nic_port: u8) -> u32 {
        if nic_port == 1 {
            self.sub_switch1[sub_node]
        } else {
            self.sub_switch[sub_node]
        }
    }
}
