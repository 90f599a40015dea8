//! The servers' NICs in compact tables, for finding a server's NIC by its
//! name ([`super::Index::nic_at`]) without reading the sub-node records.
//!
//! The load check finds a NIC by a server and a name twice per sub-node:
//! for the switch port that names it and for its cable. A search through
//! the records reads the server's list and the name fields of the
//! server's sub-nodes, records far apart in memory. Here each server's
//! listed sub-nodes lie side by side with their NIC and interface names as
//! numbers (equal texts, one number), so a search compares numbers in one
//! short run. A name with a `:` may be a dual-port NIC's `<nic>:p1`, which
//! no number says: it is searched the plain way.

use rustc_hash::FxHashMap as HashMap;

use super::NONE;
use crate::plan::Plan;

/// Every server's listed sub-nodes with their NIC names as numbers.
pub(super) struct Nics<'p> {
    /// Per server: the position of its first entry; one more at the end.
    start: Vec<u32>,
    /// Per server, in the order of its list, each listed sub-node that
    /// exists: the sub-node, the number of its NIC's name and of its
    /// interface name ([`NONE`] without one).
    entries: Vec<[u32; 3]>,
    /// The numbers of the names.
    number: HashMap<&'p str, u32>,
}

impl<'p> Nics<'p> {
    pub(super) fn new(plan: &'p Plan) -> Self {
        // Names numbered by text; a read plan shares one allocation per
        // name, so a few slots remember the numbers of the latest
        // allocations, found by address and length without reading or
        // hashing the text (a slot holds only the bytes it was filled
        // from, so what is found never depends on sharing).
        let mut number: HashMap<&'p str, u32> = HashMap::default();
        let mut slots = [((0usize, 0usize), NONE); 64];
        let mut of = |text: &'p str| {
            let key = (text.as_ptr() as usize, text.len());
            let slot = ((key.0 >> 4) ^ key.1) % slots.len();
            if key.1 > 0 && slots[slot].0 == key {
                return slots[slot].1;
            }
            let next = number.len() as u32;
            let n = *number.entry(text).or_insert(next);
            slots[slot] = (key, n);
            n
        };
        // Each sub-node's names in plan order, then each server's run.
        let names: Vec<[u32; 2]> = (plan.sub_node_list.iter())
            .map(|sn| [of(&sn.nic), sn.netdev.as_deref().map_or(NONE, &mut of)])
            .collect();
        let mut start = Vec::with_capacity(plan.servers.len() + 1);
        let mut entries = Vec::with_capacity(plan.sub_node_list.len());
        for s in &plan.servers {
            start.push(entries.len() as u32);
            for &i in &s.sub_nodes {
                if let Some(&[nic, netdev]) = names.get(i) {
                    entries.push([i as u32, nic, netdev]);
                }
            }
        }
        start.push(entries.len() as u32);
        Nics {
            start,
            entries,
            number,
        }
    }

    /// What the plain search gives ([`super::Index::nic_at`]) for a name
    /// without a `:`: the first sub-node of server `s`'s list whose NIC or
    /// interface is named `nic`, on its NIC's port 0; `None` for a name
    /// with a `:` (the caller searches the plain way).
    pub(super) fn find(&self, s: usize, nic: &str) -> Option<Option<(usize, u8)>> {
        if nic.contains(':') {
            return None;
        }
        // A name no NIC or interface has matches nothing: without a `:`
        // it is no `<nic>:p<port>` either.
        let Some(&n) = self.number.get(nic) else {
            return Some(None);
        };
        let run = &self.entries[self.start[s] as usize..self.start[s + 1] as usize];
        Some(
            run.iter()
                .find(|e| e[1] == n || e[2] == n)
                .map(|e| (e[0] as usize, 0)),
        )
    }
}
