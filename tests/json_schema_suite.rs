//! The JSON-Schema-Test-Suite (draft 2020-12, `tests/testdata/json-schema-test-suite/`)
//! against the JSON Schema compiler, through the automaton an index builds
//! (`Index::from_json_schema_str`, lazy, over single-byte tokens), which intersects
//! and complements where regex text cannot; formats are assertions in the suite's
//! `optional/format/` files only (elsewhere an unknown format is an annotation).
//!
//! For every schema that compiles:
//! * no invalid instance may match, in any key order of its objects (false positives
//!   must be zero: a generation that the regex allows would parse to an invalid value);
//! * every valid instance should match in the form the regex targets: compact, declared
//!   properties in schema order (following `$ref`, `allOf`, and for `anyOf`/`oneOf` the
//!   order of some branch) then the others in instance order, numbers as
//!   `JSON.stringify` writes them.
//!
//! Per-file counts are compared with the committed baseline
//! `tests/testdata/json-schema-suite-baseline.json`: fewer compiled schemas or matched
//! valid instances than the baseline is a regression and fails. Run with
//! `LOGITMASK_UPDATE_BASELINE=1` to rewrite the baseline after an improvement.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use logitmask::json_schema::Config;
use logitmask::{ErrorKind, Index, IndexConfig, Vocabulary};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value that keeps object keys in document order and numbers as read.
#[derive(Clone, Debug)]
enum J {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl<'de> Deserialize<'de> for J {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<J, D::Error> {
        d.deserialize_any(JV)
    }
}

struct JV;

impl<'de> Visitor<'de> for JV {
    type Value = J;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E>(self) -> Result<J, E> {
        Ok(J::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<J, E> {
        Ok(J::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<J, E> {
        Ok(J::Int(v as i128))
    }
    fn visit_u64<E>(self, v: u64) -> Result<J, E> {
        Ok(J::Int(v as i128))
    }
    fn visit_f64<E>(self, v: f64) -> Result<J, E> {
        Ok(J::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<J, E> {
        Ok(J::Str(v.to_string()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<J, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = a.next_element()? {
            v.push(x);
        }
        Ok(J::Arr(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<J, A::Error> {
        let mut v: Vec<(String, J)> = Vec::new();
        while let Some((k, x)) = a.next_entry::<String, J>()? {
            v.push((k, x));
        }
        Ok(J::Obj(v))
    }
}

impl J {
    fn get(&self, k: &str) -> Option<&J> {
        match self {
            J::Obj(m) => m.iter().find(|(x, _)| x == k).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Schema text: compact, keys in order, numbers as written (integers exact).
    fn schema_text(&self, out: &mut String) {
        match self {
            J::Int(i) => out.push_str(&i.to_string()),
            J::Float(f) => out.push_str(&js_number(*f)),
            J::Arr(v) => {
                out.push('[');
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    x.schema_text(out);
                }
                out.push(']');
            }
            J::Obj(m) => {
                out.push('{');
                for (i, (k, x)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(k).unwrap());
                    out.push(':');
                    x.schema_text(out);
                }
                out.push('}');
            }
            other => other.scalar(out),
        }
    }

    /// A scalar as `JSON.stringify` writes it (numbers through f64, as JavaScript reads them).
    fn scalar(&self, out: &mut String) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Int(i) => out.push_str(&js_number(*i as f64)),
            J::Float(f) => out.push_str(&js_number(*f)),
            J::Str(s) => out.push_str(&serde_json::to_string(s).unwrap()),
            _ => unreachable!(),
        }
    }
}

/// JavaScript's `Number.prototype.toString`.
fn js_number(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let e = format!("{:e}", x.abs()); // shortest round-trip digits: d.ddde[-]n
    let (mant, exp) = e.split_once('e').unwrap();
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i64;
    let n = exp.parse::<i64>().unwrap() + 1;
    if k <= n && n <= 21 {
        format!("{sign}{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{sign}{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let e = n - 1;
        let es = if e < 0 { "-" } else { "+" };
        if k == 1 {
            format!("{sign}{digits}e{es}{}", e.abs())
        } else {
            format!("{sign}{}.{}e{es}{}", &digits[..1], &digits[1..], e.abs())
        }
    }
}

/// The schemas that apply to one place of an instance, for key ordering.
struct Orderer<'a> {
    root: &'a J,
}

impl<'a> Orderer<'a> {
    fn deref(&self, s: &'a J) -> Option<&'a J> {
        let r = match s.get("$ref") {
            Some(J::Str(r)) => r,
            _ => return None,
        };
        let path = r.strip_prefix('#')?;
        let mut node = self.root;
        if path.is_empty() {
            return Some(node);
        }
        for t in path.strip_prefix('/')?.split('/') {
            let t = t.replace("~1", "/").replace("~0", "~");
            node = match node {
                J::Obj(_) => node.get(&t)?,
                J::Arr(v) => v.get(t.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// The schemas merged into `s` in the compiler's order: `s` itself, its `$ref`
    /// target, its `allOf` parts (recursively), then one branch of each
    /// `anyOf`/`oneOf`. Several candidates when branches differ.
    fn parts(&self, s: &'a J, depth: usize) -> Vec<Vec<&'a J>> {
        if depth > 8 || !matches!(s, J::Obj(_)) {
            return vec![vec![]];
        }
        let mut cands: Vec<Vec<&'a J>> = vec![vec![s]];
        let mut more: Vec<&'a J> = Vec::new();
        if let Some(t) = self.deref(s) {
            more.push(t);
        }
        if let Some(J::Arr(parts)) = s.get("allOf") {
            more.extend(parts.iter());
        }
        for m in more {
            let sub = self.parts(m, depth + 1);
            cands = product(&cands, &sub);
        }
        for g in ["anyOf", "oneOf"] {
            if let Some(J::Arr(branches)) = s.get(g) {
                let mut alts: Vec<Vec<&'a J>> = Vec::new();
                for b in branches {
                    alts.extend(self.parts(b, depth + 1));
                }
                cands = product(&cands, &alts);
            }
        }
        cands.truncate(16);
        cands
    }

    /// Declared property order of a merged schema.
    fn declared(parts: &[&J]) -> Vec<String> {
        let mut props: Vec<String> = Vec::new();
        let mut req: Vec<String> = Vec::new();
        for p in parts {
            if let Some(J::Obj(m)) = p.get("properties") {
                for (k, _) in m {
                    if !props.contains(k) {
                        props.push(k.clone());
                    }
                }
            }
            if let Some(J::Arr(r)) = p.get("required") {
                for k in r {
                    if let J::Str(k) = k {
                        if !req.contains(k) {
                            req.push(k.clone());
                        }
                    }
                }
            }
        }
        for r in req {
            if !props.contains(&r) {
                props.push(r);
            }
        }
        props
    }

    /// Schemas for member `k` of an object under `parts`.
    fn member_schemas(parts: &[&'a J], k: &str) -> Vec<&'a J> {
        let mut out = Vec::new();
        for p in parts {
            match p.get("properties").and_then(|m| m.get(k)) {
                Some(s) => out.push(s),
                None => {
                    if let Some(a) = p.get("additionalProperties") {
                        out.push(a);
                    }
                }
            }
        }
        out
    }

    /// Schemas for item `i` of an array under `parts`.
    fn item_schemas(parts: &[&'a J], i: usize) -> Vec<&'a J> {
        let mut out = Vec::new();
        for p in parts {
            let prefix = match (p.get("prefixItems"), p.get("items")) {
                (Some(J::Arr(v)), _) | (None, Some(J::Arr(v))) => Some(v),
                _ => None,
            };
            match prefix.and_then(|v| v.get(i)) {
                Some(s) => out.push(s),
                None => {
                    let rest = if matches!(p.get("items"), Some(J::Arr(_))) {
                        p.get("additionalItems")
                    } else {
                        p.get("items")
                    };
                    if let Some(r) = rest {
                        out.push(r);
                    }
                }
            }
        }
        out
    }

    /// Target-form serializations of `v` under the schemas `schemas` (all apply).
    fn serialize(&self, v: &J, schemas: &[&'a J], out_cap: usize) -> Vec<String> {
        match v {
            J::Arr(items) => {
                let mut acc = vec![String::from("[")];
                for (i, x) in items.iter().enumerate() {
                    let cands = self.merged_candidates(schemas);
                    let mut subs: Vec<String> = Vec::new();
                    for parts in &cands {
                        let sch = Self::item_schemas(parts, i);
                        for s in self.serialize(x, &sch, out_cap) {
                            if !subs.contains(&s) {
                                subs.push(s);
                            }
                        }
                    }
                    acc = join(&acc, &subs, if i > 0 { "," } else { "" }, out_cap);
                }
                acc.into_iter().map(|a| a + "]").collect()
            }
            J::Obj(members) => {
                let mut outs = Vec::new();
                for parts in self.merged_candidates(schemas) {
                    let declared = Self::declared(&parts);
                    let mut order: Vec<usize> = Vec::new();
                    for d in &declared {
                        if let Some(i) = members.iter().position(|(k, _)| k == d) {
                            order.push(i);
                        }
                    }
                    for i in 0..members.len() {
                        if !order.contains(&i) {
                            order.push(i);
                        }
                    }
                    let mut acc = vec![String::from("{")];
                    for (n, &i) in order.iter().enumerate() {
                        let (k, x) = &members[i];
                        let sch = Self::member_schemas(&parts, k);
                        let subs = self.serialize(x, &sch, out_cap);
                        let head = format!(
                            "{}{}:",
                            if n > 0 { "," } else { "" },
                            serde_json::to_string(k).unwrap()
                        );
                        acc = join(&acc, &subs, &head, out_cap);
                    }
                    for a in acc {
                        let s = a + "}";
                        if !outs.contains(&s) && outs.len() < out_cap {
                            outs.push(s);
                        }
                    }
                }
                outs
            }
            _ => {
                let mut s = String::new();
                v.scalar(&mut s);
                vec![s]
            }
        }
    }

    fn merged_candidates(&self, schemas: &[&'a J]) -> Vec<Vec<&'a J>> {
        let mut cands: Vec<Vec<&'a J>> = vec![vec![]];
        for s in schemas {
            cands = product(&cands, &self.parts(s, 0));
        }
        cands.truncate(16);
        cands
    }
}

fn product<'a>(a: &[Vec<&'a J>], b: &[Vec<&'a J>]) -> Vec<Vec<&'a J>> {
    let mut out = Vec::new();
    for x in a {
        for y in b {
            if out.len() >= 16 {
                return out;
            }
            let mut z = x.clone();
            z.extend(y.iter().copied());
            out.push(z);
        }
    }
    out
}

fn join(acc: &[String], subs: &[String], sep: &str, cap: usize) -> Vec<String> {
    let mut next = Vec::new();
    for a in acc {
        for s in subs {
            if next.len() >= cap {
                return next;
            }
            next.push(format!("{a}{sep}{s}"));
        }
    }
    next
}

/// Every key order of every object in `v` (capped).
fn all_orders(v: &J, cap: usize) -> Vec<String> {
    match v {
        J::Arr(items) => {
            let mut acc = vec![String::from("[")];
            for (i, x) in items.iter().enumerate() {
                acc = join(&acc, &all_orders(x, cap), if i > 0 { "," } else { "" }, cap);
            }
            acc.into_iter().map(|a| a + "]").collect()
        }
        J::Obj(members) => {
            let mut outs = Vec::new();
            for perm in permutations(members.len()) {
                let mut acc = vec![String::from("{")];
                for (n, &i) in perm.iter().enumerate() {
                    let (k, x) = &members[i];
                    let head = format!(
                        "{}{}:",
                        if n > 0 { "," } else { "" },
                        serde_json::to_string(k).unwrap()
                    );
                    acc = join(&acc, &all_orders(x, cap), &head, cap);
                }
                outs.extend(acc.into_iter().map(|a| a + "}"));
                if outs.len() >= cap {
                    break;
                }
            }
            outs
        }
        _ => {
            let mut s = String::new();
            v.scalar(&mut s);
            vec![s]
        }
    }
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    if n > 6 {
        return vec![(0..n).collect()];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

/// Counts of one file. `valid`/`invalid` count the instances of compiled schemas only.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Counts {
    schemas: usize,
    compiled: usize,
    unsupported: usize,
    valid: usize,
    valid_matched: usize,
    invalid: usize,
    invalid_rejected: usize,
}

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/json-schema-test-suite")
}

fn baseline_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/json-schema-suite-baseline.json")
}

fn files() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, PathBuf)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let r = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if p.is_dir() {
                walk(&p, &r, out);
            } else if name.ends_with(".json") {
                out.push((r, p));
            }
        }
    }
    walk(&suite_dir(), "", &mut out);
    out
}

/// Runs every file under `config`; returns per-file counts, false positives, and
/// refusals by error kind.
/// Whole-text matching through an index over single-byte tokens: the schema's automaton
/// as `Index::from_json_schema_str` builds it (the path that can intersect and complement).
struct IndexMatcher<'a>(&'a Index);

impl IndexMatcher<'_> {
    fn is_match(&self, text: &[u8]) -> bool {
        let mut s = self.0.initial_state();
        for &b in text {
            match self.0.next_state(s, b as u32) {
                Ok(Some(t)) => s = t,
                _ => return false,
            }
        }
        self.0.is_final(s).unwrap_or(false)
    }
}

fn bytes_vocab() -> Arc<Vocabulary> {
    let tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).chain([None]).collect();
    Arc::new(Vocabulary::new(tokens, &[256]).unwrap())
}

fn run_suite(
    config: &Config,
    verbose: bool,
) -> (
    BTreeMap<String, Counts>,
    Vec<String>,
    BTreeMap<&'static str, usize>,
) {
    let vocab = bytes_vocab();
    let mut results: BTreeMap<String, Counts> = BTreeMap::new();
    let mut false_positives: Vec<String> = Vec::new();
    let mut errors_by_kind: BTreeMap<&'static str, usize> = BTreeMap::new();
    for (name, path) in files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let groups: J = serde_json::from_str(&text).unwrap();
        let J::Arr(groups) = groups else {
            panic!("{name}: not an array")
        };
        let mut c = Counts::default();
        for g in &groups {
            let desc = match g.get("description") {
                Some(J::Str(s)) => s.clone(),
                _ => String::new(),
            };
            let schema = g.get("schema").unwrap();
            let J::Arr(tests) = g.get("tests").unwrap() else {
                panic!()
            };
            c.schemas += 1;
            let nvalid = tests
                .iter()
                .filter(|t| matches!(t.get("valid"), Some(J::Bool(true))))
                .count();
            let mut text = String::new();
            schema.schema_text(&mut text);
            // Formats are assertions in the suite's optional/format tests only.
            let file_config = if name.starts_with("optional/format/") {
                config.clone().unknown_formats_are_errors(true)
            } else {
                config.clone()
            };
            let index = match Index::from_json_schema_str(
                &text,
                &vocab,
                &IndexConfig::new().lazy(true),
                &file_config,
            ) {
                Ok(r) => r,
                Err(e) => {
                    c.unsupported += 1;
                    *errors_by_kind.entry(e.kind().code()).or_default() += 1;
                    if verbose {
                        println!("  [{name}] {desc}: {e}");
                    }
                    // Refusals are only ever these kinds.
                    assert!(
                        matches!(
                            e.kind(),
                            ErrorKind::UnsupportedSchema
                                | ErrorKind::InvalidSchema
                                | ErrorKind::DfaTooLarge
                                | ErrorKind::BuildTooExpensive
                        ),
                        "{name} / {desc}: unexpected error kind {e:?}"
                    );
                    continue;
                }
            };
            let dfa = IndexMatcher(&index);
            c.compiled += 1;
            c.valid += nvalid;
            c.invalid += tests.len() - nvalid;
            let orderer = Orderer { root: schema };
            for t in tests {
                let data = t.get("data").unwrap();
                let tdesc = match t.get("description") {
                    Some(J::Str(s)) => s.clone(),
                    _ => String::new(),
                };
                if matches!(t.get("valid"), Some(J::Bool(true))) {
                    let forms = orderer.serialize(data, &[schema], 64);
                    if forms.iter().any(|f| dfa.is_match(f.as_bytes())) {
                        c.valid_matched += 1;
                    } else if verbose {
                        println!(
                            "  [{name}] {desc} / {tdesc}: valid instance not matched: {}",
                            forms[0]
                        );
                    }
                } else {
                    let forms = all_orders(data, 5000);
                    match forms.iter().find(|f| dfa.is_match(f.as_bytes())) {
                        Some(f) => false_positives.push(format!("{name} / {desc} / {tdesc}: {f}")),
                        None => c.invalid_rejected += 1,
                    }
                }
            }
        }
        results.insert(name, c);
    }
    (results, false_positives, errors_by_kind)
}

/// JSON Schema's own semantics: undeclared properties allowed where
/// `additionalProperties` is absent.
#[test]
fn suite_json_schema_semantics() {
    check(
        "semantics",
        &Config::new().allow_additional_properties(true),
    );
}

/// The defaults (no undeclared properties next to declared ones).
#[test]
fn suite_default_config() {
    check("defaults", &Config::new());
}

fn check(section: &str, config: &Config) {
    let verbose = std::env::var("LOGITMASK_SUITE_VERBOSE").is_ok();
    let (results, false_positives, errors_by_kind) = run_suite(config, verbose);
    let mut total = Counts::default();
    let mut table = format!(
        "[{section}]\n{:<45} {:>7} {:>8} {:>11} {:>13} {:>15}\n",
        "file", "schemas", "compiled", "unsupported", "valid matched", "invalid rejected"
    );
    for (name, c) in &results {
        table.push_str(&format!(
            "{:<45} {:>7} {:>8} {:>11} {:>7}/{:<5} {:>8}/{:<6}\n",
            name,
            c.schemas,
            c.compiled,
            c.unsupported,
            c.valid_matched,
            c.valid,
            c.invalid_rejected,
            c.invalid
        ));
        total.schemas += c.schemas;
        total.compiled += c.compiled;
        total.unsupported += c.unsupported;
        total.valid += c.valid;
        total.valid_matched += c.valid_matched;
        total.invalid += c.invalid;
        total.invalid_rejected += c.invalid_rejected;
    }
    table.push_str(&format!(
        "TOTAL [{section}]: {} schemas, {} compiled, {} refused ({:?}); valid instances matched {}/{}; invalid instances rejected {}/{}\n",
        total.schemas, total.compiled, total.unsupported, errors_by_kind, total.valid_matched, total.valid, total.invalid_rejected, total.invalid
    ));
    println!("{table}");

    assert!(
        false_positives.is_empty(),
        "invalid instances accepted (false positives):\n{}",
        false_positives.join("\n")
    );

    // The baseline file holds one section per configuration; each test rewrites its own.
    let update = std::env::var("LOGITMASK_UPDATE_BASELINE").is_ok_and(|v| v == "1");
    let _guard = BASELINE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut file: BaselineFile = std::fs::read_to_string(baseline_path())
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    if update {
        file.about = "Per-file results of tests/json_schema_suite.rs, one section per configuration; regenerate with LOGITMASK_UPDATE_BASELINE=1 cargo test --test lib json_schema_suite::".into();
        file.sections.insert(
            section.to_string(),
            Section {
                total,
                files: results,
            },
        );
        std::fs::write(
            baseline_path(),
            serde_json::to_string_pretty(&file).unwrap() + "\n",
        )
        .unwrap();
        println!("baseline [{section}] rewritten");
        return;
    }
    let Some(baseline) = file.sections.get(section) else {
        panic!(
            "no baseline section [{section}] in {}: run with LOGITMASK_UPDATE_BASELINE=1",
            baseline_path().display()
        );
    };
    let mut regressions = Vec::new();
    let mut improvements = Vec::new();
    for (name, base) in &baseline.files {
        let Some(now) = results.get(name) else {
            regressions.push(format!("{name}: missing"));
            continue;
        };
        if now.compiled < base.compiled || now.valid_matched < base.valid_matched {
            regressions.push(format!(
                "{name}: compiled {} (baseline {}), valid matched {} (baseline {})",
                now.compiled, base.compiled, now.valid_matched, base.valid_matched
            ));
        } else if now.compiled > base.compiled || now.valid_matched > base.valid_matched {
            improvements.push(format!(
                "{name}: compiled {} -> {}, valid matched {} -> {}",
                base.compiled, now.compiled, base.valid_matched, now.valid_matched
            ));
        }
    }
    if !improvements.is_empty() {
        println!(
            "[{section}] improvements over the baseline (rewrite it with LOGITMASK_UPDATE_BASELINE=1):\n{}",
            improvements.join("\n")
        );
    }
    assert!(
        regressions.is_empty(),
        "[{section}] regressions against the baseline:\n{}",
        regressions.join("\n")
    );
}

static BASELINE_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[derive(Default, serde::Serialize, serde::Deserialize)]
struct BaselineFile {
    about: String,
    sections: BTreeMap<String, Section>,
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Section {
    total: Counts,
    files: BTreeMap<String, Counts>,
}
