//! The core's module graph, read from the source: no core module imports one that imports it back (directly or
//! through others), and the layers (`src/layers/`) depend on units, not on `policy`. The JS bindings
//! (`src/wasm/`) are a shell over the core and are left out: nothing in the core may import them.
//!
//! A top-level module is `src/x.rs` and everything under `src/x/`. Its imports are the paths to the crate root in
//! its code (comments and string literals left out): `crate::y…`, `$crate::y…`, and `super::y…` with as many
//! `super::` as the file is deep. A path to an item the crate root re-exports (`crate::Registry`) counts as an
//! import of the module that defines it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The top-level modules under `src/` and, for each, the code of its files with each file's depth below the crate
/// root (`src/x.rs` and `src/x/mod.rs`: 1; `src/x/y.rs`: 2).
fn modules() -> BTreeMap<String, Vec<(usize, String)>> {
    fn read(path: &Path, depth: usize, out: &mut Vec<(usize, String)>) {
        if path.is_dir() {
            for entry in fs::read_dir(path).expect("a module directory is readable") {
                read(&entry.expect("a directory entry").path(), depth + 1, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let depth = if path.file_name().is_some_and(|n| n == "mod.rs") { depth - 1 } else { depth };
            out.push((depth, code(&fs::read_to_string(path).expect("a source file is readable"))));
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
    for entry in fs::read_dir(&src).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_stem().and_then(|s| s.to_str()).expect("a UTF-8 file name").to_owned();
        if name != "lib" && (path.is_dir() || path.extension().is_some_and(|e| e == "rs")) {
            read(&path, 1, out.entry(name).or_default());
        }
    }
    out
}

/// `source` with its comments and the contents of its string and character literals blanked (an intra-doc link or
/// a URL in a string is not an import).
fn code(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &source[i..];
        let skip = if rest.starts_with("//") {
            rest.find('\n').unwrap_or(rest.len())
        } else if rest.starts_with("/*") {
            block_comment(rest)
        } else if let Some((open, close)) = raw_string(rest) {
            open + rest[open..].find(&close).map_or(rest.len() - open, |k| k + close.len())
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() && b[i + j] != b'"' {
                j += if b[i + j] == b'\\' { 2 } else { 1 };
            }
            (j + 1).min(rest.len())
        } else {
            char_literal(rest).unwrap_or_default()
        };
        if skip > 0 {
            out.push(' ');
            i += skip;
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The length of a block comment starting `text` (block comments nest).
fn block_comment(text: &str) -> usize {
    let mut depth = 0;
    let mut j = 0;
    while j < text.len() {
        if text[j..].starts_with("/*") {
            depth += 1;
            j += 2;
        } else if text[j..].starts_with("*/") {
            depth -= 1;
            j += 2;
            if depth == 0 {
                break;
            }
        } else {
            j += text[j..].chars().next().map_or(1, char::len_utf8);
        }
    }
    j
}

/// The opening's length and the closing text of a raw string literal starting `text` (`r"…"`, `r#"…"#`,
/// `br"…"`), if one does.
fn raw_string(text: &str) -> Option<(usize, String)> {
    let after_b = text.strip_prefix('b').unwrap_or(text);
    let hashes = after_b.strip_prefix('r')?.bytes().take_while(|&c| c == b'#').count();
    let prefix = text.len() - after_b.len() + 1 + hashes;
    (text.as_bytes().get(prefix) == Some(&b'"')).then(|| (prefix + 1, format!("\"{}", "#".repeat(hashes))))
}

/// The length of a character literal starting `text` (`'a'`, `'\''`, `'\u{1F600}'`), if one does (not a lifetime).
fn char_literal(text: &str) -> Option<usize> {
    let body = text.strip_prefix('\'')?;
    let len = if let Some(escaped) = body.strip_prefix('\\') {
        // the escaped character (which may be a quote), then up to the closing quote (`u{…}`)
        let first = escaped.chars().next()?.len_utf8();
        1 + first + escaped[first..].find('\'')?
    } else {
        body.chars().next()?.len_utf8()
    };
    (body.as_bytes().get(len) == Some(&b'\'')).then_some(len + 2)
}

/// Which module defines each item the crate root re-exports (`pub use registry::{Registry, Slot};`).
fn reexports() -> BTreeMap<String, String> {
    let lib = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).expect("lib.rs");
    let mut out = BTreeMap::new();
    for line in code(&lib).lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else { continue };
        let Some((module, items)) = rest.split_once("::") else { continue };
        for item in items.trim_end_matches(';').trim_matches(|c| c == '{' || c == '}').split(',') {
            out.insert(item.trim().to_owned(), module.to_owned());
        }
    }
    out
}

/// The names that follow each path to the crate root in `text`, the code of a file `depth` below the root:
/// `crate::name`, `$crate::name`, or `name` after as many `super::` as the place is deep (the file's depth plus
/// the inline `mod x { … }` around it).
fn root_paths(text: &str, depth: usize) -> Vec<String> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let name_at = |at: usize| text[at..].chars().take_while(|&c| ident(c)).collect::<String>();
    let starts_path = |at: usize| !text[..at].ends_with("::") && !text[..at].chars().next_back().is_some_and(ident);
    let mut out = Vec::new();
    let (mut braces, mut mods, mut pending_mod) = (0usize, Vec::new(), false);
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        if rest.starts_with("mod ") && starts_path(i) {
            // an inline module when a `{` follows its name, an out-of-line one when a `;` does
            let after = rest["mod ".len()..].trim_start_matches(|c: char| ident(c) || c.is_whitespace());
            pending_mod = after.starts_with('{');
        } else if rest.starts_with('{') {
            braces += 1;
            if pending_mod {
                mods.push(braces);
                pending_mod = false;
            }
        } else if rest.starts_with('}') {
            if mods.last() == Some(&braces) {
                mods.pop();
            }
            braces = braces.saturating_sub(1);
        } else if rest.starts_with("crate::") && starts_path(i) {
            out.push(name_at(i + "crate::".len()));
        } else if rest.starts_with("super::") && starts_path(i) {
            let supers = (0..).take_while(|k| rest[k * "super::".len()..].starts_with("super::")).count();
            if supers == depth + mods.len() {
                out.push(name_at(i + supers * "super::".len()));
            }
            i += supers * "super::".len();
            continue;
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// The modules `files` import (re-exported items mapped to their module).
fn imports(
    files: &[(usize, String)],
    modules: &BTreeMap<String, Vec<(usize, String)>>,
    reexports: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (depth, text) in files {
        for name in root_paths(text, *depth) {
            if modules.contains_key(&name) {
                out.insert(name);
            } else if let Some(module) = reexports.get(&name) {
                out.insert(module.clone());
            } else {
                panic!("a path to the crate root names `{name}`, neither a module nor an item the root re-exports");
            }
        }
    }
    out
}

/// The core's import graph: every top-level module but the JS bindings, with the core modules it imports.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    let reexports = reexports();
    assert!(modules.contains_key("registry") && modules.contains_key("layers"), "the modules were read");
    modules
        .iter()
        .filter(|(name, _)| *name != "wasm")
        .map(|(name, files)| {
            let mut deps = imports(files, &modules, &reexports);
            deps.remove(name);
            (name.clone(), deps)
        })
        .collect()
}

/// A cycle through `graph`, as the modules along it, if there is one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        graph: &BTreeMap<String, BTreeSet<String>>,
        node: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|n| n == node) {
            let mut found = path[i..].to_vec();
            found.push(node.to_owned());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(graph, next, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|start| visit(graph, start, &mut Vec::new(), &mut done))
}

#[test]
fn no_core_module_imports_one_that_imports_it_back() {
    let graph = graph();
    assert_eq!(cycle(&graph), None, "an import cycle between core modules; the graph: {graph:#?}");
}

#[test]
fn the_core_does_not_import_the_js_bindings() {
    for (module, deps) in graph() {
        assert!(!deps.contains("wasm"), "{module} imports the JS bindings");
    }
}

#[test]
fn the_layers_depend_on_units_not_on_policy() {
    let graph = graph();
    let layers = &graph["layers"];
    assert!(layers.contains("time"), "the layers' imports were read: {layers:?}");
    assert!(!layers.contains("policy"), "the layers import policy: {layers:?}");
}

#[test]
fn the_reader_finds_paths_to_the_root_and_none_in_comments_or_literals() {
    let text = code(
        r##"
use crate::time::Instant; // crate::policy in a comment
/* crate::audit in a block /* nested */ comment */
const URL: &str = "https://x/crate::frontier \" crate::host";
const RAW: &str = r#"crate::robots "quoted""#;
const QUOTE: char = '"';
const ESCAPED: [char; 2] = ['\'', '\u{22}'];
fn f<'a>(x: &'a str) -> &'a str { x }
macro_rules! m { () => { $crate::error::Error } }
use super::compact;
mod tests {
    use super::*;
    use super::super::observe;
}
"##,
    );
    assert_eq!(root_paths(&text, 1), ["time", "error", "compact", "observe"]);
    assert_eq!(root_paths(&text, 2), ["time", "error"], "deeper, those `super::` paths stay below the root");
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let edges = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")];
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in edges {
        graph.entry(from.to_owned()).or_default().insert(to.to_owned());
    }
    assert_eq!(cycle(&graph), Some(["a", "b", "c", "a"].map(String::from).to_vec()));
    graph.get_mut("c").map(|c| c.remove("a"));
    assert_eq!(cycle(&graph), None);
}
