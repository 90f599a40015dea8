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
    let bit = 1u64 << (f as u32 % 64);
    if *seen & bit != 0 {
        return None;
    }
    *seen |= bit;
    Some(())
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

    /// A record's key (the entry's text read only at its first use).
    #[inline]
    fn key(&mut self) -> Option<F> {
        let i = self.index()?;
        let k = self.keys.get_mut(i)?;
        if *k == UNSEEN {
            *k = KEYS
                .iter()
                .position(|(text, _)| *text == self.strings[i])
                .map_or(NOT_A_KEY, |p| p as u8 + 2);
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

    fn plan(&mut self) -> Option<Plan> {
        let fields = self.count(MAP)?;
        let mut seen = 0u64;
        let (mut format_version, mut name, mut topology) = (None, None, None);
        let (mut sub_nodes, mut switches, mut physical_switches, mut links) =
            (None, None, None, None);
        let (mut bigraph, mut fat_tree, mut rail, mut hpn) = (None, None, None, None);
        let (mut notes, mut warnings) = (Vec::new(), Vec::new());
        let (mut switch_list, mut servers, mut sub_node_list, mut cables) =
            (None, None, None, None);
        let (mut racks, mut qos, mut addressing, mut routing) =
            (Vec::new(), None, Default::default(), Default::default());
        for _ in 0..fields {
            let f = self.key()?;
            once(&mut seen, f)?;
            match f {
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
        let fields = self.count(MAP)?;
        let mut seen = 0u64;
        let (mut name, mut part_or_tier, mut physical, mut model) = (None, None, None, None);
        let (mut vlan, mut pod, mut rail, mut plane) = (None, None, None, None);
        let (mut rack, mut position, mut u_height) = (None, None, None);
        let (mut port_gbps, mut port_name, mut breakout, mut ports) = (None, None, None, None);
        for _ in 0..fields {
            let f = self.key()?;
            once(&mut seen, f)?;
            match f {
                F::Name => name = Some(self.name()?),
                F::PartOrTier => part_or_tier = Some(self.tier()?),
                F::Physical => physical = Some(self.name()?),
                F::Model => model = Some(self.name()?),
                F::Vlan => vlan = self.opt(|d| u16::try_from(d.uint()?).ok())?,
                F::Pod => pod = self.opt(Self::usize)?,
                F::Rail => rail = self.opt(Self::usize)?,
                F::Plane => plane = self.opt(Self::usize)?,
                F::Rack => rack = self.opt(Self::name)?,
                F::Position => position = self.opt(Self::u32)?,
                F::UHeight => u_height = self.opt(Self::u32)?,
                F::PortGbps => port_gbps = Some(self.u32()?),
                F::PortName => port_name = self.opt(Self::string)?,
                F::Breakout => breakout = self.serde(RECORD_FIELD)?,
                F::Ports => ports = Some(self.records(MIN_PORT, Self::port)?),
                _ => return None,
            }
        }
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
        let fields = self.count(MAP)?;
        let mut seen = 0u64;
        let (mut port, mut cage, mut lane, mut role, mut peer, mut peer_port) =
            (None, None, None, None, None, None);
        for _ in 0..fields {
            let f = self.key()?;
            once(&mut seen, f)?;
            match f {
                F::Port => port = Some(self.u32()?),
                F::Cage => cage = self.opt(Self::u32)?,
                F::Lane => lane = self.opt(Self::u32)?,
                F::Role => {
                    let (i, s) = self.entry()?;
                    role = Some(variant(&mut self.roles, i, s)?);
                }
                F::Peer => peer = self.opt(Self::name)?,
                F::PeerPort => peer_port = self.opt(Self::name)?,
                _ => return None,
            }
        }
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
        let fields = self.count(MAP)?;
        let mut seen = 0u64;
        let (mut name, mut rack, mut position, mut u_height) = (None, None, None, None);
        let (mut sub_nodes, mut gpu_model, mut nvlink, mut pci) =
            (None, None, Vec::new(), Vec::new());
        for _ in 0..fields {
            let f = self.key()?;
            once(&mut seen, f)?;
            match f {
                F::Name => name = Some(self.name()?),
                F::Rack => rack = self.opt(Self::name)?,
                F::Position => position = self.opt(Self::u32)?,
                F::UHeight => u_height = self.opt(Self::u32)?,
                F::SubNodes => sub_nodes = Some(self.records(MIN_INDEX, Self::usize)?),
                F::GpuModel => gpu_model = self.opt(Self::name)?,
                F::Nvlink => nvlink = self.serde(RECORD_FIELD)?,
                F::Pci => pci = self.serde(RECORD_FIELD)?,
                _ => return None,
            }
        }
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
        let fields = self.count(MAP)?;
        let mut seen = 0u64;
        let (mut id, mut server, mut index, mut gpu, mut gpu_index) =
            (None, None, None, None, None);
        let (mut gpu_indices, mut nic, mut netdev, mut nic_gbps) = (Vec::new(), None, None, None);
        let (mut socket, mut socket_index, mut pcie_switch, mut mac, mut ip) =
            (None, 0, None, None, None);
        let (mut switch, mut port, mut part_or_tier, mut port1) = (None, None, None, None);
        for _ in 0..fields {
            let f = self.key()?;
            once(&mut seen, f)?;
            match f {
                F::Id => id = Some(self.name()?),
                F::Server => server = Some(self.name()?),
                F::Index => index = Some(self.usize()?),
                F::Gpu => gpu = self.opt(Self::name)?,
                F::GpuIndex => gpu_index = self.opt(Self::usize)?,
                F::GpuIndices => gpu_indices = self.records(MIN_INDEX, Self::usize)?,
                F::Nic => nic = Some(self.name()?),
                F::Netdev => netdev = self.opt(Self::name)?,
                F::NicGbps => nic_gbps = Some(self.u32()?),
                F::Socket => socket = Some(self.name()?),
                F::SocketIndex => socket_index = self.usize()?,
                F::PcieSwitch => pcie_switch = self.opt(Self::name)?,
                F::Mac => mac = self.opt(Self::string)?,
                F::Ip => ip = self.opt(Self::string)?,
                F::Switch => switch = Some(self.name()?),
                F::Port => port = Some(self.u32()?),
                F::PartOrTier => part_or_tier = Some(self.tier()?),
                F::Port1 => port1 = self.opt(Self::attachment)?,
                _ => return None,
            }
        }
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
        let fields = self.count(MAP)?;
        let mut seen = 0u64;
        let (mut switch, mut port, mut part_or_tier) = (None, None, None);
        for _ in 0..fields {
            let f = self.key()?;
            once(&mut seen, f)?;
            match f {
                F::Switch => switch = Some(self.name()?),
                F::Port => port = Some(self.u32()?),
                F::PartOrTier => part_or_tier = Some(self.tier()?),
                _ => return None,
            }
        }
        Some(PlanAttachment {
            switch: switch?,
            port: port?,
            part_or_tier: part_or_tier?,
        })
    }

    fn cable(&mut self) -> Option<Cable> {
        let fields = self.count(MAP)?;
        let mut seen = 0u64;
        let (mut a, mut a_port, mut b, mut b_port) = (None, None, None, None);
        let (mut gbps, mut kind, mut media) = (None, None, None);
        for _ in 0..fields {
            let f = self.key()?;
            once(&mut seen, f)?;
            match f {
                F::A => a = Some(self.name()?),
                F::APort => a_port = Some(self.u32()?),
                F::B => b = Some(self.name()?),
                F::BPort => b_port = Some(self.name()?),
                F::Gbps => gbps = Some(self.u32()?),
                F::Kind => {
                    let (i, s) = self.entry()?;
                    kind = Some(variant(&mut self.kinds, i, s)?);
                }
                F::Media => {
                    let (i, s) = self.entry()?;
                    media = Some(variant(&mut self.media, i, s)?);
                }
                _ => return None,
            }
        }
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
