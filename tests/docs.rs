//! Facts written once are checked against their other appearances: the error codes,
//! the docs' sections that the code cites, the JSON Schema support page, and the layout of
//! the tree (docs/development.md).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use logitmask::ErrorKind;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every `.rs` file under `dir` (relative to the crate root).
fn rust_files(dir: &str) -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join(dir), &mut out);
    out.sort();
    out
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
    // Every module of src/ and every file of its directories is named.
    for entry in std::fs::read_dir(root().join("src")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let shown = if path.is_dir() {
            format!("src/{name}/")
        } else {
            format!("src/{name}")
        };
        assert!(layout.contains(&shown), "the layout omits {shown}");
        if path.is_dir() {
            for file in std::fs::read_dir(&path).unwrap() {
                let file = file.unwrap().file_name().into_string().unwrap();
                if file != "mod.rs" {
                    assert!(layout.contains(&file), "the layout omits src/{name}/{file}");
                }
            }
        }
    }
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
