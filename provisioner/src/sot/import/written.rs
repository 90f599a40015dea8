//! The inventory TOML an import writes, and where each of its lines comes
//! from: the source of truth's object (name and URL) and field. The
//! planner checks the TOML and names lines of it; a user never sees that
//! text, so [`Written::refusal`] names the object and the field the line
//! was written from instead (issue #31).

use std::collections::BTreeMap;
use std::fmt;

use super::super::error::SotError;

/// The TOML written so far, with each line's origin.
#[derive(Debug, Default)]
pub(super) struct Written {
    /// The text.
    pub(super) text: String,
    /// `(object, field)` pairs; `lines[i]` indexes the origin of line
    /// `i + 1`.
    origins: Vec<(String, String)>,
    lines: Vec<usize>,
    /// A server's or switch's name in the inventory -> its device
    /// (`device node01 (<url>)`).
    devices: BTreeMap<String, String>,
}

impl Written {
    /// What is written next comes from `field` of `object` (`device sw01
    /// (<url>)`, `custom field topo_lanes`).
    pub(super) fn from(&mut self, object: &str, field: &str) -> &mut Self {
        if self
            .origins
            .last()
            .is_none_or(|(o, f)| o != object || f != field)
        {
            self.origins.push((object.to_string(), field.to_string()));
        }
        self
    }

    /// Server or switch `name` of the inventory is `device`.
    pub(super) fn device(&mut self, name: &str, device: &str) {
        self.devices.insert(name.to_string(), device.to_string());
    }

    /// The device a planner's object (`server node01 gpu gpu0`, `switch
    /// sw01 port 3`) is about.
    fn device_of(&self, object: &str) -> Option<&String> {
        let mut words = object.split_whitespace();
        match words.next()? {
            "server" | "switch" => self.devices.get(words.next()?),
            _ => None,
        }
    }

    /// The origin of 1-based line `line`.
    fn origin(&self, line: usize) -> Option<&(String, String)> {
        let i = *self.lines.get(line.checked_sub(1)?)?;
        self.origins.get(i)
    }

    /// The planner's refusal of the written TOML, each problem named by the
    /// object and field its line came from. A problem without a line names
    /// the device the planner's object is (`server node01 ...`); an error
    /// of another kind (none the planner's inventory check gives) is kept
    /// whole.
    pub(super) fn refusal(&self, e: planner::Error, source: &str) -> SotError {
        let what =
            format!("importing from {source}: the planner's checks refuse the inventory made of");
        let named = |line: Option<usize>, object: &str, said: String| match (
            line.and_then(|l| self.origin(l)),
            self.device_of(object),
        ) {
            (Some((object, field)), _) => format!("{object}: {field}: {said}"),
            (None, Some(device)) => format!("{device}: {said}"),
            (None, None) => said,
        };
        match e {
            planner::Error::Syntax { line, message, .. } => SotError::Refused {
                what,
                problems: vec![named(Some(line), "", message)],
            },
            planner::Error::Invalid { problems, .. } => SotError::Refused {
                what,
                problems: problems
                    .into_iter()
                    .map(|p| {
                        let said = if p.fix.is_empty() {
                            format!("{}: {}", p.object, p.message)
                        } else {
                            format!("{}: {}; {}", p.object, p.message, p.fix)
                        };
                        named(p.line, &p.object, said)
                    })
                    .collect(),
            },
            other => SotError::Inventory(Box::new(other)),
        }
    }
}

impl fmt::Write for Written {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let at = self.origins.len().saturating_sub(1);
        self.lines.extend(s.matches('\n').map(|_| at));
        self.text.push_str(s);
        Ok(())
    }
}
