//! The import-loop test: no top-level module of `planner/src` imports one that imports it back.
//!
//! A small scanner reads every non-test source file of the library (not
//! `bin/`, not `tests.rs` or `*_tests.rs`, not `#[cfg(test)]` items), takes
//! the top-level modules each one names (`crate::x`, `use crate::{x, ..}`,
//! `super::super::x`, and names `lib.rs` re-exports such as
//! `crate::CheckedPlan`), and checks that the graph of top-level modules
//! has no cycle. Its failure message names a cycle with the file and line
//! of every edge, and prints the layers bottom first: the dependency
//! picture of docs/architecture.md.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A token of Rust source with comments, strings and char literals removed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Token {
    text: String,
    line: usize,
}

/// Splits `src` into identifiers, `::` and single punctuation characters,
/// dropping comments (nested block comments too), string, byte-string, raw
/// string and char literals, so that a path in a doc comment or a message
/// is not taken for an import.
fn tokens(src: &str) -> Vec<Token> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let newlines = |s: &[u8]| s.iter().filter(|&&c| c == b'\n').count();
    while i < b.len() {
        let c = b[i];
        let rest = &b[i..];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if rest.starts_with(b"/*") {
            let (start, mut depth) = (i, 0usize);
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            line += newlines(&b[start..i]);
        } else if let Some(end) = raw_string_end(b, i) {
            line += newlines(&b[i..end]);
            i = end;
        } else if c == b'"' || (c == b'b' && b.get(i + 1) == Some(&b'"')) {
            let start = i;
            i += if c == b'b' { 2 } else { 1 };
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            line += newlines(&b[start..i.min(b.len())]);
        } else if c == b'\'' {
            // A char literal ('a', '\n', '\u{1F600}', b'x' is caught by the
            // identifier branch first) or a lifetime ('a, 'static).
            if b.get(i + 1) == Some(&b'\\') {
                // Quote, backslash and the escaped character, then up to
                // the closing quote ('\u{..}').
                i += 3;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            } else {
                let ch_len = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                if b.get(i + 1 + ch_len) == Some(&b'\'') {
                    i += 2 + ch_len;
                } else {
                    i += 1;
                }
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            // b'x' byte literal: the `b` is consumed as an identifier, the
            // literal by the char branch on the next round.
            out.push(Token {
                text: src[start..i].to_string(),
                line,
            });
        } else if rest.starts_with(b"::") {
            out.push(Token {
                text: "::".to_string(),
                line,
            });
            i += 2;
        } else {
            let len = src[i..].chars().next().map_or(1, char::len_utf8);
            out.push(Token {
                text: src[i..i + len].to_string(),
                line,
            });
            i += len;
        }
    }
    out
}

/// The end of a raw string literal (`r"..."`, `r#"..."#`, `br#"..."#`)
/// starting at `i`, if one starts there.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    j += 1;
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    while j < b.len() {
        if b[j..].starts_with(&close) {
            return Some(j + close.len());
        }
        j += 1;
    }
    Some(b.len())
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
}

/// The tokens without test-only code: `#[cfg(test)]` items (a `mod tests
/// { .. }` block, a function, a `use`) are dropped, and a file starting
/// with `#![cfg(test)]` is dropped whole.
fn without_test_code(t: Vec<Token>) -> Vec<Token> {
    let texts: Vec<&str> = t.iter().map(|x| x.text.as_str()).collect();
    let cfg_test = |k: usize, inner: bool| {
        let want: &[&str] = if inner {
            &["#", "!", "[", "cfg", "(", "test", ")", "]"]
        } else {
            &["#", "[", "cfg", "(", "test", ")", "]"]
        };
        texts.get(k..k + want.len()) == Some(want)
    };
    if (0..texts.len()).any(|k| cfg_test(k, true)) {
        return Vec::new();
    }
    let mut keep = vec![true; t.len()];
    let mut k = 0;
    while k < t.len() {
        if !cfg_test(k, false) {
            k += 1;
            continue;
        }
        let start = k;
        k += 7;
        // The item ends at its first `;` outside brackets, or with the
        // block its first `{` outside brackets opens.
        let mut depth = 0i64;
        while k < t.len() {
            match texts[k] {
                "(" | "[" => depth += 1,
                ")" | "]" => depth -= 1,
                ";" if depth == 0 => break,
                "{" if depth == 0 => {
                    let mut braces = 0i64;
                    while k < t.len() {
                        match texts[k] {
                            "{" => braces += 1,
                            "}" => braces -= 1,
                            _ => {}
                        }
                        if braces == 0 {
                            break;
                        }
                        k += 1;
                    }
                    break;
                }
                _ => {}
            }
            k += 1;
        }
        for x in keep.iter_mut().take((k + 1).min(t.len())).skip(start) {
            *x = false;
        }
        k += 1;
    }
    t.into_iter()
        .zip(keep)
        .filter_map(|(x, k)| k.then_some(x))
        .collect()
}

/// The index of the first token of every item of the use tree whose `{`
/// is at `open`: `{a::b, c, d::{e, f}}` gives those of `a`, `c` and `d`.
fn group_items(t: &[Token], open: usize) -> Vec<usize> {
    let mut items = Vec::new();
    let (mut depth, mut at_start) = (0i64, true);
    for (k, tok) in t.iter().enumerate().skip(open) {
        match tok.text.as_str() {
            "{" => {
                depth += 1;
                at_start = depth == 1;
            }
            "}" => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            "," if depth == 1 => at_start = true,
            s if depth == 1 && at_start && is_ident(s) => {
                items.push(k);
                at_start = false;
            }
            _ => at_start = false,
        }
    }
    items
}

/// Follows the path starting at token `k`, whose segments so far are
/// `path` (a prefix of `parent`), and pushes the segment that names a
/// child of `parent`, once per branch of a use tree.
fn walk(
    t: &[Token],
    mut k: usize,
    mut path: Vec<String>,
    parent: &[String],
    out: &mut Vec<(String, usize)>,
) {
    loop {
        match t.get(k) {
            Some(x) if x.text == "{" => {
                for item in group_items(t, k) {
                    walk(t, item, path.clone(), parent, out);
                }
                return;
            }
            Some(x) if is_ident(&x.text) => {
                if path.len() == parent.len() {
                    out.push((x.text.clone(), x.line));
                    return;
                }
                if x.text != parent[path.len()] {
                    return;
                }
                path.push(x.text.clone());
                if t.get(k + 1).is_none_or(|n| n.text != "::") {
                    return;
                }
                k += 2;
            }
            _ => return,
        }
    }
}

/// The names under module `parent` (`[]` for the crate root, `["push"]`)
/// that the file of `module` refers to, each with its line: paths written
/// from the crate root (`crate::x`, `crate::{x, y}`, `crate::push::x`) or
/// climbing with `super` to `parent` or above (`super::..::x`), one name
/// per branch of a use tree.
fn child_names(t: &[Token], module: &[String], parent: &[String]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for k in 0..t.len() {
        let prev = k.checked_sub(1).map(|p| t[p].text.as_str());
        if matches!(prev, Some("::") | Some("$")) {
            continue;
        }
        let (base, start) = if t[k].text == "crate" && t.get(k + 1).is_some_and(|x| x.text == "::")
        {
            (&module[..0], k + 2)
        } else if t[k].text == "super" {
            let mut ups = 0;
            let mut j = k;
            while t.get(j).is_some_and(|x| x.text == "super")
                && t.get(j + 1).is_some_and(|x| x.text == "::")
            {
                ups += 1;
                j += 2;
            }
            if ups == 0 || ups > module.len() {
                continue;
            }
            (&module[..module.len() - ups], j)
        } else {
            continue;
        };
        if base.len() <= parent.len() && parent.starts_with(base) {
            walk(t, start, base.to_vec(), parent, &mut out);
        }
    }
    out
}

/// The crate-root names a file refers to, each with its line: `crate::x`,
/// `crate::{x, y}`, and `super::..::x` where the `super`s climb from
/// `module` (the file's module path, `["validate", "records"]`) to the
/// crate root.
fn root_names(t: &[Token], module: &[String]) -> Vec<(String, usize)> {
    child_names(t, module, &[])
}

/// What `lib.rs` declares: its modules and the names it re-exports, each
/// mapped to the module it comes from.
#[derive(Debug, Default)]
struct Root {
    modules: BTreeSet<String>,
    reexports: BTreeMap<String, String>,
}

fn scan_lib(src: &str) -> Root {
    let t = without_test_code(tokens(src));
    let mut root = Root::default();
    for k in 0..t.len() {
        if t[k].text == "mod"
            && let (Some(name), Some(end)) = (t.get(k + 1), t.get(k + 2))
            && end.text == ";"
        {
            root.modules.insert(name.text.clone());
        }
        if t[k].text == "use" && t.get(k + 1).is_some_and(|x| is_ident(&x.text)) {
            let module = t[k + 1].text.clone();
            let end = (k..t.len()).find(|&j| t[j].text == ";").unwrap_or(t.len());
            for j in k + 2..end {
                let next = t.get(j + 1).map(|x| x.text.as_str());
                if is_ident(&t[j].text)
                    && t[j].text != "as"
                    && t[j].text != "self"
                    && matches!(next, Some(",") | Some("}") | Some(";"))
                {
                    root.reexports.insert(t[j].text.clone(), module.clone());
                }
            }
        }
    }
    root
}

/// The module path of a source file relative to `src`:
/// `validate/mod.rs` is `["validate"]`, `validate/records.rs`
/// `["validate", "records"]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" {
        parts.push(stem.to_string());
    }
    parts
}

/// A file of the library proper: not a binary's (`bin/`), not a test
/// file ([`is_test_file`]) and not under a `tests/` folder.
fn is_library_file(rel: &Path) -> bool {
    !is_test_file(rel)
        && !rel
            .components()
            .any(|c| c.as_os_str() == "tests" || c.as_os_str() == "bin")
}

fn is_test_file(rel: &Path) -> bool {
    let name = rel
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    name == "tests.rs" || name.ends_with("_tests.rs")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The import graph of the top-level modules of a crate: for each module,
/// the modules it names, with the first file and line that does.
#[derive(Debug, Default)]
struct Graph {
    nodes: BTreeSet<String>,
    edges: BTreeMap<String, BTreeMap<String, String>>,
    /// Things that are wrong with the crate's layout as the scanner sees it.
    problems: Vec<String>,
}

/// Builds the graph from `(path relative to src, source)` pairs; `lib.rs`
/// must be among them.
fn graph(files: &[(PathBuf, String)]) -> Graph {
    graph_under(files, &[])
}

/// The file that declares the children of module `parent`: `lib.rs`,
/// `push/mod.rs` or `push.rs`.
fn declaring_file(parent: &[String]) -> Vec<PathBuf> {
    if parent.is_empty() {
        return vec![PathBuf::from("lib.rs")];
    }
    let dir: PathBuf = parent.iter().collect();
    vec![dir.join("mod.rs"), dir.with_extension("rs")]
}

/// The import graph of the children of module `parent` (`[]`: the
/// top-level modules of the crate, `["push"]`: the files of `push/`): for
/// each child, the children it names, with the first file and line that
/// does. Below the crate root, a name that is no child (an item of
/// `push/mod.rs` itself, the module's interface) is no edge.
fn graph_under(files: &[(PathBuf, String)], parent: &[String]) -> Graph {
    let declaring = declaring_file(parent);
    let mut lib = files
        .iter()
        .find(|(p, _)| declaring.contains(p))
        .map(|(_, s)| scan_lib(s))
        .unwrap_or_else(|| panic!("no {}", declaring[0].display()));
    // `use std::io;` or `use super::x::Y;` in a module's own file brings
    // in no child.
    let children = lib.modules.clone();
    lib.reexports.retain(|_, m| children.contains(m));
    let mut g = Graph {
        nodes: lib.modules.clone(),
        ..Graph::default()
    };
    let mut seen = BTreeSet::new();
    for (rel, src) in files {
        if declaring.contains(rel) || rel.starts_with("bin") || is_test_file(rel) {
            continue;
        }
        let module = module_path(rel);
        if module.len() <= parent.len() || !module.starts_with(parent) {
            continue;
        }
        let top = module[parent.len()].clone();
        if !lib.modules.contains(&top) {
            g.problems.push(format!(
                "{} is not declared in {} (`mod {top};`): a module the graph cannot see",
                rel.display(),
                declaring[0].display()
            ));
            continue;
        }
        seen.insert(top.clone());
        let t = without_test_code(tokens(src));
        for (name, line) in child_names(&t, &module, parent) {
            let target = if lib.modules.contains(&name) {
                name
            } else if let Some(m) = lib.reexports.get(&name) {
                m.clone()
            } else if parent.is_empty() {
                g.problems.push(format!(
                    "{}:{line}: crate::{name} is neither a module of lib.rs nor one of its re-exports",
                    rel.display()
                ));
                continue;
            } else {
                continue;
            };
            if target != top {
                g.edges
                    .entry(top.clone())
                    .or_default()
                    .entry(target)
                    .or_insert_with(|| format!("{}:{line}", rel.display()));
            }
        }
    }
    for m in lib.modules.difference(&seen) {
        let dir: PathBuf = parent.iter().collect();
        g.problems.push(format!(
            "{} declares `mod {m}` but no source file of it was read ({} or {})",
            declaring[0].display(),
            Path::new("src")
                .join(&dir)
                .join(format!("{m}.rs"))
                .display(),
            Path::new("src").join(&dir).join(m).join("mod.rs").display()
        ));
    }
    g
}

impl Graph {
    fn deps(&self, n: &str) -> impl Iterator<Item = &String> {
        self.edges.get(n).into_iter().flat_map(|m| m.keys())
    }

    /// The strongly connected components (Tarjan), each sorted.
    fn components(&self) -> Vec<Vec<String>> {
        struct State<'g> {
            g: &'g Graph,
            index: BTreeMap<&'g str, usize>,
            low: BTreeMap<&'g str, usize>,
            stack: Vec<&'g str>,
            on_stack: BTreeSet<&'g str>,
            out: Vec<Vec<String>>,
        }
        fn visit<'g>(s: &mut State<'g>, v: &'g str) {
            let i = s.index.len();
            s.index.insert(v, i);
            s.low.insert(v, i);
            s.stack.push(v);
            s.on_stack.insert(v);
            for w in s.g.deps(v) {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if s.on_stack.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if s.low[v] == s.index[v] {
                let mut c = Vec::new();
                while let Some(w) = s.stack.pop() {
                    s.on_stack.remove(w);
                    c.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                c.sort();
                s.out.push(c);
            }
        }
        let mut s = State {
            g: self,
            index: BTreeMap::new(),
            low: BTreeMap::new(),
            stack: Vec::new(),
            on_stack: BTreeSet::new(),
            out: Vec::new(),
        };
        for n in &self.nodes {
            if !s.index.contains_key(n.as_str()) {
                visit(&mut s, n);
            }
        }
        s.out
    }

    /// One shortest cycle through the first module of every component of
    /// two or more modules, as `a -> b -> a` with the file and line of
    /// every edge.
    fn cycles(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in self.components().into_iter().filter(|c| c.len() > 1) {
            let inside: BTreeSet<&str> = c.iter().map(String::as_str).collect();
            let start = c[0].as_str();
            // Breadth first from start back to start, inside the component.
            let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
            let mut queue = std::collections::VecDeque::from([start]);
            let mut last = None;
            'search: while let Some(v) = queue.pop_front() {
                for w in self.deps(v) {
                    let w = w.as_str();
                    if w == start {
                        last = Some(v);
                        break 'search;
                    }
                    if inside.contains(w) && !parent.contains_key(w) {
                        parent.insert(w, v);
                        queue.push_back(w);
                    }
                }
            }
            let mut back = Vec::new();
            let mut v = last.expect("a component of two or more modules has a cycle");
            while v != start {
                back.push(v);
                v = parent[v];
            }
            let mut path = vec![start];
            path.extend(back.into_iter().rev());
            path.push(start);
            let steps: Vec<String> = path
                .windows(2)
                .map(|w| format!("{} -> {} ({})", w[0], w[1], self.edges[w[0]][w[1]]))
                .collect();
            out.push(format!(
                "{}\n    {}",
                path.join(" -> "),
                steps.join("\n    ")
            ));
        }
        out
    }

    /// The modules in layers, bottom first: a module's layer is one above
    /// the highest layer it imports; the modules of a cycle share a layer,
    /// written `{a b}`.
    fn layers(&self) -> Vec<Vec<String>> {
        let comps = self.components();
        let comp_of: BTreeMap<&str, usize> = comps
            .iter()
            .enumerate()
            .flat_map(|(i, c)| c.iter().map(move |n| (n.as_str(), i)))
            .collect();
        // Tarjan emits a component after every component it reaches, so
        // one pass in emission order sees every dependency's layer first.
        let mut layer = vec![0usize; comps.len()];
        for (i, c) in comps.iter().enumerate() {
            for n in c {
                for d in self.deps(n) {
                    let j = comp_of[d.as_str()];
                    if j != i {
                        layer[i] = layer[i].max(layer[j] + 1);
                    }
                }
            }
        }
        let mut out: Vec<Vec<String>> = vec![Vec::new(); layer.iter().max().map_or(0, |m| m + 1)];
        for (i, c) in comps.iter().enumerate() {
            out[layer[i]].push(if c.len() == 1 {
                c[0].clone()
            } else {
                format!("{{{}}}", c.join(" "))
            });
        }
        for l in &mut out {
            l.sort();
        }
        out
    }

    fn picture(&self) -> String {
        self.layers()
            .iter()
            .enumerate()
            .map(|(i, l)| format!("  {i}: {}", l.join(" ")))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Every `.rs` file under `src` with its path relative to `src`.
fn crate_src(src: &Path) -> Vec<(PathBuf, String)> {
    let mut paths = Vec::new();
    rust_files(src, &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.strip_prefix(src).expect("under src").to_path_buf(), text)
        })
        .collect()
}

fn planner_src() -> Vec<(PathBuf, String)> {
    crate_src(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn every_module_of_lib_rs_is_a_node() {
    let g = graph(&planner_src());
    assert!(g.problems.is_empty(), "{}", g.problems.join("\n"));
    assert!(
        g.nodes.contains("fabric") && g.nodes.contains("plan"),
        "{:?}",
        g.nodes
    );
}

/// Fails naming every import loop of `g` (the modules of `name`) with its
/// files and lines; prints the layers.
fn assert_no_loop(g: &Graph, name: &str) {
    let cycles = g.cycles();
    assert!(
        cycles.is_empty(),
        "import loops among the modules of {name}:\n{}\nlayers, bottom first:\n{}",
        cycles.join("\n"),
        g.picture()
    );
    println!("{name}, layers bottom first:\n{}", g.picture());
}

#[test]
fn planner_src_has_no_import_loop() {
    assert_no_loop(&graph(&planner_src()), "planner/src");
}

/// The bottom of the core stays loop-free whatever happens above it: the
/// cycle left on this branch (render, checked, validate) is not among
/// these modules or what they import.
#[test]
fn the_core_below_validate_has_no_import_loop() {
    let g = graph(&planner_src());
    let core = [
        "fabric",
        "error",
        "names",
        "text",
        "limits",
        "qos",
        "inventory",
        "plan",
        "pci",
    ];
    let mut reach: BTreeSet<&str> = BTreeSet::new();
    let mut todo: Vec<&str> = core.to_vec();
    while let Some(n) = todo.pop() {
        if reach.insert(n) {
            todo.extend(g.deps(n).map(String::as_str));
        }
    }
    for c in g.components().iter().filter(|c| c.len() > 1) {
        assert!(
            !c.iter().any(|n| reach.contains(n.as_str())),
            "the core imports a loop: {}\nlayers, bottom first:\n{}",
            g.cycles().join("\n"),
            g.picture()
        );
    }
    assert!(
        g.deps("fabric").next().is_none(),
        "fabric imports {:?}",
        g.edges["fabric"]
    );
    // The bus id rule is read by the inventory, the plan check and the
    // NCCL topology writer: it stands on the name rule's escaping alone.
    assert!(
        g.deps("pci").all(|d| d == "names"),
        "pci imports {:?}",
        g.edges["pci"]
    );
    for (m, forbidden) in [
        ("qos", ["inventory", "plan"]),
        ("inventory", ["plan", "design"]),
    ] {
        for f in forbidden {
            assert!(
                g.deps(m).all(|d| d != f),
                "{m} imports {f} ({})",
                g.edges[m][f]
            );
        }
    }
}

/// `estimate/` cut along its seams (issue #34): no import loop among its
/// modules, nor among the files of `context/` (one concept a file),
/// `schedules/` (one algorithm family a file) and `sim/` (the event loop
/// apart from its parts); and each holds its order: schedules below the
/// simulators, the simulators below the context, the context below the
/// sweeps and the report; inside `context/`, the plan's geometry and the
/// route storage below the algorithms (`collectives/`), and those below
/// the closed forms', schedules' and runs' dispatch; inside
/// `schedules/`, the builder below every family; inside `sim/`, the loop
/// and the lone pass above the events, the water-filling and the
/// dependencies. Test modules (`tests/`, `tests.rs`) are left out.
#[test]
fn estimate_is_cut_along_its_seams_in_order() {
    let files: Vec<(PathBuf, String)> = planner_src()
        .into_iter()
        .filter(|(p, _)| !p.iter().any(|c| c == "tests"))
        .collect();
    // (module, its files that must be there, (file, files above it)).
    type Cut<'a> = (&'a [&'a str], &'a [&'a str], &'a [(&'a str, &'a [&'a str])]);
    let cases: [Cut<'_>; 4] = [
        (
            &["estimate"],
            &[
                "context",
                "schedules",
                "sim",
                "fast",
                "packet",
                "sweep",
                "report",
            ],
            &[
                (
                    "schedules",
                    &["sim", "fast", "packet", "context", "sweep", "report"],
                ),
                ("sim", &["fast", "packet", "context", "sweep", "report"]),
                ("fast", &["packet", "context", "sweep", "report"]),
                ("packet", &["context", "sweep", "report"]),
                ("context", &["sweep", "report"]),
                ("sweep", &["report"]),
            ],
        ),
        (
            &["estimate", "context"],
            &[
                "geometry",
                "collectives",
                "closed_form",
                "schedule",
                "run",
                "routes",
                "sinks",
            ],
            &[
                (
                    "geometry",
                    &[
                        "collectives",
                        "closed_form",
                        "schedule",
                        "run",
                        "routes",
                        "sinks",
                    ],
                ),
                (
                    "routes",
                    &["collectives", "closed_form", "schedule", "run", "sinks"],
                ),
                ("sinks", &["collectives", "closed_form", "schedule", "run"]),
                ("collectives", &["closed_form", "schedule", "run"]),
                ("closed_form", &["schedule", "run"]),
                ("schedule", &["run"]),
            ],
        ),
        (
            &["estimate", "schedules"],
            &["builder", "ring_hd", "trees", "nccl", "sparse", "baselines"],
            &[
                (
                    "builder",
                    &["ring_hd", "trees", "nccl", "sparse", "baselines"],
                ),
                ("ring_hd", &["trees", "nccl", "sparse", "baselines"]),
                ("trees", &["ring_hd", "nccl", "sparse", "baselines"]),
                ("sparse", &["ring_hd", "trees", "nccl", "baselines"]),
                ("baselines", &["ring_hd", "trees", "nccl", "sparse"]),
            ],
        ),
        (
            &["estimate", "sim"],
            &["event_loop", "events", "fill", "lone", "deps"],
            &[
                ("events", &["event_loop", "lone", "fill", "deps"]),
                ("fill", &["event_loop", "lone", "events", "deps"]),
                ("deps", &["event_loop", "lone", "events", "fill"]),
                ("lone", &["event_loop"]),
            ],
        ),
    ];
    for (parent, must_have, below) in cases {
        let parent: Vec<String> = parent.iter().map(|p| p.to_string()).collect();
        let name = format!("planner/src/{}", parent.join("/"));
        let g = graph_under(&files, &parent);
        assert!(g.problems.is_empty(), "{name}:\n{}", g.problems.join("\n"));
        for m in must_have {
            assert!(
                g.nodes.contains(*m),
                "{name}: no module {m} in {:?}",
                g.nodes
            );
        }
        assert_no_loop(&g, &name);
        for (m, above) in below {
            for a in *above {
                assert!(
                    g.deps(m).all(|d| d != a),
                    "{name}: {m} imports {a} ({}), which sits above it\nlayers, bottom first:\n{}",
                    g.edges[*m][*a],
                    g.picture()
                );
            }
        }
    }
}

/// One home for what an algorithm does in the estimate (#34): no code of
/// `estimate/` names a variant of `Algorithm`, so no `match` on the
/// algorithm grows in the dispatch, the runs or the report; the registry
/// (`context/collectives/mod.rs`) is made of `algorithm.rs`'s
/// `algorithm_list!`, whose line for every variant names its row
/// (`module::ROW`) in a module of `context/collectives/` that defines it;
/// and every module there is named by a line. A new algorithm is its
/// module plus its line. Test code is left out.
#[test]
fn only_the_registry_names_an_algorithm_in_estimate() {
    let variants: BTreeSet<String> = planner::algorithm::Algorithm::ALL
        .iter()
        .map(|a| format!("{a:?}"))
        .collect();
    let src = planner_src();
    let dir = Path::new("estimate/context/collectives");
    let mut named = Vec::new();
    for (path, text) in &src {
        let test_file = path.iter().any(|c| c == "tests")
            || path
                .file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f == "tests.rs" || f.ends_with("_tests.rs"));
        if !path.starts_with("estimate") || test_file {
            continue;
        }
        let t = without_test_code(tokens(text));
        for w in t.windows(3) {
            if w[0].text == "Algorithm" && w[1].text == "::" && variants.contains(&w[2].text) {
                named.push(format!(
                    "{}:{}: Algorithm::{}",
                    path.display(),
                    w[0].line,
                    w[2].text
                ));
            }
        }
    }
    assert!(
        named.is_empty(),
        "what an algorithm does belongs in its module of estimate/context/collectives/, chosen by the registry made of `algorithm_list!`:\n{}",
        named.join("\n")
    );
    let file = |rel: &Path| {
        src.iter()
            .find(|(p, _)| p == rel)
            .map(|(_, t)| without_test_code(tokens(t)))
            .unwrap_or_else(|| panic!("planner/src/{} is not there", rel.display()))
    };
    let registry: Vec<String> = file(&dir.join("mod.rs"))
        .into_iter()
        .map(|t| t.text)
        .collect();
    assert!(
        registry
            .windows(6)
            .any(|w| w == ["algorithm_list", "!", "(", "registry", ")", ";"]),
        "{}/mod.rs makes no registry of `algorithm_list!`",
        dir.display()
    );
    let lines = list_lines(&file(Path::new("algorithm.rs")));
    let listed: BTreeSet<String> = lines.iter().map(|(v, _, _)| v.clone()).collect();
    assert_eq!(
        listed, variants,
        "algorithm_list! has a line for every algorithm"
    );
    let mut modules = BTreeSet::new();
    for (variant, module, row) in &lines {
        let t: Vec<String> = file(&dir.join(format!("{module}.rs")))
            .into_iter()
            .map(|t| t.text)
            .collect();
        assert!(
            t.windows(4)
                .any(|w| w == ["const", row, ":", "AlgorithmRow"]),
            "{variant}'s line names {module}::{row}, which {}/{module}.rs does not define",
            dir.display()
        );
        modules.insert(module.clone());
    }
    for (path, _) in &src {
        if path.parent() == Some(dir) && path.file_name().is_some_and(|f| f != "mod.rs") {
            let module = path.file_stem().unwrap_or_default().to_string_lossy();
            assert!(
                modules.contains(module.as_ref()),
                "{}: no line of algorithm_list! names a row of it",
                path.display()
            );
        }
    }
}

/// The lines of `algorithm_list!` in the tokens of `algorithm.rs`:
/// `Variant => Info, module::ROW;` each, as (variant, module, row).
fn list_lines(t: &[Token]) -> Vec<(String, String, String)> {
    let texts: Vec<&str> = t.iter().map(|x| x.text.as_str()).collect();
    let Some(start) = texts
        .windows(3)
        .position(|w| w == ["macro_rules", "!", "algorithm_list"])
    else {
        return Vec::new();
    };
    // The list is the block after `$then!`.
    let Some(open) = (start..texts.len()).find(|&k| texts[k..].starts_with(&["then", "!", "{"]))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let (mut depth, mut entry) = (0i64, Vec::new());
    for &tok in &texts[open + 2..] {
        match tok {
            "{" | "(" | "[" => depth += 1,
            "}" | ")" | "]" => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            break;
        }
        if depth == 1 && tok == ";" {
            if let (Some(v), [.., m, "::", r]) = (entry.first(), entry.as_slice()) {
                out.push((v.to_string(), m.to_string(), r.to_string()));
            }
            entry.clear();
        } else if !(depth == 1 && tok == "{") {
            entry.push(tok);
        }
    }
    out
}

/// The provisioner's source, beside the planner's in the workspace. One
/// scanner holds both crates: this test reads the other crate's files
/// (`CARGO_MANIFEST_DIR/../provisioner/src`) instead of a copy of the
/// scanner in the provisioner's tests or a `#[path]` include across crates.
fn provisioner_src() -> Vec<(PathBuf, String)> {
    crate_src(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../provisioner/src"))
}

/// No import loop among the provisioner's top-level modules, nor among the
/// files of its two modules of many parts: `push/` (one client per vendor
/// around the run) and `jobs/` (a job from its file to its objects).
#[test]
fn provisioner_src_has_no_import_loop() {
    let files = provisioner_src();
    for (parent, must_have) in [
        (&[][..], &["error", "push", "jobs"][..]),
        // The vendors' answer readers apart from their sessions (#34).
        (
            &["push"][..],
            &["run", "ops", "devices", "nvue_answers", "comware_answers"][..],
        ),
        (&["jobs"][..], &["job", "dra", "manifests"][..]),
        // The source of truth: what the plan wants, what the system
        // holds, and the push between them (#34).
        (
            &["sot"][..],
            &["desired", "state", "push", "import", "client"][..],
        ),
    ] {
        let parent: Vec<String> = parent.iter().map(|p| p.to_string()).collect();
        let g = graph_under(&files, &parent);
        let name = if parent.is_empty() {
            "provisioner/src".to_string()
        } else {
            format!("provisioner/src/{}", parent.join("/"))
        };
        assert!(g.problems.is_empty(), "{name}:\n{}", g.problems.join("\n"));
        for m in must_have {
            assert!(
                g.nodes.contains(*m),
                "{name}: no module {m} in {:?}",
                g.nodes
            );
        }
        assert_no_loop(&g, &name);
    }
}

fn synthetic(files: &[(&str, &str)]) -> Graph {
    let files: Vec<(PathBuf, String)> = files
        .iter()
        .map(|(p, s)| (PathBuf::from(p), s.to_string()))
        .collect();
    graph(&files)
}

const LIB: &str = "//! crate::c in a doc comment is not an edge\n\
    pub mod a;\npub mod b;\nmod c;\npub mod d;\n\
    pub use a::{Alpha, inner::Beta as Gamma};\npub use d::Delta;\n";

#[test]
fn the_scanner_finds_every_spelling_of_a_crate_path() {
    let a = r##"
        use std::fmt;
        use crate::{b::{self, Thing}, error_free as _unused};
        pub(crate) fn f() -> crate::Delta { let _ = "crate::c"; let _ = r#"crate::c"#; todo() }
        // use crate::c;
        /* use crate::c; /* nested */ crate::c */
        fn g<'a>(x: &'a str) -> char { let _ = '"'; let _ = b'\''; 'x' }
        #[cfg(test)]
        mod tests { use crate::c; }
        #[cfg(test)]
        use crate::c::Helper;
    "##;
    let t = without_test_code(tokens(a));
    let names: Vec<String> = root_names(&t, &["a".to_string()])
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["b", "error_free", "Delta"]);
    // `super` climbs from the file's module: two from a::x::y reach the
    // crate root, one from a::x stays inside `a`.
    let t = tokens("use super::super::b; use super::sibling; fn f() { super::super::super::x() }");
    let deep = ["a".to_string(), "x".to_string()];
    let names: Vec<String> = root_names(&t, &deep).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["b"]);
    let t = tokens("#![cfg(test)]\nuse crate::b;");
    assert!(without_test_code(t).is_empty());
    let t = tokens("line1\n/* two\nlines */ \"a\nstring\" crate::b");
    assert_eq!(root_names(&t, &["a".to_string()]), [("b".to_string(), 4)]);
}

#[test]
fn the_graph_names_a_cycle_with_its_files_and_lines() {
    let g = synthetic(&[
        ("lib.rs", LIB),
        ("a.rs", "use crate::b::X;\n"),
        ("b/mod.rs", "mod inner;\n"),
        (
            "b/inner.rs",
            "\n\nuse super::super::c;\nuse super::Local;\n",
        ),
        (
            "c.rs",
            "pub fn f() -> crate::Alpha { Default::default() }\nfn g() -> crate::Gamma {}",
        ),
        ("d.rs", "use crate::a;\n"),
        ("c_tests.rs", "use crate::d;\n"),
    ]);
    assert!(g.problems.is_empty(), "{:?}", g.problems);
    let cycles = g.cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    assert!(
        cycles[0].starts_with(
            "a -> b -> c -> a\n    a -> b (a.rs:1)\n    b -> c (b/inner.rs:3)\n    c -> a (c.rs:1)"
        ),
        "{}",
        cycles[0]
    );
    assert_eq!(g.picture(), "  0: {a b c}\n  1: d");
}

#[test]
fn the_layers_of_a_graph_without_loops_put_every_import_below() {
    let g = synthetic(&[
        ("lib.rs", LIB),
        ("a.rs", "use crate::b::X;\n"),
        ("b/mod.rs", "use crate::{c, d::{self}};\n"),
        ("c.rs", ""),
        ("d.rs", "use crate::c;"),
    ]);
    assert!(g.cycles().is_empty());
    assert_eq!(g.picture(), "  0: c\n  1: d\n  2: b\n  3: a");
}

#[test]
fn a_module_the_graph_cannot_see_is_a_problem() {
    let g = synthetic(&[
        ("lib.rs", LIB),
        ("a.rs", "use crate::nowhere::X;\n"),
        ("b.rs", ""),
        ("c.rs", ""),
        ("hidden.rs", "use crate::a;"),
    ]);
    let p = g.problems.join("\n");
    assert!(p.contains("a.rs:1: crate::nowhere is neither"), "{p}");
    assert!(p.contains("hidden.rs is not declared in lib.rs"), "{p}");
    assert!(
        p.contains("lib.rs declares `mod d` but no source file"),
        "{p}"
    );
}

#[test]
fn the_graph_of_a_module_joins_its_files_by_crate_and_super_paths() {
    let files: Vec<(PathBuf, String)> = [
        ("lib.rs", "pub mod a;\npub mod b;\n"),
        (
            "a/mod.rs",
            "mod x;\nmod y;\nmod z;\npub use y::Why;\nuse std::io;\npub struct Face;\n",
        ),
        ("a/x.rs", "use crate::b::Far;\nmod deep;\n"),
        ("a/x/deep.rs", "\nuse super::super::{y::T, Face};\n"),
        (
            "a/y.rs",
            "fn f() -> super::Why { crate::a::z::g() }\nuse crate::a::{x, io};\n",
        ),
        ("a/z.rs", "use super::super::b;\n"),
        ("b.rs", "use crate::a::x;\n"),
    ]
    .iter()
    .map(|(p, s)| (PathBuf::from(p), s.to_string()))
    .collect();
    let g = graph_under(&files, &["a".to_string()]);
    assert!(g.problems.is_empty(), "{:?}", g.problems);
    assert_eq!(
        g.cycles(),
        ["x -> y -> x\n    x -> y (a/x/deep.rs:2)\n    y -> x (a/y.rs:2)"]
    );
    assert_eq!(g.picture(), "  0: z\n  1: {x y}");
    let top = graph(&files);
    assert_eq!(top.cycles().len(), 1, "{}", top.picture());
}

/// No library file of either crate (or of `testkit`) is over 1,000 lines
/// (#34): a file that grows past it is cut along its seams into
/// submodules. Binaries (`src/bin/`) and test files (`tests.rs`,
/// `*_tests.rs`, anything under a `tests/` folder) are not library files.
#[test]
fn no_library_file_is_over_a_thousand_lines() {
    const MOST: usize = 1000;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut over = Vec::new();
    let mut seen = 0;
    for krate in ["planner", "provisioner", "testkit"] {
        let src = root.join(krate).join("src");
        for (rel, text) in crate_src(&src) {
            if !is_library_file(&rel) {
                continue;
            }
            seen += 1;
            let lines = text.lines().count();
            if lines > MOST {
                over.push(format!("{krate}/src/{}: {lines} lines", rel.display()));
            }
        }
    }
    assert!(
        seen > 100,
        "only {seen} library files found under {}",
        root.display()
    );
    assert!(
        over.is_empty(),
        "library files over {MOST} lines (cut each along its seams into submodules):\n{}",
        over.join("\n")
    );
}

/// The planner library's messages name parameters, never a binary's
/// flags (#34): a provisioner user reaches the same code through a job
/// file and has no `--solver` or `--max-failure-loss`. A flag may appear
/// only inside a whole command a user can run (`planner ranks --format
/// csv`), so a string literal of library code that holds `--flag` must
/// also name `planner ` or `provisioner `. (`Error::Parameter` carries the
/// parameter's name; each binary shows it as its own flag.)
#[test]
fn planner_library_messages_name_no_flags() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for (rel, text) in crate_src(&src) {
        if !is_library_file(&rel) {
            continue;
        }
        // Inline test modules sit at the end of a file.
        let code = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or(&text);
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for literal in string_literals(line) {
                let flag = literal.match_indices("--").any(|(i, _)| {
                    let before = literal[..i].chars().next_back();
                    let after = literal[i + 2..].chars().next();
                    before.is_none_or(|c| " (`'\"".contains(c))
                        && after.is_some_and(|c| c.is_ascii_lowercase())
                });
                if flag && !literal.contains("planner ") && !literal.contains("provisioner ") {
                    found.push(format!(
                        "planner/src/{}:{}: {literal}",
                        rel.display(),
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "library messages naming a flag outside a whole command (name the parameter instead, \
         or quote the command):\n{}",
        found.join("\n")
    );
}

/// The contents of the `"..."` literals of one line (escapes kept as
/// written; a literal left open at the line's end is taken to its end).
fn string_literals(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\'' && i + 2 < b.len() && b[i + 2] == b'\'' {
            i += 3; // a char literal such as '"'
            continue;
        }
        if b[i] == b'"' {
            let start = i + 1;
            let mut j = start;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            out.push(&line[start..j.min(b.len())]);
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}
