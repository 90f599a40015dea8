//! What routes keep off: a dead cable or a switch down for repair, as a user names it.
//!
//! - `link:SW1-SW2`: every cable between the switches SW1 and SW2 (in
//!   either order), in both directions. Switch names often contain `-`
//!   themselves (`sw01-u`), so the text after `link:` is split where both
//!   sides name switches of the plan ([`Avoid::resolve`]).
//! - `switch:SW`: the switch, the sub-nodes cabled to it and every route
//!   through it.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

use crate::error::{Error, Result};
use crate::plan::Plan;

/// One thing to keep off, as typed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Avoid {
    /// Every cable between two switches: the text after `link:`, two
    /// switch names joined by `-`.
    Link(String),
    /// A switch, by name.
    Switch(String),
}

/// An [`Avoid`] resolved against a plan: indices into `plan.switch_list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// The cables between two switches.
    Link(usize, usize),
    /// A switch.
    Switch(usize),
}

const FORMS: &str = "write link:SW1-SW2 (the cables between two switches) or switch:SW (a switch and its sub-nodes), with switch names as in the plan";

impl FromStr for Avoid {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: &str| Error::parameter("avoid", format!("`{s}` {why}; {FORMS}"));
        let Some((kind, rest)) = s.trim().split_once(':') else {
            return Err(bad("has no kind"));
        };
        let rest = rest.trim();
        match kind.trim().to_ascii_lowercase().as_str() {
            "switch" => {
                if rest.is_empty() {
                    return Err(bad("names no switch"));
                }
                Ok(Avoid::Switch(rest.to_string()))
            }
            "link" => {
                let splits = rest
                    .char_indices()
                    .filter(|&(i, c)| c == '-' && i > 0 && i + 1 < rest.len())
                    .count();
                if splits == 0 {
                    return Err(bad("does not name two switches joined by -"));
                }
                Ok(Avoid::Link(rest.to_string()))
            }
            other => Err(bad(&format!("has the kind `{other}`, not link or switch"))),
        }
    }
}

impl fmt::Display for Avoid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Avoid::Link(pair) => write!(f, "link:{pair}"),
            Avoid::Switch(name) => write!(f, "switch:{name}"),
        }
    }
}

impl Serialize for Avoid {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Avoid {
    /// The switches this names in `plan`. A link must split at one `-`
    /// into two switch names of the plan; whether a cable joins them is
    /// checked when routing ([`super::Network::avoiding`]).
    pub fn resolve(&self, plan: &Plan) -> Result<Target> {
        let index = plan.switch_index();
        let unknown = |name: &str| {
            // A physical switch split into virtual switches: name them, as
            // the plan's switch list does and a box failure fails them.
            let halves: Vec<&str> = (plan.boxes().into_iter())
                .filter(|(physical, _)| *physical == name)
                .flat_map(|(_, held)| held)
                .map(|i| plan.switch_list[i].name.as_str())
                .filter(|&n| n != name)
                .collect();
            if !halves.is_empty() {
                let what = match self {
                    Avoid::Switch(_) => format!(
                        "name them: switch:{} takes the whole box",
                        halves.join(",switch:")
                    ),
                    Avoid::Link(_) => "a cable ends on one of them: name that one".to_string(),
                };
                return Error::parameter(
                    "avoid",
                    format!(
                        "{name} in `{self}` is a physical switch of the plan {} split into the virtual switches {}; {what}",
                        plan.name,
                        halves.join(", "),
                    ),
                );
            }
            let example = plan
                .switch_list
                .first()
                .map_or(String::new(), |s| format!(" (such as {})", s.name));
            Error::parameter(
                "avoid",
                format!(
                    "switch {name} in `{self}` is not in the plan {}; use a name from its switch list{example}",
                    plan.name
                ),
            )
        };
        match self {
            Avoid::Switch(name) => index
                .get(name.as_str())
                .map(|&s| Target::Switch(s))
                .ok_or_else(|| unknown(name)),
            Avoid::Link(pair) => {
                let mut found = Vec::new();
                for (i, c) in pair.char_indices() {
                    if c != '-' {
                        continue;
                    }
                    let (a, b) = (&pair[..i], &pair[i + 1..]);
                    if let (Some(&x), Some(&y)) = (index.get(a), index.get(b)) {
                        found.push((x, y));
                    }
                }
                match found.as_slice() {
                    [(x, y)] if x == y => Err(Error::parameter(
                        "avoid",
                        format!(
                            "`{self}` names the switch {} twice; a link joins two switches",
                            plan.switch_list[*x].name
                        ),
                    )),
                    [(x, y)] => Ok(Target::Link(*x, *y)),
                    [] => {
                        // Name the side that is not a switch: the part after
                        // the longest prefix that is one, or else the whole.
                        let known_prefix = pair
                            .char_indices()
                            .filter(|&(i, c)| c == '-' && index.contains_key(&pair[..i]))
                            .map(|(i, _)| i)
                            .next_back();
                        let known_suffix = pair
                            .char_indices()
                            .filter(|&(i, c)| c == '-' && index.contains_key(&pair[i + 1..]))
                            .map(|(i, _)| i)
                            .next();
                        let missing = match (known_prefix, known_suffix) {
                            (Some(i), _) => &pair[i + 1..],
                            (None, Some(i)) => &pair[..i],
                            (None, None) => pair.as_str(),
                        };
                        Err(unknown(missing))
                    }
                    _ => Err(Error::parameter(
                        "avoid",
                        format!(
                            "`{self}` splits into switch names in {} ways; rename the switches or avoid each switch with switch:SW",
                            found.len()
                        ),
                    )),
                }
            }
        }
    }
}
