//! Lines of keys in a TOML input, from the parser's spans: a key is found however it is written (under a `[table]` header, as a dotted key or in an inline table).

use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// A TOML document, parsed with spans, that tells which line a key is on.
#[derive(Debug)]
pub(crate) struct KeyLines<'t> {
    text: &'t str,
    /// `None` when the text does not parse (then no key has a line).
    doc: Option<Spanned<DeTable<'t>>>,
}

impl<'t> KeyLines<'t> {
    /// Parses `text`.
    pub(crate) fn parse(text: &'t str) -> Self {
        KeyLines {
            text,
            doc: DeTable::parse(text).ok(),
        }
    }

    /// The 1-based line of the key at `path` (the tables that hold it,
    /// outermost first, then the key itself), or `None` when the document
    /// has no such key.
    pub(crate) fn line(&self, path: &[&str]) -> Option<usize> {
        let (last, tables) = path.split_last()?;
        let mut table = self.doc.as_ref()?.get_ref();
        for name in tables {
            match entry(table, name)?.1.get_ref() {
                DeValue::Table(t) => table = t,
                _ => return None,
            }
        }
        let (key, _) = entry(table, last)?;
        Some(planner::text::line_col(self.text, key.span().start).0)
    }
}

/// The entry of `table` named `key`, with its spans.
fn entry<'a, 't>(
    table: &'a DeTable<'t>,
    key: &str,
) -> Option<(
    &'a Spanned<std::borrow::Cow<'t, str>>,
    &'a Spanned<DeValue<'t>>,
)> {
    table.iter().find(|(k, _)| k.get_ref().as_ref() == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One case: the text, the key's path and the line it is on.
    fn check(text: &str, path: &[&str], want: Option<usize>) {
        assert_eq!(
            KeyLines::parse(text).line(path),
            want,
            "{path:?} in\n{text}"
        );
    }

    #[test]
    fn keys_are_found_however_they_are_written() {
        let text = "name = \"a\"\n\n[resources]\ngpu = \"x\"\nextra = { \"rdma/hca\" = 1 }\n\n[env]\n\"A.B\" = \"1\"\n";
        check(text, &["name"], Some(1));
        check(text, &["resources", "gpu"], Some(4));
        check(text, &["resources", "extra", "rdma/hca"], Some(5));
        check(text, &["env", "A.B"], Some(8));
        check(text, &["env", "missing"], None);
        check(text, &["name", "inner"], None);
        let dotted = "name = \"a\"\nresources.gpu = \"x\"\nresources.extra.\"rdma/hca\" = -1\n";
        check(dotted, &["resources", "gpu"], Some(2));
        check(dotted, &["resources", "extra", "rdma/hca"], Some(3));
        let inline = "name = \"a\"\nresources = { gpu = \"x\",\n  memory = \"1\" }\n";
        check(inline, &["resources", "memory"], Some(3));
        check("name = ", &["name"], None);
    }
}
