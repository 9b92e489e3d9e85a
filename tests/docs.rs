//! Facts written once are checked against their other appearances: the error codes,
//! the docs' sections that the code cites, the JSON Schema support page, and the layout of
//! the tree (docs/development.md).

use std::collections::BTreeSet;
use std::path::PathBuf;

use logitmask::ErrorKind;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every `.rs` file under `dir` (relative to the crate root).
fn rust_files(dir: &str) -> Vec<PathBuf> {
    crate::common::rust_files_under(&root().join(dir))
}

/// The `## ` and `### ` headings of a markdown file.
fn headings(md: &str) -> BTreeSet<String> {
    md.lines()
        .filter_map(|l| l.strip_prefix("### ").or_else(|| l.strip_prefix("## ")))
        .map(str::to_string)
        .collect()
}

fn all_codes() -> BTreeSet<String> {
    ErrorKind::ALL
        .iter()
        .map(|k| k.code().to_string())
        .collect()
}

/// The backquoted words of `text`.
fn backquoted(text: &str) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn the_semantics_page_lists_exactly_the_error_codes() {
    let md = read("docs/semantics.md");
    let section = md
        .split("\n## Errors\n")
        .nth(1)
        .expect("docs/semantics.md has an Errors section");
    let list = section
        .split("\n\n")
        .find(|p| p.starts_with('`'))
        .expect("a paragraph of the codes");
    assert_eq!(
        backquoted(list),
        all_codes(),
        "docs/semantics.md, \"Errors\""
    );
}

#[test]
fn cited_doc_sections_exist() {
    // Citations read `docs/<page>.md, "<Section>"` or `docs/<page>.md ("<Section>")`,
    // possibly broken over two comment lines.
    let mut checked = 0;
    for file in rust_files("src")
        .into_iter()
        .chain(rust_files("tests"))
        .chain(rust_files("benches"))
    {
        if file.ends_with("tests/docs.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let flat: String = text
            .lines()
            .map(|l| {
                l.trim_start()
                    .trim_start_matches("//!")
                    .trim_start_matches("///")
                    .trim_start_matches("//")
                    .trim()
            })
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = flat.as_str();
        while let Some(at) = rest.find("docs/") {
            rest = &rest[at + 5..];
            let Some(end) = rest.find(".md") else { break };
            let page = &rest[..end];
            if page.is_empty() || page.contains(' ') {
                continue;
            }
            let path = format!("docs/{page}.md");
            assert!(
                root().join(&path).is_file(),
                "{}: cites {path}, which does not exist",
                file.display()
            );
            let after = &rest[end + 3..];
            if let Some(quoted) = after
                .strip_prefix(", \"")
                .or_else(|| after.strip_prefix(" (\""))
            {
                let Some(close) = quoted.find('"') else {
                    panic!(
                        "{}: unclosed section name after {path}: {:?}",
                        file.display(),
                        &quoted[..quoted.len().min(60)]
                    )
                };
                let section = &quoted[..close];
                let heads = headings(&read(&path));
                assert!(
                    heads.contains(section),
                    "{}: cites {path}, \"{section}\": no such section",
                    file.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "only {checked} section citations found");
}

#[test]
fn the_json_schema_support_table_lives_on_one_page() {
    const TABLE: &str = "| keyword | support |";
    assert!(read("docs/json-schema.md").contains(TABLE));
    assert!(
        read("README.md").contains("(docs/json-schema.md)"),
        "README links the JSON Schema page"
    );
    for other in ["README.md", "src/json_schema/mod.rs"] {
        assert!(
            !read(other).contains(TABLE),
            "{other} has its own copy of the support table"
        );
    }
    // Every keyword the table names is one the parser knows of (a typo would hide one).
    let parser: String = rust_files("src/json_schema/schema")
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let md = read("docs/json-schema.md");
    let table = md
        .split(TABLE)
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    for row in table.lines().skip(1) {
        let keywords = row.split('|').nth(1).unwrap();
        for word in backquoted(keywords) {
            if word.chars().all(|c| c.is_ascii_alphanumeric() || c == '$')
                && !["true", "false"].contains(&word.as_str())
            {
                assert!(
                    parser.contains(&format!("\"{word}\"")),
                    "docs/json-schema.md names `{word}`, src/json_schema/schema/ does not"
                );
            }
        }
    }
}

#[test]
fn the_layout_matches_the_tree() {
    // The layout of the sources is for people working in the repository: docs/development.md.
    let page = read("docs/development.md");
    let layout = page
        .split("## Layout\n")
        .nth(1)
        .expect("docs/development.md has a Layout section")
        .split("```")
        .nth(1)
        .unwrap();
    // Every path the layout names exists.
    for word in layout.split_whitespace() {
        let word = word.trim_end_matches([',', ':', ')', '(']);
        if word.starts_with("src/") || word.starts_with("tests/") || word.starts_with("docs/") {
            assert!(
                root().join(word).exists(),
                "the layout names {word}, which does not exist"
            );
        }
    }
    // The layout's entries: a line that starts in the first column opens one (its first
    // word, e.g. `src/automaton/`), the indented lines after it continue it.
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in layout.lines().filter(|l| !l.trim().is_empty()) {
        if line.starts_with(char::is_whitespace) {
            if let Some((_, text)) = entries.last_mut() {
                text.push(' ');
                text.push_str(line.trim());
            }
        } else {
            let key = line.split_whitespace().next().unwrap_or("").to_string();
            entries.push((key, line.to_string()));
        }
    }
    // Every .rs file under src/, at any depth, is named: `src/NAME.rs` as an entry of its
    // own; a file in a directory by its name (and the name of every directory between)
    // in the entry of its top directory, e.g. `expr/` and `interleave.rs` in the
    // `src/automaton/` entry. `mod.rs` files are their directory's entry.
    let mut missing = Vec::new();
    for file in rust_files("src") {
        let rel = file
            .strip_prefix(root())
            .unwrap()
            .to_str()
            .unwrap()
            .replace('\\', "/");
        let parts: Vec<&str> = rel.split('/').collect(); // ["src", ..., "x.rs"]
        let ok = if parts.len() == 2 {
            entries.iter().any(|(key, _)| *key == rel)
        } else {
            let top = format!("src/{}/", parts[1]);
            entries.iter().any(|(key, text)| {
                *key == top
                    && parts[2..parts.len() - 1]
                        .iter()
                        .all(|dir| text.contains(&format!("{dir}/")))
                    && (parts[parts.len() - 1] == "mod.rs" || text.contains(parts[parts.len() - 1]))
            })
        };
        if !ok {
            missing.push(rel);
        }
    }
    assert!(
        missing.is_empty(),
        "docs/development.md, \"Layout\", does not name these files: {missing:#?}\n\
         Name each in the entry of its top directory (`src/<dir>/`), with the directories \
         between (`expr/`) and a few words on what it holds; a file directly in src/ gets \
         an entry of its own (`src/<name>.rs`)."
    );
}

#[test]
fn the_typescript_error_code_union_is_error_kind_all_plus_the_js_entries_codes() {
    let dts = read("src/wasm/types.d.ts");
    let union = dts
        .split("export type ErrorCode =")
        .nth(1)
        .expect("types.d.ts declares ErrorCode");
    let union = union.split(';').next().unwrap();
    // Drop comments, keep the quoted names.
    let mut text = String::new();
    let mut rest = union;
    while let Some(start) = rest.find("/*") {
        text.push_str(&rest[..start]);
        rest = &rest[rest[start..]
            .find("*/")
            .map_or(rest.len(), |e| start + e + 2)..];
    }
    text.push_str(rest);
    let codes: BTreeSet<String> = text
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    let all = all_codes();
    assert!(
        all.is_subset(&codes),
        "ErrorCode misses {:?}",
        all.difference(&codes).collect::<Vec<_>>()
    );
    // The others are thrown by the package's JS entries (js/*.mjs), and nowhere in Rust.
    let js: String = std::fs::read_dir(root().join("js"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mjs"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    for code in codes.difference(&all) {
        assert!(
            js.contains(&format!("\"{code}\"")),
            "ErrorCode names {code}, which neither Rust nor js/ throws"
        );
    }
}

// The JS options, written once in src/wasm/options_table.rs (the bindings accept exactly
// its keys), and their other appearances: types.d.ts, README.md's table, docs/json-schema.md.
#[path = "../src/wasm/options_table.rs"]
mod options_table;
use options_table::{accepted_keys, JS_INTERFACES, JS_OPTIONS};

const OPTIONS_BEGIN: &str = "<!-- js-options:begin -->\n";
const OPTIONS_END: &str = "<!-- js-options:end -->";

/// README.md's table of the JS options, written from the table.
fn options_markdown() -> String {
    let mut md = String::new();
    for interface in JS_INTERFACES {
        md.push_str(&format!("**`{}`**: {}", interface.name, interface.taken_by));
        if let Some(parent) = interface.extends {
            md.push_str(&format!("; the keys of `{parent}`, and"));
        }
        md.push_str("\n\n| option | type | default | |\n| --- | --- | --- | --- |\n");
        for o in JS_OPTIONS.iter().filter(|o| o.interface == interface.name) {
            md.push_str(&format!(
                "| `{}` | `{}` | {} | {} |\n",
                o.name,
                o.ty.replace('|', "\\|"),
                o.default,
                o.doc
            ));
        }
        md.push('\n');
    }
    md
}

/// A member of a TypeScript interface: name, type, doc comment (whitespace collapsed).
struct TsMember {
    name: String,
    ty: String,
    doc: String,
}

/// The `export interface` declarations of a .d.ts: name -> (extends, members).
fn ts_interfaces(dts: &str) -> Vec<(String, Option<String>, Vec<TsMember>)> {
    let mut out = Vec::new();
    let mut rest = dts;
    while let Some(at) = rest.find("export interface ") {
        rest = &rest[at + "export interface ".len()..];
        let head = &rest[..rest.find('{').unwrap()];
        let mut words = head.split_whitespace();
        let name = words.next().unwrap().to_string();
        let extends = match words.next() {
            Some("extends") => Some(words.next().unwrap().to_string()),
            _ => None,
        };
        let body = &rest[head.len() + 1..rest.find("\n}").unwrap()];
        let mut members = Vec::new();
        let mut doc = String::new();
        let mut in_comment = false;
        for line in body.lines().map(str::trim) {
            if in_comment || line.starts_with("/**") {
                let (text, closed) = match line.find("*/") {
                    Some(end) => (&line[..end], true),
                    None => (line, false),
                };
                let text = text.trim_start_matches("/**").trim_start_matches('*');
                doc.push(' ');
                doc.push_str(text.trim());
                in_comment = !closed;
            } else if let Some((name, ty)) = line.split_once("?: ") {
                members.push(TsMember {
                    name: name.to_string(),
                    ty: ty.trim_end_matches(';').to_string(),
                    doc: doc.split_whitespace().collect::<Vec<_>>().join(" "),
                });
                doc.clear();
            }
        }
        out.push((name, extends, members));
    }
    out
}

#[test]
fn the_typescript_options_interfaces_declare_exactly_the_options_table() {
    let dts = read("src/wasm/types.d.ts");
    let interfaces = ts_interfaces(&dts);
    let declared: BTreeSet<&str> = interfaces
        .iter()
        .map(|(n, _, _)| n.as_str())
        .filter(|n| n.ends_with("Options"))
        .collect();
    let tabled: BTreeSet<&str> = JS_INTERFACES.iter().map(|i| i.name).collect();
    assert_eq!(
        declared, tabled,
        "types.d.ts's options interfaces against src/wasm/options_table.rs's JS_INTERFACES"
    );
    for interface in JS_INTERFACES {
        let (_, extends, members) = interfaces
            .iter()
            .find(|(n, _, _)| n == interface.name)
            .unwrap();
        assert_eq!(
            extends.as_deref(),
            interface.extends,
            "types.d.ts: what {} extends",
            interface.name
        );
        let rows: Vec<_> = JS_OPTIONS
            .iter()
            .filter(|o| o.interface == interface.name)
            .collect();
        let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
        let expected: Vec<&str> = rows.iter().map(|o| o.name).collect();
        assert_eq!(
            names, expected,
            "types.d.ts declares these members of {} (src/wasm/options_table.rs is the list)",
            interface.name
        );
        for (member, row) in members.iter().zip(rows) {
            assert_eq!(
                member.ty, row.ty,
                "types.d.ts: the type of {}.{}",
                interface.name, row.name
            );
            let default = row.default;
            assert!(
                member.doc.contains(&format!("default {default}"))
                    || member.doc.contains(&format!("Default: {default}")),
                "types.d.ts: the doc comment of {}.{} should give its default as \
                 options_table.rs does (\"default {default}\"): {:?}",
                interface.name,
                row.name,
                member.doc
            );
        }
    }
}

#[test]
fn the_readme_table_of_options_is_written_from_the_options_table() {
    let path = root().join("README.md");
    let readme = read("README.md");
    let (before, rest) = readme
        .split_once(OPTIONS_BEGIN)
        .expect("README.md has <!-- js-options:begin -->");
    let (block, after) = rest
        .split_once(OPTIONS_END)
        .expect("README.md has <!-- js-options:end -->");
    let want = options_markdown();
    if block != want {
        if std::env::var_os("LOGITMASK_UPDATE_DOCS").is_some() {
            std::fs::write(
                &path,
                format!("{before}{OPTIONS_BEGIN}{want}{OPTIONS_END}{after}"),
            )
            .unwrap();
            return;
        }
        panic!(
            "README.md's table of options (between {OPTIONS_BEGIN:?} and {OPTIONS_END:?}) is \
             not the one src/wasm/options_table.rs gives: edit that table, then \
             `LOGITMASK_UPDATE_DOCS=1 cargo test --test lib docs::` writes it.\n\
             Expected:\n{want}"
        );
    }
    // No other page lists the options with their defaults: the options of one interface
    // appear together in no other table.
    assert!(
        !before.contains("| `lazy` |") && !after.contains("| `lazy` |"),
        "README.md has a second table of the options"
    );
}

/// js/options.mjs: the keys of each options interface, for the JS code that splits one
/// options object between calls (js/build-job.mjs, js/builder-core.mjs), written from the
/// table.
fn options_module() -> String {
    let mut js = String::from(
        "// Written from src/wasm/options_table.rs by tests/docs.rs: do not edit; after a change to\n\
         // that table, `LOGITMASK_UPDATE_DOCS=1 cargo test --test lib docs::` writes it again.\n\
         // The keys each options interface of the API accepts (an interface that extends another\n\
         // accepts its keys too), for JS code that splits one options object between calls.\n\
         export const OPTION_KEYS = Object.freeze({\n",
    );
    for interface in JS_INTERFACES {
        let keys: Vec<String> = accepted_keys(&[interface.name])
            .iter()
            .map(|k| format!("\"{k}\""))
            .collect();
        js.push_str(&format!(
            "  {}: Object.freeze([{}]),\n",
            interface.name,
            keys.join(", ")
        ));
    }
    js.push_str("});\n");
    js
}

#[test]
fn the_js_option_keys_are_written_from_the_options_table() {
    let path = root().join("js/options.mjs");
    let want = options_module();
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        if std::env::var_os("LOGITMASK_UPDATE_DOCS").is_some() {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        panic!(
            "js/options.mjs is not what src/wasm/options_table.rs gives: \
             `LOGITMASK_UPDATE_DOCS=1 cargo test --test lib docs::` writes it.\nExpected:\n{want}"
        );
    }
}

#[test]
fn the_json_schema_page_names_exactly_the_json_schema_options() {
    let md = read("docs/json-schema.md");
    let table = md
        .split("\n## Options\n")
        .nth(1)
        .expect("docs/json-schema.md has an Options section")
        .split("\n\n")
        .map(str::trim_start)
        .find(|p| p.starts_with('|'))
        .expect("a table");
    let mut names = Vec::new();
    for row in table.lines().skip(2) {
        let js = row
            .replace("\\|", "/")
            .split('|')
            .nth(2)
            .unwrap()
            .to_string();
        let first = js
            .split('`')
            .nth(1)
            .unwrap_or_else(|| panic!("docs/json-schema.md, Options: no JS name in {row:?}"));
        names.push(first.split([':', ' ']).next().unwrap().to_string());
    }
    let expected: Vec<String> = accepted_keys(&["JsonSchemaOptions"])
        .into_iter()
        .map(str::to_string)
        .collect();
    assert_eq!(
        names.iter().collect::<BTreeSet<_>>(),
        expected.iter().collect::<BTreeSet<_>>(),
        "docs/json-schema.md's Options table against src/wasm/options_table.rs"
    );
}

/// `1437120` -> `1,437,120`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn the_wasm_size_is_given_once_and_is_the_built_one() {
    // scripts/build-wasm.sh writes the size of a release build between these markers.
    const BEGIN: &str = "<!-- wasm-size:begin -->";
    const END: &str = "<!-- wasm-size:end -->";
    let readme = read("README.md");
    assert_eq!(
        readme.matches(BEGIN).count(),
        1,
        "README.md has one {BEGIN}"
    );
    let block = readme
        .split(BEGIN)
        .nth(1)
        .unwrap()
        .split(END)
        .next()
        .unwrap();
    assert!(
        block.contains("KiB gzipped"),
        "the wasm size block: {block:?}"
    );
    // Nowhere else: README and docs point to the block instead of giving a size.
    for page in std::iter::once("README.md".to_string()).chain(
        std::fs::read_dir(root().join("docs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .map(|p| format!("docs/{}", p.file_name().unwrap().to_str().unwrap())),
    ) {
        let text = read(&page).replace(block, "");
        assert!(
            !text.contains("KiB gzipped") && !text.contains("KiB raw"),
            "{page} gives a wasm size of its own: point to README.md's {BEGIN} block instead"
        );
    }
    // Against the build present, when it is a release build.
    let wasm = root().join("pkg/web/logitmask_bg.wasm");
    let profile = std::fs::read_to_string(root().join("pkg/build-profile")).unwrap_or_default();
    if !wasm.is_file() || profile.trim() != "wasm-release" {
        eprintln!("no release build in pkg/: the wasm size block is not checked against one");
        return;
    }
    let raw = std::fs::metadata(&wasm).unwrap().len();
    let Ok(out) = std::process::Command::new("gzip")
        .args(["-9", "-c"])
        .arg(&wasm)
        .output()
    else {
        eprintln!("no gzip: the wasm size block is not checked");
        return;
    };
    let gz = out.stdout.len() as u64;
    let kib = |n: u64| thousands((n as f64 / 1024.0).round() as u64);
    let want = format!(
        "{} KiB gzipped, {} KiB raw ({} and {} bytes)",
        kib(gz),
        kib(raw),
        thousands(gz),
        thousands(raw)
    );
    assert_eq!(
        block, want,
        "README.md's wasm size block is not the size of pkg/web/logitmask_bg.wasm: \
         scripts/build-wasm.sh rewrites it (a release build)"
    );
}
