//! Kubernetes name rules, the one home for both crates: DNS-1123 labels and subdomains, label keys (qualified names) and values, and a name made into a subdomain.
//!
//! The rules are the API server's (`k8s.io/apimachinery` validation): a
//! DNS-1123 label is 1 to 63 lower-case letters, digits or `-`, starting
//! and ending with a letter or digit; a subdomain is at most 253 characters
//! of such labels joined with `.`; a label value is empty or at most 63
//! letters, digits, `.`, `_` or `-`, starting and ending with a letter or
//! digit; a label key is a non-empty value-like name with an optional
//! subdomain prefix and `/`. Callers that want their own wording match on
//! [`LabelFault`] and [`SubdomainFault`]; the `*_problem` functions give
//! one sentence each.

/// Longest DNS-1123 label, label value and label-key name part.
pub const MAX_LABEL: usize = 63;

/// Longest DNS-1123 subdomain (object names, label-key prefixes).
pub const MAX_SUBDOMAIN: usize = 253;

/// What breaks a DNS-1123 label, the first rule it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelFault {
    /// It is empty.
    Empty,
    /// It has more than [`MAX_LABEL`] characters.
    TooLong,
    /// It has this character, which is not a lower-case letter, digit or `-`.
    Char(char),
    /// It starts or ends with `-`.
    Hyphen,
}

/// What breaks a DNS-1123 subdomain, the first rule it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubdomainFault<'a> {
    /// It is empty or has more than [`MAX_SUBDOMAIN`] characters.
    Length,
    /// This dot-separated part is not a DNS-1123 label.
    Part(&'a str, LabelFault),
}

/// The first rule of a DNS-1123 label that `s` fails, or `None` when it
/// is one.
pub fn dns_label_fault(s: &str) -> Option<LabelFault> {
    if s.is_empty() {
        return Some(LabelFault::Empty);
    }
    if s.len() > MAX_LABEL {
        return Some(LabelFault::TooLong);
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Some(LabelFault::Char(c));
    }
    if s.starts_with('-') || s.ends_with('-') {
        return Some(LabelFault::Hyphen);
    }
    None
}

/// The first rule of a DNS-1123 subdomain that `s` fails, or `None` when
/// it is one.
pub fn dns_subdomain_fault(s: &str) -> Option<SubdomainFault<'_>> {
    if s.is_empty() || s.len() > MAX_SUBDOMAIN {
        return Some(SubdomainFault::Length);
    }
    s.split('.')
        .find_map(|part| dns_label_fault(part).map(|f| SubdomainFault::Part(part, f)))
}

/// Why `s` is not a DNS-1123 label (namespaces, service names, job
/// names), or `None` when it is one.
pub fn dns_label_problem(s: &str) -> Option<String> {
    dns_label_fault(s).map(|_| {
        "must be 1 to 63 lower-case letters, digits or '-', starting and ending with a letter or digit"
            .to_string()
    })
}

/// Why `s` is not a DNS-1123 subdomain (object names, label-key
/// prefixes), or `None` when it is one.
pub fn dns_subdomain_problem(s: &str) -> Option<String> {
    match dns_subdomain_fault(s)? {
        SubdomainFault::Length => Some(format!(
            "must be 1 to {MAX_SUBDOMAIN} characters (it has {})",
            s.len()
        )),
        SubdomainFault::Part(part, _) => Some(format!(
            "has a part {part:?} that {}",
            dns_label_problem(part).unwrap_or_default()
        )),
    }
}

/// Why `value` is not a valid label value, or `None` when the API server
/// accepts it (the empty value is valid).
pub fn label_value_problem(value: &str) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    if value.len() > MAX_LABEL {
        return Some(format!(
            "is {} characters, a label value has at most {MAX_LABEL}",
            value.len()
        ));
    }
    if let Some(c) = value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Some(format!(
            "has `{c}`, a label value has only letters, digits, `.`, `_` and `-`"
        ));
    }
    let ends = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !ends(value.chars().next()) || !ends(value.chars().last()) {
        return Some("must begin and end with a letter or digit".into());
    }
    None
}

/// Why `s` is not a qualified name (`[prefix/]name`, as label and
/// annotation keys are), or `None` when it is one.
pub fn qualified_name_problem(s: &str) -> Option<String> {
    let (prefix, name) = match s.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    let mut why = String::new();
    if let Some(w) = prefix.and_then(dns_subdomain_problem) {
        why.push_str("has a prefix that ");
        why.push_str(&w);
    }
    if name.is_empty() || label_value_problem(name).is_some() {
        if !why.is_empty() {
            why.push_str("; and ");
        }
        why.push_str(
            "has a name part that must be 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
        );
    }
    (!why.is_empty()).then_some(why)
}

/// True when `key` is a valid label key (a qualified name).
pub fn is_valid_key(key: &str) -> bool {
    qualified_name_problem(key).is_none()
}

/// A name made into a DNS subdomain (Kubernetes object names): lowercase,
/// other characters than letters, digits, `-` and `.` made `-`, and each
/// dot-separated part trimmed of leading and trailing `-`.
pub fn dns_name(name: &str) -> String {
    let lower: String = name
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    lower
        .split('.')
        .map(|p| p.trim_matches('-'))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_labels() {
        for ok in ["a", "a-b", "0", "default", &"x".repeat(63)] {
            assert_eq!(dns_label_fault(ok), None, "{ok}");
            assert_eq!(dns_label_problem(ok), None, "{ok}");
        }
        for (bad, fault) in [
            ("", LabelFault::Empty),
            (&"x".repeat(64) as &str, LabelFault::TooLong),
            ("AllReduce", LabelFault::Char('A')),
            ("a.b", LabelFault::Char('.')),
            ("a_b", LabelFault::Char('_')),
            ("-a", LabelFault::Hyphen),
            ("a-", LabelFault::Hyphen),
        ] {
            assert_eq!(dns_label_fault(bad), Some(fault), "{bad}");
            assert!(
                dns_label_problem(bad)
                    .unwrap()
                    .starts_with("must be 1 to 63")
            );
        }
    }

    #[test]
    fn dns_subdomains() {
        for ok in ["a.b-c.d", "node01", "a.".repeat(126).trim_end_matches('.')] {
            assert_eq!(dns_subdomain_problem(ok), None, "{ok}");
        }
        assert_eq!(dns_subdomain_fault(""), Some(SubdomainFault::Length));
        assert_eq!(
            dns_subdomain_fault(&"a.".repeat(127)),
            Some(SubdomainFault::Length)
        );
        assert_eq!(
            dns_subdomain_fault("a..b"),
            Some(SubdomainFault::Part("", LabelFault::Empty))
        );
        assert_eq!(
            dns_subdomain_fault("ok.-a"),
            Some(SubdomainFault::Part("-a", LabelFault::Hyphen))
        );
        assert_eq!(
            dns_subdomain_problem("x.Y").unwrap(),
            "has a part \"Y\" that must be 1 to 63 lower-case letters, digits or '-', starting and ending with a letter or digit"
        );
        assert_eq!(
            dns_subdomain_problem("").unwrap(),
            "must be 1 to 253 characters (it has 0)"
        );
    }

    #[test]
    fn label_values() {
        for ok in ["", "a", "node01", "sw01-u", "A_b.c-9", &"x".repeat(63)] {
            assert_eq!(label_value_problem(ok), None, "{ok}");
        }
        for bad in ["-a", "a.", "a b", "a/b", "ü", &"x".repeat(64)] {
            assert!(label_value_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn label_keys() {
        for ok in ["topology.eflops.io/sn0.switch", "server", "nvidia.com/gpu"] {
            assert_eq!(qualified_name_problem(ok), None, "{ok}");
            assert!(is_valid_key(ok), "{ok}");
        }
        for bad in ["Bad_Prefix/server", "a.io/", "/x", "a//b", "a/b/c", "-x"] {
            assert!(!is_valid_key(bad), "{bad}");
        }
        assert_eq!(
            qualified_name_problem("A/").unwrap(),
            "has a prefix that has a part \"A\" that must be 1 to 63 lower-case letters, digits or '-', starting and ending with a letter or digit; and has a name part that must be 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
        );
    }

    #[test]
    fn dns_names() {
        assert_eq!(dns_name("EFLOPS 4x16"), "eflops-4x16");
        assert_eq!(dns_name("a.-b-.c"), "a.b.c");
        assert_eq!(dns_name("sw01-l.sw01-u"), "sw01-l.sw01-u");
        assert_eq!(dns_subdomain_problem(&dns_name("Rack 7.GPU_node")), None);
    }
}
