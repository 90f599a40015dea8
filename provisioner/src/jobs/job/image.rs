//! Container image references.

/// Why `s` is not a container image reference, by the grammar of
/// github.com/distribution/reference (v0.5.0, the grammar at the top of
/// `reference.go`, with the patterns of `regexp.go`):
///
/// ```text
/// reference        := name [ ":" tag ] [ "@" digest ]
/// name             := [domain '/'] remote-name       (at most 255 characters)
/// domain           := host [':' port-number]
/// host             := domain-name | '[' IPv6address ']'
/// domain-name      := domain-component ['.' domain-component]*
/// domain-component := /([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])/
/// remote-name      := path-component ['/' path-component]*
/// path-component   := /[a-z0-9]+/ [separator /[a-z0-9]+/]*
/// separator        := /[_.]|__|[-]+/
/// tag              := /[\w][\w.-]{0,127}/
/// digest           := /[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}/
/// ```
pub(crate) fn image_reference_problem(s: &str) -> Option<String> {
    use std::sync::LazyLock;
    static REFERENCE: LazyLock<regex::Regex> = LazyLock::new(|| {
        let alnum = "[a-z0-9]+";
        let path = format!("{alnum}(?:(?:[_.]|__|-+){alnum})*");
        let component = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
        let host = format!(r"(?:{component}(?:\.{component})*|\[[a-fA-F0-9:]+\])");
        let domain = format!("{host}(?::[0-9]+)?");
        let name = format!("(?:{domain}/)?{path}(?:/{path})*");
        let tag = r"[\w][\w.-]{0,127}";
        let digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
        regex::Regex::new(&format!("^({name})(?::{tag})?(?:@{digest})?$"))
            .unwrap_or_else(|e| unreachable!("the reference grammar is a valid regex: {e}"))
    });
    if s.is_empty() {
        return Some("it is empty".to_string());
    }
    let Some(m) = REFERENCE.captures(s) else {
        let name = s.split(['@']).next().unwrap_or(s);
        let path = name.rsplit_once('/').map_or(name, |(_, p)| p);
        let why = if s.chars().any(char::is_whitespace) {
            "it holds white space"
        } else if path
            .split(':')
            .next()
            .unwrap_or(path)
            .chars()
            .any(|c| c.is_ascii_uppercase())
            || name
                .split('/')
                .skip(1)
                .any(|c| c.chars().any(|c| c.is_ascii_uppercase()))
        {
            "a repository name is lower case only (the registry may have capitals)"
        } else {
            "it does not follow the reference grammar"
        };
        return Some(why.to_string());
    };
    let name = m.get(1).map_or("", |n| n.as_str());
    (name.len() > 255).then(|| format!("its name has {} characters, above 255", name.len()))
}
