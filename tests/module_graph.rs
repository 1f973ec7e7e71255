//! The core's module graph, read from the source: no core module imports one that imports it back (directly or
//! through others), and the layers (`src/layers/`) depend on units, not on `policy`. The JS bindings
//! (`src/wasm/`) are a shell over the core and are left out: nothing in the core may import them.
//!
//! A module's imports are the `crate::<module>` paths in its files, comments left out; a path to an item the
//! crate root re-exports (`crate::Registry`) counts as an import of the module that defines it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The top-level modules under `src/` (a file `x.rs` or a directory `x/`) and the text of each one's files.
fn modules() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(&src).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_stem().and_then(|s| s.to_str()).expect("a UTF-8 file name").to_owned();
        if name == "lib" {
            continue;
        }
        let mut text = String::new();
        if path.is_dir() {
            for file in fs::read_dir(&path).expect("a module directory is readable") {
                let file = file.expect("a directory entry").path();
                if file.extension().is_some_and(|e| e == "rs") {
                    text += &code(&fs::read_to_string(&file).expect("a source file is readable"));
                }
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            text = code(&fs::read_to_string(&path).expect("a source file is readable"));
        } else {
            continue;
        }
        out.insert(name, text);
    }
    out
}

/// `source` without its line comments (doc comments included: an intra-doc link is not an import).
fn code(source: &str) -> String {
    source.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
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

/// The modules `text` imports through `crate::` paths (re-exported items mapped to their module).
fn imports(text: &str, modules: &BTreeMap<String, String>, reexports: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // e.g. `$crate::`
        }
        let name: String =
            text[at + "crate::".len()..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if modules.contains_key(&name) {
            out.insert(name);
        } else if let Some(module) = reexports.get(&name) {
            out.insert(module.clone());
        } else {
            panic!("`crate::{name}` names neither a module nor an item the crate root re-exports");
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
        .map(|(name, text)| {
            let mut deps = imports(text, &modules, &reexports);
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
