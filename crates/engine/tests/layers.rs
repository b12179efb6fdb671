//! The engine's layers: no top-level module of `src/` imports one of a higher
//! layer, and the modules import each other without a cycle.
//!
//! The layer table is the fenced block of docs/ARCHITECTURE.md that starts
//! with a line `layers:`; one line per layer, bottom first:
//!
//! ```text
//! layers:
//! time rng:        # modules of the layer; after ':' the only lower modules they may import
//! net tcp          # no ':': any module of a lower layer
//! test code of sim may import: scenario
//! ```
//!
//! A module may import its peers (the same layer) and lower layers (all of
//! them, or those its line lists after a ':'); never a higher layer. Test
//! code (`#[cfg(test)]` modules, inline or in their own files) is held to the
//! same table, except for the edges a `test code of X may import: ...` line
//! names; those edges are also left out of the cycle check.
//!
//! A reference to another module is `crate::x` (in a `use`, a `use
//! crate::{x, y}` group or an inline path) or a chain of `super::` that
//! climbs to the crate root (`super::super::x`). Comments are not read.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// One reference from a top-level module to another.
#[derive(Debug, Clone, PartialEq)]
struct Edge {
    from: String,
    to: String,
    /// Where: `net/queue/mod.rs:15`.
    at: String,
    /// In `#[cfg(test)]` code.
    test: bool,
}

/// One layer of the table.
#[derive(Debug)]
struct Layer {
    modules: Vec<String>,
    /// The lower modules it may import; None: every lower one.
    only: Option<Vec<String>>,
}

#[derive(Debug, Default)]
struct Table {
    layers: Vec<Layer>,
    /// (module, what its test code may import beyond the table).
    test_exceptions: Vec<(String, String)>,
}

/// The layer table of a markdown text (the fenced block starting `layers:`).
fn parse_table(markdown: &str) -> Result<Table, String> {
    let mut block: Option<Vec<&str>> = None;
    let mut in_fence = false;
    let mut current: Vec<&str> = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            if in_fence {
                if current.first().map(|l| l.trim()) == Some("layers:") {
                    block = Some(current.clone());
                }
                current.clear();
            }
            in_fence = !in_fence;
        } else if in_fence {
            current.push(line);
        }
    }
    let block = block.ok_or("no fenced block starting with `layers:`")?;
    let mut table = Table::default();
    for raw in &block[1..] {
        let line = raw.split('#').next().unwrap().trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("test code of ") {
            let (module, allowed) = rest
                .split_once(" may import:")
                .ok_or_else(|| format!("cannot read `{line}`"))?;
            for to in allowed.split_whitespace() {
                table
                    .test_exceptions
                    .push((module.trim().to_string(), to.to_string()));
            }
            continue;
        }
        let (modules, only) = match line.split_once(':') {
            Some((m, o)) => (m, Some(words(o))),
            None => (line, None),
        };
        table.layers.push(Layer {
            modules: words(modules),
            only,
        });
    }
    Ok(table)
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

impl Table {
    fn layer_of(&self, module: &str) -> Option<usize> {
        self.layers
            .iter()
            .position(|l| l.modules.iter().any(|m| m == module))
    }

    fn test_allows(&self, e: &Edge) -> bool {
        e.test
            && self
                .test_exceptions
                .iter()
                .any(|(f, t)| *f == e.from && *t == e.to)
    }
}

/// The module path of a source file relative to `src/`: `net/queue/mod.rs`
/// is [net, queue], `lib.rs` is [].
fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// A line without its `//` comment (a `//` inside a string literal is kept).
fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut in_str = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_str => i += 1,
            b'"' => in_str = !in_str,
            b'/' if !in_str && bytes.get(i + 1) == Some(&b'/') => return &line[..i],
            _ => {}
        }
        i += 1;
    }
    line
}

/// The name of the module a line declares, if it does (`mod x;`,
/// `pub(crate) mod x {`), and whether it opens an inline body.
fn declared_module(line: &str) -> Option<(String, bool)> {
    let t = line.trim();
    let t = t
        .strip_prefix("pub(crate) ")
        .or_else(|| t.strip_prefix("pub "))
        .unwrap_or(t);
    let rest = t.strip_prefix("mod ")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let after = rest[name.len()..].trim();
    match after {
        ";" => Some((name, false)),
        "{" => Some((name, true)),
        _ => None,
    }
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The identifiers a path continues with after `at` in `code`: one, or each
/// first segment of a `{a, b::c, ...}` group.
fn targets(code: &str, at: usize) -> Vec<String> {
    let rest = &code[at..];
    if let Some(group) = rest.strip_prefix('{') {
        let mut out = Vec::new();
        let mut depth = 0;
        let mut item_start = true;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                c if item_start && depth == 0 && (c.is_alphanumeric() || c == '_') => {
                    let name: String = group[i..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    out.push(name);
                    item_start = false;
                }
                _ => {}
            }
        }
        out
    } else {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        vec![name]
    }
}

/// Every reference between top-level modules in `files` (paths relative
/// to `src/`, texts); `tops` are the crate's top-level modules.
fn edges(files: &[(String, String)], tops: &BTreeSet<String>) -> Vec<Edge> {
    // files declared under #[cfg(test)], by module path
    let mut test_files: BTreeSet<Vec<String>> = BTreeSet::new();
    for (rel, text) in files {
        let base = module_path(rel);
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim() == "#[cfg(test)]" {
                if let Some((name, false)) = lines.get(i + 1).and_then(|l| declared_module(l)) {
                    let mut p = base.clone();
                    p.push(name);
                    test_files.insert(p);
                }
            }
        }
    }
    let mut out = Vec::new();
    for (rel, text) in files {
        let path = module_path(rel);
        let Some(top) = path.first() else {
            continue; // lib.rs: the crate root declares the modules
        };
        let file_is_test = (1..=path.len()).any(|n| test_files.contains(&path[..n]));
        // per line: depth below the file's module (inline modules) and
        // whether it is test code
        let lines: Vec<&str> = text.lines().collect();
        let mut depth = vec![0usize; lines.len()];
        let mut test = vec![file_is_test; lines.len()];
        // open inline modules: (closing line, test)
        let mut open: Vec<(String, bool)> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if let Some(pos) = open.iter().position(|(close, _)| line == close) {
                open.truncate(pos);
            }
            if let Some((_, true)) = declared_module(line) {
                let indent = &line[..line.len() - line.trim_start().len()];
                let is_test = i > 0 && lines[i - 1].trim() == "#[cfg(test)]";
                open.push((format!("{indent}}}"), is_test));
                depth[i] = open.len() - 1;
                test[i] = file_is_test || open.iter().any(|o| o.1);
                continue;
            }
            depth[i] = open.len();
            test[i] = file_is_test || open.iter().any(|o| o.1);
        }
        for (i, line) in lines.iter().enumerate() {
            let code = strip_comment(line);
            let b = code.as_bytes();
            let mut push = |to: String| {
                if tops.contains(&to) && to != *top {
                    out.push(Edge {
                        from: top.clone(),
                        to,
                        at: format!("{rel}:{}", i + 1),
                        test: test[i],
                    });
                }
            };
            // a path continued on the next lines (a long `use` group)
            let joined = || {
                let end = lines.len().min(i + 50);
                lines[i..end]
                    .iter()
                    .map(|l| strip_comment(l))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            for (at, _) in code.match_indices("crate::") {
                if at > 0 && (is_ident(b[at - 1]) || b[at - 1] == b'$') {
                    continue;
                }
                let text = joined();
                for t in targets(&text, at + "crate::".len()) {
                    push(t);
                }
            }
            for (at, _) in code.match_indices("super::") {
                if at > 0 && (is_ident(b[at - 1]) || b[at - 1] == b':') {
                    continue; // not the start of a chain
                }
                let mut k = 0;
                let mut end = at;
                while code[end..].starts_with("super::") {
                    k += 1;
                    end += "super::".len();
                }
                // the module this code is in is `path` plus its inline modules
                if k >= path.len() + depth[i] {
                    let text = joined();
                    for t in targets(&text, end) {
                        push(t);
                    }
                }
            }
        }
    }
    out
}

/// Everything wrong with `edges` under `table` (empty: the layers hold).
fn check(table: &Table, tops: &BTreeSet<String>, edges: &[Edge]) -> Vec<String> {
    let mut errors = Vec::new();
    for m in tops {
        if table.layer_of(m).is_none() {
            errors.push(format!("module `{m}` is in no layer of the table"));
        }
    }
    for l in &table.layers {
        for m in l.modules.iter().chain(l.only.iter().flatten()) {
            if !tops.contains(m) {
                errors.push(format!(
                    "the table names `{m}`, which is no module of the crate"
                ));
            }
        }
    }
    for e in edges {
        let (Some(lf), Some(lt)) = (table.layer_of(&e.from), table.layer_of(&e.to)) else {
            continue;
        };
        if table.test_allows(e) {
            continue;
        }
        let what = if e.test { "test code of " } else { "" };
        if lt > lf {
            errors.push(format!(
                "{}: {what}`{}` (layer {}) imports `{}` of a higher layer ({})",
                e.at,
                e.from,
                lf + 1,
                e.to,
                lt + 1
            ));
        } else if lt < lf {
            if let Some(only) = &table.layers[lf].only {
                if !only.contains(&e.to) {
                    errors.push(format!(
                        "{}: {what}`{}` imports `{}`, which its layer may not (only: {})",
                        e.at,
                        e.from,
                        e.to,
                        only.join(" ")
                    ));
                }
            }
        }
    }
    // cycles, over every edge the exceptions do not allow
    let mut graph: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for e in edges.iter().filter(|e| !table.test_allows(e)) {
        graph
            .entry(&e.from)
            .or_default()
            .entry(&e.to)
            .or_insert(&e.at);
    }
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|w| format!("{} → {} ({})", w[0], w[1], graph[w[0]][w[1]]))
            .collect();
        errors.push(format!("a cycle: {}", steps.join(", ")));
    }
    errors
}

/// A cycle of `graph` as the modules along it (the first repeated at the
/// end), if there is one.
fn find_cycle<'a>(graph: &BTreeMap<&'a str, BTreeMap<&'a str, &'a str>>) -> Option<Vec<&'a str>> {
    fn visit<'a>(
        n: &'a str,
        graph: &BTreeMap<&'a str, BTreeMap<&'a str, &'a str>>,
        state: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<&'a str>> {
        state.insert(n, 1);
        stack.push(n);
        for &m in graph.get(n).map(|s| s.keys()).into_iter().flatten() {
            match state.get(m) {
                Some(1) => {
                    let from = stack.iter().position(|&x| x == m).unwrap();
                    let mut c = stack[from..].to_vec();
                    c.push(m);
                    return Some(c);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(m, graph, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(n, 2);
        None
    }
    let mut state = BTreeMap::new();
    for &n in graph.keys() {
        if !state.contains_key(n) {
            if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// The top-level modules `lib.rs` declares.
fn top_modules(lib: &str) -> BTreeSet<String> {
    lib.lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(declared_module)
        .map(|(name, _)| name)
        .collect()
}

fn read_sources(dir: &Path, rel: &str, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().to_string();
        let rel = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if e.file_type().unwrap().is_dir() {
            read_sources(&e.path(), &rel, out);
        } else if name.ends_with(".rs") {
            out.push((rel, fs::read_to_string(e.path()).unwrap()));
        }
    }
}

#[test]
fn the_engine_keeps_its_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = root.join("../../docs/ARCHITECTURE.md");
    let table = parse_table(&fs::read_to_string(&doc).unwrap()).unwrap();
    let mut files = Vec::new();
    read_sources(&root.join("src"), "", &mut files);
    let lib = &files.iter().find(|(r, _)| r == "lib.rs").unwrap().1;
    let tops = top_modules(lib);
    let edges = edges(&files, &tops);
    // the scan sees the imports it must (a check that reads nothing passes)
    assert!(
        edges
            .iter()
            .any(|e| e.from == "sim" && e.to == "plan" && !e.test),
        "{edges:?}"
    );
    let errors = check(&table, &tops, &edges);
    assert!(
        errors.is_empty(),
        "the layers of docs/ARCHITECTURE.md do not hold:\n{}",
        errors.join("\n")
    );
}

// --- the checker, on made-up crates ---

const TABLE: &str =
    "text\n```\nlayers:\nbase:   # a leaf\nmid: base\ntop\ntest code of mid may import: top\n```\n";

fn crate_of(files: &[(&str, &str)]) -> (BTreeSet<String>, Vec<Edge>) {
    let files: Vec<(String, String)> = files
        .iter()
        .map(|(r, t)| (r.to_string(), t.to_string()))
        .collect();
    let lib = &files.iter().find(|(r, _)| r == "lib.rs").unwrap().1;
    let tops = top_modules(lib);
    let e = edges(&files, &tops);
    (tops, e)
}

const LIB: &str = "pub mod base;\npub mod mid;\npub mod top;\n";

#[test]
fn the_checker_passes_a_crate_that_keeps_its_layers() {
    let table = parse_table(TABLE).unwrap();
    let (tops, e) = crate_of(&[
        ("lib.rs", LIB),
        ("base.rs", "pub struct B;\n"),
        ("mid/mod.rs", "use crate::base::B;\nmod inner;\n"),
        (
            "mid/inner.rs",
            "use super::super::base;\n// use crate::top;\n",
        ),
        ("top.rs", "use crate::{\n    base::B,\n    mid,\n};\n"),
    ]);
    assert_eq!(e.len(), 4, "{e:?}");
    assert_eq!(check(&table, &tops, &e), Vec::<String>::new());
}

#[test]
fn the_checker_refuses_an_import_of_a_higher_layer() {
    let table = parse_table(TABLE).unwrap();
    let (tops, e) = crate_of(&[
        ("lib.rs", LIB),
        ("base.rs", "pub fn f() { crate::mid::g() }\n"),
        ("mid.rs", "pub fn g() {}\n"),
        ("top.rs", ""),
    ]);
    let errors = check(&table, &tops, &e);
    assert!(
        errors
            .iter()
            .any(|m| m.starts_with("base.rs:1: `base` (layer 1) imports `mid`")),
        "{errors:?}"
    );
    // a cycle too (base → mid and mid → base)
    let (tops, e) = crate_of(&[
        ("lib.rs", LIB),
        ("base.rs", "use crate::{mid::g};\n"),
        ("mid.rs", "use crate::base;\n"),
        ("top.rs", ""),
    ]);
    let errors = check(&table, &tops, &e);
    assert!(
        errors.iter().any(|m| m.starts_with("a cycle: ")),
        "{errors:?}"
    );
}

#[test]
fn the_checker_follows_super_chains_and_the_lists_of_a_layer() {
    let table = parse_table(TABLE).unwrap();
    // mid may import only base: a super chain up to the root and over to top
    let (tops, e) = crate_of(&[
        ("lib.rs", LIB),
        ("base.rs", ""),
        ("mid/deep.rs", "fn f() { super::super::top::h() }\n"),
        ("mid/mod.rs", "mod deep;\n"),
        ("top.rs", ""),
    ]);
    let errors = check(&table, &tops, &e);
    assert!(
        errors
            .iter()
            .any(|m| m.starts_with("mid/deep.rs:1: `mid` (layer 2) imports `top`")),
        "{errors:?}"
    );
}

#[test]
fn the_checker_holds_test_code_to_the_table_but_its_exceptions() {
    let table = parse_table(TABLE).unwrap();
    let (tops, e) = crate_of(&[
        ("lib.rs", LIB),
        (
            "base.rs",
            "pub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    use super::super::top;\n}\n",
        ),
        ("mid/mod.rs", "#[cfg(test)]\nmod tests;\n"),
        ("mid/tests.rs", "use crate::top::T;\n"),
        ("top.rs", "use crate::mid;\n"),
    ]);
    assert!(e.iter().all(|e| e.test != (e.from == "top")), "{e:?}");
    let errors = check(&table, &tops, &e);
    // base's test imports top: refused; mid's test may (the exception)
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("base.rs:5: test code of `base`"),
        "{errors:?}"
    );
}
