//! The compact plan read straight into [`Plan`]: the hot lists (switches
//! and their ports, servers, sub-nodes, cables) decoded record by record
//! into vectors of their exact length, each key found by its string-table
//! index and each table entry made into one [`Name`] that every use shares
//! by index. The rest of the plan (its header tables, QoS, addressing,
//! routing, racks, a server's PCIe tree) is small and read by serde.
//!
//! This reader takes only the plain form the writer makes (keys as table
//! strings, each field once, the types the plan's fields have). Anything
//! else, a damaged file or a form serde would still take (a number given
//! as a negative-integer tag, an unknown key serde skips), makes it give
//! up ([`plan`] answers `None`) and the plan is read again by serde's
//! derived `Deserialize` ([`super::read::Reader`]), which decides: a plan
//! read here is the plan serde reads, and every refusal is serde's, with
//! its offset and field path. The tests hold both equal on every bundled
//! plan, a design of every topology and random corruptions.
//!
//! It reads the body from a byte source a window at a time
//! ([`super::window::Window`]): the planner's commands decode a plan file
//! as they read it ([`super::read_streamed`]), with the string table kept
//! and no buffer of the file's size; a plan already in memory is read
//! through the same window.

use std::borrow::Cow;
use std::io::Read;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde::de::value::StrDeserializer;

use super::read::{Fault, Reader};
use super::window::Window;
use super::{MAP, NULL, SEQ, STR};
use crate::plan::{
    Cable, CableKind, Media, Name, Plan, PlanAttachment, PlanPort, PlanServer, PlanSubNode,
    PlanSwitch, PortRole, Tier,
};

/// The keys of the records read here, each text once (a key several
/// records share, `name` or `port`, is one entry).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum F {
    FormatVersion,
    Name,
    Topology,
    SubNodes,
    Switches,
    PhysicalSwitches,
    Links,
    Bigraph,
    FatTree,
    Rail,
    Hpn,
    Notes,
    Warnings,
    SwitchList,
    Servers,
    SubNodeList,
    Cables,
    Racks,
    Qos,
    Addressing,
    Routing,
    PartOrTier,
    Physical,
    Model,
    Vlan,
    Pod,
    Plane,
    Rack,
    Position,
    UHeight,
    PortGbps,
    PortName,
    Breakout,
    Ports,
    Port,
    Cage,
    Lane,
    Role,
    Peer,
    PeerPort,
    GpuModel,
    Nvlink,
    Pci,
    Id,
    Server,
    Index,
    Gpu,
    GpuIndex,
    GpuIndices,
    Nic,
    Netdev,
    NicGbps,
    Socket,
    SocketIndex,
    PcieSwitch,
    Mac,
    Ip,
    Switch,
    Port1,
    A,
    APort,
    B,
    BPort,
    Gbps,
    Kind,
    Media,
}

const KEYS: [(&str, F); 66] = [
    ("format_version", F::FormatVersion),
    ("name", F::Name),
    ("topology", F::Topology),
    ("sub_nodes", F::SubNodes),
    ("switches", F::Switches),
    ("physical_switches", F::PhysicalSwitches),
    ("links", F::Links),
    ("bigraph", F::Bigraph),
    ("fat_tree", F::FatTree),
    ("rail", F::Rail),
    ("hpn", F::Hpn),
    ("notes", F::Notes),
    ("warnings", F::Warnings),
    ("switch_list", F::SwitchList),
    ("servers", F::Servers),
    ("sub_node_list", F::SubNodeList),
    ("cables", F::Cables),
    ("racks", F::Racks),
    ("qos", F::Qos),
    ("addressing", F::Addressing),
    ("routing", F::Routing),
    ("part_or_tier", F::PartOrTier),
    ("physical", F::Physical),
    ("model", F::Model),
    ("vlan", F::Vlan),
    ("pod", F::Pod),
    ("plane", F::Plane),
    ("rack", F::Rack),
    ("position", F::Position),
    ("u_height", F::UHeight),
    ("port_gbps", F::PortGbps),
    ("port_name", F::PortName),
    ("breakout", F::Breakout),
    ("ports", F::Ports),
    ("port", F::Port),
    ("cage", F::Cage),
    ("lane", F::Lane),
    ("role", F::Role),
    ("peer", F::Peer),
    ("peer_port", F::PeerPort),
    ("gpu_model", F::GpuModel),
    ("nvlink", F::Nvlink),
    ("pci", F::Pci),
    ("id", F::Id),
    ("server", F::Server),
    ("index", F::Index),
    ("gpu", F::Gpu),
    ("gpu_index", F::GpuIndex),
    ("gpu_indices", F::GpuIndices),
    ("nic", F::Nic),
    ("netdev", F::Netdev),
    ("nic_gbps", F::NicGbps),
    ("socket", F::Socket),
    ("socket_index", F::SocketIndex),
    ("pcie_switch", F::PcieSwitch),
    ("mac", F::Mac),
    ("ip", F::Ip),
    ("switch", F::Switch),
    ("port1", F::Port1),
    ("a", F::A),
    ("a_port", F::APort),
    ("b", F::B),
    ("b_port", F::BPort),
    ("gbps", F::Gbps),
    ("kind", F::Kind),
    ("media", F::Media),
];

/// What a key's table entry is, found at its first use: not yet looked
/// at, not a key of [`KEYS`], or `KEYS[k]` as `k + 2`.
const UNSEEN: u8 = 0;
const NOT_A_KEY: u8 = 1;

/// The nesting depth at which serde's reader reads a field of the plan,
/// of a switch, server, sub-node or cable, and of a port: a map or
/// sequence nests one level, as [`Reader`] counts.
const PLAN_FIELD: usize = 1;
const RECORD_FIELD: usize = 3;

/// The fewest bytes a record of each list takes in the plain form (its
/// map's tag and count, four bytes a required field: a key and a value of
/// a tag and a byte each, a list's tag and count): a count of more than
/// the bytes left allow is refused before anything is allocated for it.
const MIN_PORT: usize = 5 + 2 * 4;
const MIN_SWITCH: usize = 5 + 5 * 4 + 7;
const MIN_SERVER: usize = 5 + 4 + 7;
const MIN_SUB_NODE: usize = 5 + 9 * 4;
const MIN_CABLE: usize = 5 + 7 * 4;
/// An index of a list of numbers: its tag and a byte.
const MIN_INDEX: usize = 2;

/// Reads the string table and the plan of a body of `len` bytes that
/// `src` gives, decoded a window of `window` bytes at a time ([`Window`]),
/// or `None` when the body is not in the plain form the writer makes, or
/// has bytes after the plan: the caller then reads it with serde, which
/// decides.
pub(super) fn plan(src: &mut dyn Read, len: u64, window: usize) -> Option<Plan> {
    let mut w = Window::new(src, len, window);
    let (text, ends) = table(&mut w)?;
    let mut strings = Vec::with_capacity(ends.len());
    let mut start = 0;
    for &end in &ends {
        strings.push(&text[start..end]);
        start = end;
    }
    let entries = strings.len();
    let mut d = Direct {
        w: &mut w,
        strings: &strings,
        names: vec![None; entries],
        keys: vec![UNSEEN; entries],
        at_key: [usize::MAX; KEYS.len()],
        key_bytes: [NO_KEY_BYTES; KEYS.len()],
        tiers: Vec::new(),
        roles: Vec::new(),
        kinds: Vec::new(),
        media: Vec::new(),
    };
    let plan = crate::plan::interned(|| d.plan())?;
    w.done().then_some(plan)
}

/// The string table: its text, and where each entry ends in it.
fn table(w: &mut Window<'_>) -> Option<(String, Vec<usize>)> {
    let n = w.varint()?;
    if n > w.left() {
        return None;
    }
    let mut text = String::new();
    let mut ends = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let len = usize::try_from(w.varint()?).ok()?;
        text.push_str(std::str::from_utf8(w.get(len)?).ok()?);
        w.at += len;
        ends.push(text.len());
    }
    Some((text, ends))
}

struct Direct<'a, 'r, 't> {
    w: &'a mut Window<'r>,
    /// The string table's entries.
    strings: &'a [&'t str],
    /// The one name of each table entry, made at its first use.
    names: Vec<Option<Name>>,
    /// What each table entry is as a key ([`UNSEEN`], [`NOT_A_KEY`]).
    keys: Vec<u8>,
    /// The table index of each key of [`KEYS`] once read (`usize::MAX`
    /// before).
    at_key: [usize; KEYS.len()],
    /// The bytes each key of [`KEYS`] is written as once read: its string
    /// tag and index's varint, as a little-endian word, the mask of their
    /// bytes and their count ([`key_bytes`]).
    key_bytes: [(u64, u64, usize); KEYS.len()],
    /// The enum value of each table entry read as one, by entry.
    tiers: Vec<(usize, Tier)>,
    roles: Vec<(usize, PortRole)>,
    kinds: Vec<(usize, CableKind)>,
    media: Vec<(usize, Media)>,
}

/// Marks field `f` of a record seen: `None` when it was already (serde
/// refuses a duplicate field). A key's bit is its number modulo 64 (a
/// `u64` is a few instructions fewer than a `u128` on every field): the
/// two keys past 63 (`kind`, `media`, of cables) share their bits with
/// the plan's `format_version` and `name`, which are never keys of one
/// record (a record with both is refused either way; the test
/// `no_record_has_two_keys_of_one_bit` holds it).
fn once(seen: &mut u64, f: F) -> Option<()> {
    if *seen & bit(f) != 0 {
        return None;
    }
    *seen |= bit(f);
    Some(())
}

/// The bytes of a string value of table entry `i` (its tag and index),
/// as [`Direct::next_is`] looks for them: a little-endian word, the mask
/// of their bytes, their count; [`NO_KEY_BYTES`], which no bytes match,
/// when they take more than the word.
fn key_bytes(i: usize) -> (u64, u64, usize) {
    let mut bytes = vec![STR];
    super::write::varint(&mut bytes, i as u64);
    if bytes.len() >= 8 {
        return NO_KEY_BYTES;
    }
    let mut word = [0u8; 8];
    word[..bytes.len()].copy_from_slice(&bytes);
    let mask = (1u64 << (8 * bytes.len())) - 1;
    (u64::from_le_bytes(word), mask, bytes.len())
}

/// Key bytes no bytes match: none under the mask, a word that is not.
const NO_KEY_BYTES: (u64, u64, usize) = (1, 0, 0);

/// Field `f`'s bit in a record's [`Fields::seen`] ([`once`]).
#[inline]
fn bit(f: F) -> u64 {
    1u64 << (f as u32 % 64)
}

/// A record being read: its fields not yet read, the key read and not
/// yet taken ([`Direct::next_is`]), and the fields seen ([`once`]).
struct Fields {
    left: usize,
    key: Option<usize>,
    seen: u64,
}

/// Reads a record's fields, each `Key => read` the reading of field
/// `F::Key`, given in the order the writer puts them (the plan type's
/// field order): first in that order, each field found by its key's
/// table index alone with no dispatch ([`Direct::next_is`]), then any
/// field left (another order, a duplicate, a key the record does not
/// have: the first record of each kind, or a file the writer did not
/// make) by its key, as serde would take it ([`Direct::next_any`]).
macro_rules! fields {
    ($d:ident, $($key:ident => $read:expr),* $(,)?) => {{
        let mut r = $d.fields()?;
        $(
            if $d.next_is(&mut r, F::$key)? {
                $read;
            }
        )*
        while r.left > 0 {
            match $d.next_any(&mut r)? {
                $(F::$key => $read,)*
                _ => return None,
            }
        }
    }};
}

/// The enum value of table entry `i` (text `s`) as serde reads it, found
/// once per entry.
fn variant<'de, T: Deserialize<'de> + Copy>(
    cache: &mut Vec<(usize, T)>,
    i: usize,
    s: &'de str,
) -> Option<T> {
    if let Some(&(_, v)) = cache.iter().find(|(e, _)| *e == i) {
        return Some(v);
    }
    let v = T::deserialize(StrDeserializer::<Fault>::new(s)).ok()?;
    cache.push((i, v));
    Some(v)
}

impl<'t> Direct<'_, '_, 't> {
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        self.w.peek()
    }

    /// A string's index in the table (not yet looked up).
    #[inline]
    fn index(&mut self) -> Option<usize> {
        self.w.tag(STR)?;
        usize::try_from(self.w.varint()?).ok()
    }

    /// A string's table entry: its index and text.
    #[inline]
    fn entry(&mut self) -> Option<(usize, &'t str)> {
        let i = self.index()?;
        Some((i, self.strings.get(i)?))
    }

    #[inline]
    fn uint(&mut self) -> Option<u64> {
        self.w.uint()
    }

    #[inline]
    fn u32(&mut self) -> Option<u32> {
        u32::try_from(self.uint()?).ok()
    }

    #[inline]
    fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.uint()?).ok()
    }

    /// The name of a table entry: made at the entry's first use (the
    /// text read only then), shared after.
    #[inline]
    fn name(&mut self) -> Option<Name> {
        let i = self.index()?;
        match self.names.get_mut(i)? {
            Some(name) => Some(name.clone()),
            slot => Some(slot.insert(Name::new(self.strings[i])).clone()),
        }
    }

    fn string(&mut self) -> Option<String> {
        self.entry().map(|(_, s)| s.to_string())
    }

    /// An optional value: `None` written as null, else `read`'s.
    #[inline]
    fn opt<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.peek()? == NULL {
            self.w.at += 1;
            return Some(None);
        }
        read(self).map(Some)
    }

    /// A map's or sequence's count, when the value is one.
    #[inline]
    fn count(&mut self, tag: u8) -> Option<usize> {
        self.w.tag(tag)?;
        self.w.count()
    }

    /// A list of records of at least `min` bytes each, each read by
    /// `read` into a vector of the list's length: `None` when the bytes
    /// left cannot hold them (before anything is allocated) or a record
    /// is not in the plain form.
    #[inline]
    fn records<T>(
        &mut self,
        min: usize,
        mut read: impl FnMut(&mut Self) -> Option<T>,
    ) -> Option<Vec<T>> {
        let n = self.count(SEQ)?;
        if n as u64 > self.w.left() / min as u64 {
            return None;
        }
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(read(self)?);
        }
        Some(out)
    }

    /// A record's fields: its map's count, none read yet.
    #[inline]
    fn fields(&mut self) -> Option<Fields> {
        Some(Fields {
            left: self.count(MAP)?,
            key: None,
            seen: 0,
        })
    }

    /// True when the record's next field is `f` (then taken: its value is
    /// next), found by the key's bytes alone: the writer puts a record's
    /// fields in the order of [`fields!`], so each is where it is asked
    /// for once the first record of its kind was read
    /// ([`Direct::key_of`]).
    #[inline(always)]
    fn next_is(&mut self, r: &mut Fields, f: F) -> Option<bool> {
        if r.left == 0 {
            return Some(false);
        }
        if r.key.is_none() {
            let (word, mask, len) = self.key_bytes[f as usize];
            if let Some(b) = self.w.buf.get(self.w.at..self.w.at + 8)
                && let Ok(b) = <[u8; 8]>::try_from(b)
                && u64::from_le_bytes(b) & mask == word
            {
                self.w.at += len;
                r.left -= 1;
                r.seen |= bit(f);
                return Some(true);
            }
        }
        self.next_is_by_index(r, f)
    }

    /// [`Direct::next_is`] by the key's table index, read if it was not:
    /// near the window's end, and for a key that is not `f`.
    #[inline(never)]
    fn next_is_by_index(&mut self, r: &mut Fields, f: F) -> Option<bool> {
        let i = match r.key {
            Some(i) => i,
            None => *r.key.insert(self.index()?),
        };
        if i != self.at_key[f as usize] {
            return Some(false);
        }
        r.key = None;
        r.left -= 1;
        r.seen |= bit(f);
        Some(true)
    }

    /// The record's next field in any order: `None` when it is not a
    /// key of [`KEYS`] or was read before (serde refuses a duplicate).
    fn next_any(&mut self, r: &mut Fields) -> Option<F> {
        let i = match r.key.take() {
            Some(i) => i,
            None => self.index()?,
        };
        r.left -= 1;
        let f = self.key_of(i)?;
        once(&mut r.seen, f)?;
        Some(f)
    }

    /// The key of table entry `i` (the entry's text read only at its first
    /// use, which also tells [`Direct::next_is`] the key's index).
    fn key_of(&mut self, i: usize) -> Option<F> {
        let k = self.keys.get_mut(i)?;
        if *k == UNSEEN {
            let p = KEYS.iter().position(|(text, _)| *text == self.strings[i]);
            *k = p.map_or(NOT_A_KEY, |p| p as u8 + 2);
            if let Some(p) = p
                && self.at_key[p] == usize::MAX
            {
                self.at_key[p] = i;
                self.key_bytes[p] = key_bytes(i);
            }
        }
        (*k != NOT_A_KEY).then(|| KEYS[usize::from(*k - 2)].1)
    }

    /// A value read by serde, at the nesting depth serde's own walk would
    /// be at, from as many bytes of the window as it needs.
    fn serde<T: DeserializeOwned>(&mut self, depth: usize) -> Option<T> {
        let strings = self.strings;
        self.w.with(|bytes| {
            let mut r = Reader {
                bytes,
                at: 0,
                strings: Cow::Borrowed(strings),
                depth,
            };
            let v = T::deserialize(&mut r).ok()?;
            Some((v, r.at))
        })
    }

    fn tier(&mut self) -> Option<Tier> {
        let (i, s) = self.entry()?;
        variant(&mut self.tiers, i, s)
    }

    fn role(&mut self) -> Option<PortRole> {
        let (i, s) = self.entry()?;
        variant(&mut self.roles, i, s)
    }

    fn kind(&mut self) -> Option<CableKind> {
        let (i, s) = self.entry()?;
        variant(&mut self.kinds, i, s)
    }

    fn media(&mut self) -> Option<Media> {
        let (i, s) = self.entry()?;
        variant(&mut self.media, i, s)
    }

    fn plan(&mut self) -> Option<Plan> {
        let mut r = self.fields()?;
        let (mut format_version, mut name, mut topology) = (None, None, None);
        let (mut sub_nodes, mut switches, mut physical_switches, mut links) =
            (None, None, None, None);
        let (mut bigraph, mut fat_tree, mut rail, mut hpn) = (None, None, None, None);
        let (mut notes, mut warnings) = (Vec::new(), Vec::new());
        let (mut switch_list, mut servers, mut sub_node_list, mut cables) =
            (None, None, None, None);
        let (mut racks, mut qos, mut addressing, mut routing) =
            (Vec::new(), None, Default::default(), Default::default());
        while r.left > 0 {
            match self.next_any(&mut r)? {
                F::FormatVersion => format_version = Some(self.u32()?),
                F::Name => name = Some(self.string()?),
                F::Topology => topology = Some(self.serde(PLAN_FIELD)?),
                F::SubNodes => sub_nodes = Some(self.usize()?),
                F::Switches => switches = Some(self.usize()?),
                F::PhysicalSwitches => physical_switches = Some(self.usize()?),
                F::Links => links = Some(self.usize()?),
                F::Bigraph => bigraph = self.serde(PLAN_FIELD)?,
                F::FatTree => fat_tree = self.serde(PLAN_FIELD)?,
                F::Rail => rail = self.serde(PLAN_FIELD)?,
                F::Hpn => hpn = self.serde(PLAN_FIELD)?,
                F::Notes => notes = self.serde(PLAN_FIELD)?,
                F::Warnings => warnings = self.serde(PLAN_FIELD)?,
                F::SwitchList => switch_list = Some(self.records(MIN_SWITCH, Self::switch)?),
                F::Servers => servers = Some(self.records(MIN_SERVER, Self::server)?),
                F::SubNodeList => sub_node_list = Some(self.records(MIN_SUB_NODE, Self::sub_node)?),
                F::Cables => cables = Some(self.records(MIN_CABLE, Self::cable)?),
                F::Racks => racks = self.serde(PLAN_FIELD)?,
                F::Qos => qos = self.serde(PLAN_FIELD)?,
                F::Addressing => addressing = self.serde(PLAN_FIELD)?,
                F::Routing => routing = self.serde(PLAN_FIELD)?,
                _ => return None,
            }
        }
        Some(Plan {
            format_version: format_version?,
            name: name?,
            topology: topology?,
            sub_nodes: sub_nodes?,
            switches: switches?,
            physical_switches: physical_switches?,
            links: links?,
            bigraph,
            fat_tree,
            rail,
            hpn,
            notes,
            warnings,
            switch_list: switch_list?,
            servers: servers?,
            sub_node_list: sub_node_list?,
            cables: cables?,
            racks,
            qos,
            addressing,
            routing,
        })
    }

    fn switch(&mut self) -> Option<PlanSwitch> {
        let (mut name, mut part_or_tier, mut physical, mut model) = (None, None, None, None);
        let (mut vlan, mut pod, mut rail, mut plane) = (None, None, None, None);
        let (mut rack, mut position, mut u_height) = (None, None, None);
        let (mut port_gbps, mut port_name, mut breakout, mut ports) = (None, None, None, None);
        fields!(self,
            Name => name = Some(self.name()?),
            PartOrTier => part_or_tier = Some(self.tier()?),
            Physical => physical = Some(self.name()?),
            Model => model = Some(self.name()?),
            Vlan => vlan = self.opt(|d| u16::try_from(d.uint()?).ok())?,
            Pod => pod = self.opt(Self::usize)?,
            Rail => rail = self.opt(Self::usize)?,
            Plane => plane = self.opt(Self::usize)?,
            Rack => rack = self.opt(Self::name)?,
            Position => position = self.opt(Self::u32)?,
            UHeight => u_height = self.opt(Self::u32)?,
            PortGbps => port_gbps = Some(self.u32()?),
            PortName => port_name = self.opt(Self::string)?,
            Breakout => breakout = self.serde(RECORD_FIELD)?,
            Ports => ports = Some(self.records(MIN_PORT, Self::port)?),
        );
        Some(PlanSwitch {
            name: name?,
            part_or_tier: part_or_tier?,
            physical: physical?,
            model: model?,
            vlan,
            pod,
            rail,
            plane,
            rack,
            position,
            u_height,
            port_gbps: port_gbps?,
            port_name,
            breakout,
            ports: ports?,
        })
    }

    fn port(&mut self) -> Option<PlanPort> {
        let (mut port, mut cage, mut lane, mut role, mut peer, mut peer_port) =
            (None, None, None, None, None, None);
        fields!(self,
            Port => port = Some(self.u32()?),
            Cage => cage = self.opt(Self::u32)?,
            Lane => lane = self.opt(Self::u32)?,
            Role => role = Some(self.role()?),
            Peer => peer = self.opt(Self::name)?,
            PeerPort => peer_port = self.opt(Self::name)?,
        );
        Some(PlanPort {
            port: port?,
            cage,
            lane,
            role: role?,
            peer,
            peer_port,
        })
    }

    fn server(&mut self) -> Option<PlanServer> {
        let (mut name, mut rack, mut position, mut u_height) = (None, None, None, None);
        let (mut sub_nodes, mut gpu_model, mut nvlink, mut pci) =
            (None, None, Vec::new(), Vec::new());
        fields!(self,
            Name => name = Some(self.name()?),
            Rack => rack = self.opt(Self::name)?,
            Position => position = self.opt(Self::u32)?,
            UHeight => u_height = self.opt(Self::u32)?,
            SubNodes => sub_nodes = Some(self.records(MIN_INDEX, Self::usize)?),
            GpuModel => gpu_model = self.opt(Self::name)?,
            Nvlink => nvlink = self.serde(RECORD_FIELD)?,
            Pci => pci = self.serde(RECORD_FIELD)?,
        );
        Some(PlanServer {
            name: name?,
            rack,
            position,
            u_height,
            sub_nodes: sub_nodes?,
            gpu_model,
            nvlink,
            pci,
        })
    }

    fn sub_node(&mut self) -> Option<PlanSubNode> {
        let (mut id, mut server, mut index, mut gpu, mut gpu_index) =
            (None, None, None, None, None);
        let (mut gpu_indices, mut nic, mut netdev, mut nic_gbps) = (Vec::new(), None, None, None);
        let (mut socket, mut socket_index, mut pcie_switch, mut mac, mut ip) =
            (None, 0, None, None, None);
        let (mut switch, mut port, mut part_or_tier, mut port1) = (None, None, None, None);
        fields!(self,
            Id => id = Some(self.name()?),
            Server => server = Some(self.name()?),
            Index => index = Some(self.usize()?),
            Gpu => gpu = self.opt(Self::name)?,
            GpuIndex => gpu_index = self.opt(Self::usize)?,
            GpuIndices => gpu_indices = self.records(MIN_INDEX, Self::usize)?,
            Nic => nic = Some(self.name()?),
            Netdev => netdev = self.opt(Self::name)?,
            NicGbps => nic_gbps = Some(self.u32()?),
            Socket => socket = Some(self.name()?),
            SocketIndex => socket_index = self.usize()?,
            PcieSwitch => pcie_switch = self.opt(Self::name)?,
            Mac => mac = self.opt(Self::string)?,
            Ip => ip = self.opt(Self::string)?,
            Switch => switch = Some(self.name()?),
            Port => port = Some(self.u32()?),
            PartOrTier => part_or_tier = Some(self.tier()?),
            Port1 => port1 = self.opt(Self::attachment)?,
        );
        Some(PlanSubNode {
            id: id?,
            server: server?,
            index: index?,
            gpu,
            gpu_index,
            gpu_indices,
            nic: nic?,
            netdev,
            nic_gbps: nic_gbps?,
            socket: socket?,
            socket_index,
            pcie_switch,
            mac,
            ip,
            switch: switch?,
            port: port?,
            part_or_tier: part_or_tier?,
            port1,
        })
    }

    fn attachment(&mut self) -> Option<PlanAttachment> {
        let (mut switch, mut port, mut part_or_tier) = (None, None, None);
        fields!(self,
            Switch => switch = Some(self.name()?),
            Port => port = Some(self.u32()?),
            PartOrTier => part_or_tier = Some(self.tier()?),
        );
        Some(PlanAttachment {
            switch: switch?,
            port: port?,
            part_or_tier: part_or_tier?,
        })
    }

    fn cable(&mut self) -> Option<Cable> {
        let (mut a, mut a_port, mut b, mut b_port) = (None, None, None, None);
        let (mut gbps, mut kind, mut media) = (None, None, None);
        fields!(self,
            A => a = Some(self.name()?),
            APort => a_port = Some(self.u32()?),
            B => b = Some(self.name()?),
            BPort => b_port = Some(self.name()?),
            Gbps => gbps = Some(self.u32()?),
            Kind => kind = Some(self.kind()?),
            Media => media = Some(self.media()?),
        );
        Some(Cable {
            a: a?,
            a_port: a_port?,
            b: b?,
            b_port: b_port?,
            gbps: gbps?,
            kind: kind?,
            media: media?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{F, KEYS};

    /// The keys past 63 share a bit of [`super::once`] only with keys of
    /// no record of theirs: `kind` and `media` (a cable's) with
    /// `format_version` and `name` (the plan's, a switch's, a server's).
    /// And `KEYS` is in `F`'s order.
    #[test]
    fn no_record_has_two_keys_of_one_bit() {
        for (p, (_, f)) in KEYS.iter().enumerate() {
            assert_eq!(*f as usize, p);
        }
        let shared: Vec<(F, F)> = KEYS[64..]
            .iter()
            .map(|k| (KEYS[k.1 as usize - 64].1, k.1))
            .collect();
        assert_eq!(shared, [(F::FormatVersion, F::Kind), (F::Name, F::Media)]);
    }
}
