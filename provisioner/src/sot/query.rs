//! The query strings and request values of the source of truth's REST
//! API: list filters cut into requests of bounded length, values
//! percent-encoded, related objects' ids as JSON. Import, the state read
//! before a push, the push's writes and its id read-back all build their
//! requests with these.

use std::fmt::Write as _;

use serde_json::Value;

/// The bytes one query string of [`query_chunks`] may take. NetBox
/// runs behind gunicorn (docs/installation/4a-gunicorn.md, v4.6.8), whose
/// `contrib/gunicorn.py` leaves `limit_request_line` at gunicorn's
/// default, 4,094 bytes for the whole request line (gunicorn's settings
/// reference, `limit_request_line`): a longer one is refused with 400
/// "Request Line is too large". 3,000 bytes of filters leave over 1,000
/// for the method, the base path, the endpoint, `limit=` and the other
/// parameters.
pub const MAX_QUERY: usize = 3000;

/// Query strings of `key=value&key=value...`, at most `per` values and
/// [`MAX_QUERY`] bytes each (a single longer value goes alone): a list
/// filtered by many names or ids goes in several requests of bounded
/// length.
pub(crate) fn query_chunks<'a>(
    values: impl Iterator<Item = &'a String>,
    key: &str,
    per: usize,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut count = 0;
    for v in values {
        let pair = format!("{key}={}", query_value(v));
        match out.last_mut() {
            Some(q) if count < per.max(1) && q.len() + 1 + pair.len() <= MAX_QUERY => {
                q.push('&');
                q.push_str(&pair);
                count += 1;
            }
            _ => {
                out.push(pair);
                count = 1;
            }
        }
    }
    out
}

/// A related object's id as JSON for a request body: NetBox's integer ids
/// as numbers, Nautobot's UUIDs as strings, none as `null`.
pub fn id_json(id: Option<String>) -> Value {
    match id {
        Some(s) => s.parse::<u64>().map_or(Value::String(s), Value::from),
        None => Value::Null,
    }
}

/// Percent-encodes a query value.
pub fn query_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{MAX_QUERY, query_chunks};

    #[test]
    fn query_chunks_hold_their_count_and_length_and_every_value_once() {
        let ids: Vec<String> = (0..2000u64).map(|i| (i * 7919).to_string()).collect();
        let chunks = query_chunks(ids.iter(), "id", usize::MAX);
        assert!(chunks.len() > 1, "{}", chunks.len());
        assert!(chunks.iter().all(|q| q.len() <= MAX_QUERY));
        let back: Vec<String> = (chunks.iter())
            .flat_map(|q| {
                q.split('&')
                    .map(|p| p.trim_start_matches("id=").to_string())
            })
            .collect();
        assert_eq!(back, ids);
        assert_eq!(query_chunks(ids.iter(), "id", 50).len(), 40);
        // A name longer than the limit goes alone, not dropped.
        let long = ["a".repeat(MAX_QUERY + 1), "b".to_string()];
        let c = query_chunks(long.iter(), "name", 50);
        assert_eq!(c.len(), 2);
        assert!(c[1] == "name=b", "{c:?}");
        assert!(query_chunks(std::iter::empty(), "name", 50).is_empty());
    }
}
