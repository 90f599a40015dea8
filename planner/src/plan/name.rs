//! [`Name`]: the one type of a plan's names (a switch, server, NIC,
//! socket, a port's peer, a cable's ends), shared instead of copied.
//!
//! A 131,072-sub-node plan names its 512 switches in every cable and port
//! that reaches them, and its 8 NIC names 131,072 times between them: as
//! owned `String`s that was some 2 million allocations, each touched once. A
//! [`Name`] is a reference-counted immutable string, so a plan read by
//! [`Plan::from_json`](super::Plan::from_json) or
//! [`Plan::from_compact`](super::Plan::from_compact), or made by
//! [`crate::design::design`], holds each distinct name once and every use
//! clones the pointer ([`interned`]).
//!
//! It is one word wide ([`arcstr::ArcStr`] keeps the length beside the
//! text, where `Arc<str>` kept it in the pointer), so each name field of a
//! record takes 8 bytes and an absent `Option<Name>` none more: on the
//! 131,072-sub-node plan a sub-node record fell from 272 to 200 bytes, a
//! port from 56 to 40 and a cable from 64 to 40, and the read plan from
//! 73.8 MB to 54.0 MB (docs/benchmarks.md, issue #33, ninth session).
//!
//! It compares, orders and hashes as its text (`str`), so maps keyed by
//! `Name` answer `&str` lookups, and serde writes and reads it as a plain
//! string: plan files do not change.

use arcstr::ArcStr;
use std::borrow::Borrow;
use std::cell::RefCell;
use std::fmt;
use std::ops::Deref;

use rustc_hash::FxHashSet;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};

/// A plan's name: a shared immutable string that clones in a pointer copy.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Name(ArcStr);

impl Name {
    /// A new name holding its own copy of `text`, never shared with
    /// another (the conversions `From<&str>` and `From<String>` share
    /// within [`interned`]).
    pub fn new(text: &str) -> Name {
        Name(ArcStr::from(text))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when both are the same allocation (one interned name).
    pub fn ptr_eq(a: &Name, b: &Name) -> bool {
        ArcStr::ptr_eq(&a.0, &b.0)
    }
}

impl Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

/// Within [`interned`], the name read or made before with that text.
impl From<&str> for Name {
    fn from(text: &str) -> Name {
        intern(text)
    }
}

/// Within [`interned`], the name read or made before with that text.
impl From<&String> for Name {
    fn from(text: &String) -> Name {
        intern(text)
    }
}

/// Within [`interned`], the name read or made before with that text.
impl From<String> for Name {
    fn from(text: String) -> Name {
        intern(&text)
    }
}

impl From<&Name> for Name {
    fn from(name: &Name) -> Name {
        name.clone()
    }
}

impl From<Name> for String {
    fn from(name: Name) -> String {
        name.0.to_string()
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Name> for str {
    fn eq(&self, other: &Name) -> bool {
        *self == *other.0
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        **self == *other.0
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        **self == *other.0
    }
}

impl Serialize for Name {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Name, D::Error> {
        deserializer.deserialize_str(NameVisitor)
    }
}

struct NameVisitor;

impl Visitor<'_> for NameVisitor {
    type Value = Name;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Name, E> {
        Ok(READING.with(|r| match r.borrow_mut().as_mut() {
            Some(reading) => reading.read(text),
            None => Name::new(text),
        }))
    }
}

/// The names of one plan being read or designed ([`interned`]).
#[derive(Default)]
struct Reading {
    /// Every name so far, by text.
    by_text: FxHashSet<Name>,
    /// A compact plan's string table: the name of each entry, made at its
    /// first use ([`interned_table`]); empty for other reads.
    table: Vec<Option<Name>>,
    /// The entry the compact reader is handing over ([`offer`]): its
    /// index, and the address and length of its text in the file.
    offered: Option<(usize, usize, usize)>,
}

impl Reading {
    /// The name with `text`: the one made before with that text, else a
    /// new one (remembered).
    fn intern(&mut self, text: &str) -> Name {
        match self.by_text.get(text) {
            Some(name) => name.clone(),
            None => {
                let name = Name::new(text);
                self.by_text.insert(name.clone());
                name
            }
        }
    }

    /// The name a deserializer hands over as `text`: the offered table
    /// entry's when `text` is that entry's text itself (the same bytes of
    /// the file, so no hashing), else by text.
    fn read(&mut self, text: &str) -> Name {
        let at = (text.as_ptr() as usize, text.len());
        if let Some((i, ptr, len)) = self.offered.take()
            && (ptr, len) == at
            && let Some(slot) = self.table.get_mut(i)
        {
            return slot.get_or_insert_with(|| Name::new(text)).clone();
        }
        self.intern(text)
    }
}

thread_local! {
    /// The names of the plan this thread is reading or designing, while it
    /// does ([`interned`]); `None` otherwise.
    static READING: RefCell<Option<Reading>> = const { RefCell::new(None) };
}

/// Runs `read` (the reading or design of one plan) with a fresh table of
/// names on this thread: every [`Name`] it deserializes or converts from
/// text with the text of one before is that name again, sharing its
/// allocation. The table is dropped when `read` returns (or unwinds), and
/// an enclosing read's table is put back, so nothing outlives the read and
/// reads on other threads have tables of their own.
pub(crate) fn interned<T>(read: impl FnOnce() -> T) -> T {
    interned_table(0, read)
}

/// [`interned`] for a compact plan whose string table has `entries`
/// entries: a name whose text is an entry the reader [`offer`]ed is found
/// by the entry's index instead of by hashing its text.
pub(crate) fn interned_table<T>(entries: usize, read: impl FnOnce() -> T) -> T {
    struct Restore(Option<Reading>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            // The thread's storage is gone only while the thread exits.
            let _ = READING.try_with(|r| *r.borrow_mut() = outer);
        }
    }
    let reading = Reading {
        table: vec![None; entries],
        ..Reading::default()
    };
    let outer = READING.with(|r| r.replace(Some(reading)));
    let _restore = Restore(outer);
    read()
}

/// Says that the string the compact reader hands to a visitor next is
/// entry `index` of the table, `text` itself: if a [`Name`] takes it, it
/// is that entry's one name. Outside [`interned_table`] it does nothing.
pub(crate) fn offer(index: usize, text: &str) {
    READING.with(|r| {
        if let Some(reading) = r.borrow_mut().as_mut() {
            reading.offered = Some((index, text.as_ptr() as usize, text.len()));
        }
    });
}

/// The name with `text`: within [`interned`] the one made before with that
/// text, else a new one.
fn intern(text: &str) -> Name {
    READING.with(|r| match r.borrow_mut().as_mut() {
        Some(reading) => reading.intern(text),
        None => Name::new(text),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};

    use proptest::prelude::*;

    use super::*;

    fn hash_of<T: Hash + ?Sized>(v: &T) -> u64 {
        let mut h = DefaultHasher::new();
        v.hash(&mut h);
        h.finish()
    }

    proptest! {
        /// A name is its text: equal, ordered and hashed as `str`, and
        /// written and read by serde (JSON and TOML) as a plain string.
        #[test]
        fn a_name_is_its_text(a in ".{0,12}", b in ".{0,12}") {
            let (na, nb) = (Name::from(a.as_str()), Name::from(b.clone()));
            prop_assert_eq!(na == nb, a == b);
            prop_assert_eq!(na.cmp(&nb), a.cmp(&b));
            prop_assert_eq!(na.partial_cmp(&nb), a.partial_cmp(&b));
            prop_assert_eq!(hash_of(&na), hash_of(a.as_str()));
            prop_assert!(na == *a.as_str() && na == a.as_str() && na == a);
            prop_assert!(*a.as_str() == na && a.as_str() == na && a == na);
            prop_assert_eq!(na.to_string(), a.clone());
            prop_assert_eq!(format!("{na:?}"), format!("{a:?}"));
            let json = serde_json::to_string(&na).unwrap();
            prop_assert_eq!(&json, &serde_json::to_string(&a).unwrap());
            prop_assert_eq!(serde_json::from_str::<Name>(&json).unwrap(), na.clone());
            let set: std::collections::HashSet<Name> = [na.clone()].into();
            prop_assert!(set.contains(a.as_str()));
            let back: Name = interned(|| serde_json::from_str(&json).unwrap());
            prop_assert_eq!(back, na);
        }
    }

    #[test]
    fn a_read_shares_one_name_per_text_and_keeps_nothing_after() {
        let json = r#"["sw1", "sw2", "sw1", "sw1"]"#;
        let names: Vec<Name> = interned(|| serde_json::from_str(json).unwrap());
        assert!(Name::ptr_eq(&names[0], &names[2]) && Name::ptr_eq(&names[0], &names[3]));
        assert!(!Name::ptr_eq(&names[0], &names[1]));
        // Outside a read nothing is shared, and a second read has its own
        // table.
        let plain: Vec<Name> = serde_json::from_str(json).unwrap();
        assert!(!Name::ptr_eq(&plain[0], &plain[2]));
        let again: Vec<Name> = interned(|| serde_json::from_str(json).unwrap());
        assert!(!Name::ptr_eq(&again[0], &names[0]));
        READING.with(|r| assert!(r.borrow().is_none()));
    }

    /// The compact reader's table path: an offered entry is one name for
    /// every use, and an offer the next string does not match (another
    /// string, or the same text elsewhere) never names it.
    #[test]
    fn an_offered_table_entry_is_one_name_and_never_another_text() {
        use serde::de::value::{BorrowedStrDeserializer, Error};
        let file = String::from("leaf01spine01");
        let (leaf, spine) = file.split_at(6);
        let read =
            |text: &str| Name::deserialize(BorrowedStrDeserializer::<Error>::new(text)).unwrap();
        let copy = String::from("leaf01");
        let (first, again, other, elsewhere) = interned_table(2, || {
            offer(0, leaf);
            let first = read(leaf);
            offer(0, leaf);
            let again = read(leaf);
            // Offered the leaf, handed the spine: the spine.
            offer(0, leaf);
            let other = read(spine);
            // The leaf's text from another place: equal, not by the table.
            offer(1, spine);
            let elsewhere = read(&copy);
            (first, again, other, elsewhere)
        });
        assert!(Name::ptr_eq(&first, &again));
        assert_eq!((first.as_str(), other.as_str()), ("leaf01", "spine01"));
        assert_eq!(elsewhere, "leaf01");
        assert!(!Name::ptr_eq(&first, &elsewhere));
        // Outside a read an offer is ignored.
        offer(0, leaf);
        assert_eq!(read(spine), "spine01");
    }

    #[test]
    fn a_nested_read_puts_the_outer_table_back() {
        let (first, inner, second) = interned(|| {
            let first: Name = serde_json::from_str(r#""a""#).unwrap();
            let inner: Name = interned(|| serde_json::from_str(r#""a""#).unwrap());
            let second: Name = serde_json::from_str(r#""a""#).unwrap();
            (first, inner, second)
        });
        assert!(Name::ptr_eq(&first, &second));
        assert!(!Name::ptr_eq(&first, &inner));
    }
}
