//! The layer rule, checked over the crate's sources: every `use` and every `crate::` /
//! `super::` path in `src/` (comments and unit-test modules aside) against the table in
//! `src/lib.rs`'s "Layers" section, where the rule is written once; and, inside `index`,
//! the files importing each other without a circle.
//!
//! Unit-test modules (`#[cfg(test)] mod ...` at the end of a file) may reach anywhere
//! for their fixtures, so they are not read. A root path (`crate::Index`) counts as the
//! module `src/lib.rs` re-exports it from.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `src/`, by its path relative to it.
fn sources() -> Vec<PathBuf> {
    let files = crate::common::rust_files_under(&src());
    files
        .iter()
        .map(|p| p.strip_prefix(src()).unwrap().to_path_buf())
        .collect()
}

/// The module path of a source file: `index/build.rs` is `[index, build]`,
/// `index/mod.rs` `[index]`, `lib.rs` `[]`.
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .iter()
        .map(|p| p.to_str().unwrap().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Whether module `path` has a child module `name` (a file or a directory).
fn has_child(path: &[String], name: &str) -> bool {
    let dir = path.iter().fold(src(), |d, p| d.join(p));
    dir.join(format!("{name}.rs")).exists() || dir.join(name).join("mod.rs").exists()
}

/// The file's code: comment lines dropped, and everything from the first unit-test
/// module on (by convention they end the file), each line with its number.
fn code_of(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if t == "#[cfg(test)]" && lines.get(i + 1).is_some_and(|n| n.starts_with("mod ")) {
            break;
        }
        if !t.starts_with("//") {
            out.push((i + 1, line.to_string()));
        }
    }
    out
}

/// Expands a use tree (`crate::a::{b, c::{d, self}}`) into its paths.
fn expand(tree: &str) -> Vec<Vec<String>> {
    // Aliases (`Foo as Bar`) dropped, then the blanks.
    let mut plain = String::new();
    let mut rest = tree;
    while let Some(i) = rest.find(" as ") {
        plain.push_str(&rest[..i]);
        rest = &rest[i + 4..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        rest = &rest[end..];
    }
    plain.push_str(rest);
    let tree: String = plain.chars().filter(|c| !c.is_whitespace()).collect();
    let mut out = Vec::new();
    expand_into(&tree, &mut Vec::new(), &mut out);
    out
}

fn expand_into(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree.find('{') {
        None => {
            let mut path = prefix.clone();
            path.extend(
                tree.split("::")
                    .filter(|s| !s.is_empty() && *s != "self" && *s != "*")
                    .map(str::to_string),
            );
            out.push(path);
        }
        Some(open) => {
            let head: Vec<String> = tree[..open]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            let inner = &tree[open + 1..tree.rfind('}').unwrap()];
            let n = prefix.len();
            prefix.extend(head);
            // Split the group at its top-level commas.
            let (mut depth, mut from) = (0, 0);
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        if i > from {
                            expand_into(&inner[from..i], prefix, out);
                        }
                        from = i + 1;
                    }
                    _ => {}
                }
            }
            if inner.len() > from {
                expand_into(&inner[from..], prefix, out);
            }
            prefix.truncate(n);
        }
    }
}

/// Every path a file's code names, with its line: the `use` statements' (expanded) and
/// every other `crate::...` or `super::...` path.
fn paths_of(code: &[(usize, String)]) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut statement: Option<(usize, String)> = None;
    for (line, text) in code {
        let t = text.trim_start();
        let t = t.strip_prefix("pub ").unwrap_or(t);
        let t = ["pub(crate) ", "pub(super) "]
            .iter()
            .fold(t, |t, p| t.strip_prefix(p).unwrap_or(t));
        match &mut statement {
            Some((_, s)) => s.push_str(text),
            None => {
                if let Some(rest) = t.strip_prefix("use ") {
                    statement = Some((*line, rest.to_string()));
                }
            }
        }
        if let Some((at, s)) = &statement {
            if let Some(end) = s.find(';') {
                for path in expand(&s[..end]) {
                    out.push((*at, path));
                }
                statement = None;
            }
            continue;
        }
        // Inline paths.
        for start in ["crate::", "super::"] {
            let mut from = 0;
            while let Some(i) = text[from..].find(start) {
                let i = from + i;
                let before = text[..i].chars().last();
                from = i + start.len();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let path: String = text[i..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                let segments: Vec<String> = path
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
                out.push((*line, segments));
            }
        }
    }
    out
}

/// A path as seen from module `here`, made absolute (`[index, build, RowWalker]`);
/// `None` for another crate's.
fn absolute(here: &[String], path: &[String]) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    match first.as_str() {
        "crate" => Some(rest.to_vec()),
        "self" => Some([here, rest].concat()),
        "super" => {
            let mut base = here.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            Some([&base[..], rest].concat())
        }
        name if has_child(here, name) => Some([here, path].concat()),
        _ => None,
    }
}

/// The root's re-exports (`pub use index::{Index, ...}` in lib.rs): name -> module.
fn root_names() -> BTreeMap<String, String> {
    let code = code_of(&std::fs::read_to_string(src().join("lib.rs")).unwrap());
    let mut names = BTreeMap::new();
    for (_, path) in paths_of(&code) {
        if let (Some(module), Some(name)) = (path.first(), path.last()) {
            if path.len() > 1 && has_child(&[], module) {
                names.insert(name.clone(), module.clone());
            }
        }
    }
    names
}

/// The layer table of lib.rs's "Layers" section: the ground floor (the first row's
/// modules) and, per module, the modules it may import besides the ground floor and
/// itself (`None`: every module).
fn layer_table() -> (Vec<String>, BTreeMap<String, Option<BTreeSet<String>>>) {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let section = lib
        .split("//! ## Layers")
        .nth(1)
        .expect("src/lib.rs's doc has a `## Layers` section");
    let ticked = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    let mut ground = Vec::new();
    let mut table = BTreeMap::new();
    for line in section.lines().skip(1).take_while(|l| l.starts_with("//!")) {
        let cells: Vec<&str> = line.trim_start_matches("//!").trim().split('|').collect();
        if cells.len() < 4 || cells[1].contains("---") || !cells[1].contains('`') {
            continue;
        }
        let modules = ticked(cells[1]);
        let allowed = if cells[2].contains("every module") {
            None
        } else {
            Some(ticked(cells[2]).into_iter().collect())
        };
        if ground.is_empty() {
            ground = modules.clone();
        }
        for m in modules {
            table.insert(m, allowed.clone());
        }
    }
    assert!(!ground.is_empty(), "the Layers table has no rows");
    (ground, table)
}

/// The top-level module a path names (through the root's re-exports for `crate::Name`).
fn target(path: &[String], names: &BTreeMap<String, String>) -> Option<String> {
    let first = path.first()?;
    if has_child(&[], first) {
        Some(first.clone())
    } else {
        names.get(first).cloned().or_else(|| {
            panic!(
                "`crate::{}` is no module and no re-export of lib.rs",
                path.join("::")
            )
        })
    }
}

/// Every import from one top-level module into another the table does not allow.
fn layer_violations() -> Vec<String> {
    let (ground, table) = layer_table();
    let names = root_names();
    let mut out = Vec::new();
    for file in sources() {
        let here = module_of(&file);
        let Some(top) = here.first() else {
            continue; // lib.rs: the re-exports
        };
        let allowed = table
            .get(top)
            .unwrap_or_else(|| panic!("src/lib.rs's Layers table has no row for `{top}`"));
        let text = std::fs::read_to_string(src().join(&file)).unwrap();
        for (line, path) in paths_of(&code_of(&text)) {
            let Some(abs) = absolute(&here, &path) else {
                continue;
            };
            let Some(to) = target(&abs, &names) else {
                continue;
            };
            let ok = &to == top
                || ground.contains(&to)
                || allowed.as_ref().is_none_or(|a| a.contains(&to));
            if !ok {
                out.push(format!(
                    "src/{}:{line}: `{top}` imports `{to}` ({})",
                    file.display(),
                    path.join("::")
                ));
            }
        }
    }
    out
}

/// The imports between the files of directory module `dir`: file -> files (`mod` for
/// `mod.rs`, which declares every other and so imports them all). An item of `mod.rs`
/// itself, or one reached through its re-exports, is an import of `mod`.
fn file_imports(dir: &str) -> BTreeMap<String, BTreeSet<String>> {
    let names = root_names();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let files: Vec<PathBuf> = sources()
        .into_iter()
        .filter(|f| f.starts_with(dir) && f.components().count() == 2)
        .collect();
    let file_name = |f: &Path| f.file_stem().unwrap().to_str().unwrap().to_string();
    for file in &files {
        let name = file_name(file);
        let edges = graph.entry(name.clone()).or_default();
        if name == "mod" {
            edges.extend(files.iter().map(|f| file_name(f)).filter(|f| f != "mod"));
            continue;
        }
        let here = module_of(file);
        let text = std::fs::read_to_string(src().join(file)).unwrap();
        for (_, path) in paths_of(&code_of(&text)) {
            let Some(abs) = absolute(&here, &path) else {
                continue;
            };
            if target(&abs, &names).as_deref() != Some(dir) {
                continue;
            }
            let to = match abs.get(1) {
                Some(f) if has_child(&[dir.to_string()], f) => f.clone(),
                _ => "mod".to_string(),
            };
            if to != name {
                edges.insert(to);
            }
        }
    }
    graph
}

/// A circle in `graph`, if any, as the files along it.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(n.to_string(), 1);
        stack.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            match state.get(m) {
                Some(1) => {
                    let at = stack.iter().position(|s| s == m).unwrap();
                    let mut c = stack[at..].to_vec();
                    c.push(m.clone());
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
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if !state.contains_key(n) {
            if let Some(c) = visit(n, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_parser_reads_use_trees_and_inline_paths() {
    let code = code_of(
        "use crate::a::{b, c::{d, self}};\n// use crate::x::y;\npub(crate) use e::F as G;\n\
         fn f() { crate::g::h(); let _ = super::super::i::J; }\n#[cfg(test)]\nmod tests {\n\
         use crate::k;\n}\n",
    );
    let paths: Vec<String> = paths_of(&code)
        .into_iter()
        .map(|(_, p)| p.join("::"))
        .collect();
    assert_eq!(
        paths,
        [
            "crate::a::b",
            "crate::a::c::d",
            "crate::a::c",
            "e::F",
            "crate::g::h",
            "super::super::i::J"
        ]
    );
    let here = ["index".to_string(), "build".to_string()];
    let up = |p: &str| p.split("::").map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        absolute(&here, &up("super::rows::X")),
        Some(up("index::rows::X"))
    );
    assert_eq!(
        absolute(&here, &up("super::super::bits::x")),
        Some(up("bits::x"))
    );
    assert_eq!(absolute(&here, &up("std::sync::Arc")), None);
    let graph: BTreeMap<String, BTreeSet<String>> =
        [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"])]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into_iter().map(str::to_string).collect()))
            .collect();
    assert_eq!(circle(&graph).unwrap(), ["a", "b", "c", "a"]);
}

#[test]
fn every_module_imports_only_what_the_layer_table_allows() {
    let (_, table) = layer_table();
    for file in sources() {
        if let Some(top) = module_of(&file).first() {
            assert!(
                table.contains_key(top),
                "src/lib.rs's Layers table has no row for `{top}`"
            );
        }
    }
    let violations = layer_violations();
    assert!(
        violations.is_empty(),
        "imports against the layer table (src/lib.rs, \"Layers\"):\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_files_of_index_import_each_other_without_a_circle() {
    let graph = file_imports("index");
    assert!(graph.len() > 10, "index has its files: {graph:?}");
    if let Some(c) = circle(&graph) {
        panic!(
            "the files of src/index/ import each other in a circle: {} \
             (`mod` is mod.rs: import a sibling file's items by its path, not through mod.rs)",
            c.join(" -> ")
        );
    }
}
