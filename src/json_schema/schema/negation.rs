//! Complements of schemas: a schema of the values a schema refuses (exact where JSON
//! Schema can say it, else a subset), for `not`, `if` without its condition, and
//! `oneOf`.

use super::super::json::Json;
use super::super::number::Decimal;
use super::parse::{count, number, parse_types};
use super::{is_annotation, resolve_uri, Doc, Draft, SOME_KEY_NOT_IN};
use super::{ALL_TYPES, ARRAY, BOOLEAN, INTEGER, NULL, NUMBER, OBJECT, STRING};

/// Subschemas all the complements of one document may visit (each `not`, `if` and
/// `oneOf` branch takes one; a complement parsed may hold more `not`s and `if`s): past
/// it complements are given up (a subset taken, or none), so that a schema whose
/// complements feed each other cannot take seconds (one took 28 s before).
pub(super) const MAX_COMPLEMENT_VISITS: usize = 50_000;

/// The keywords whose complements a coarse `oneOf` complement leaves out
/// ([`Doc::coarse_one_of`]).
const REFINING_COMPLEMENTS: [&str; 19] = [
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "pattern",
    "items",
    "contains",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
];

/// What [`Doc::complement`] has visited, and whether it has dropped anything yet.
struct ComplementWork {
    visited: usize,
    lossless: bool,
}

impl Default for ComplementWork {
    fn default() -> Self {
        ComplementWork {
            visited: 0,
            lossless: true,
        }
    }
}

impl ComplementWork {
    /// Gives up on a part: no complement when it must be exact, else an empty part.
    fn lose(&mut self, exact: bool) -> Option<Json> {
        self.lossless = false;
        (!exact).then_some(Json::Bool(false))
    }
}

/// The types a value has (a number: both number types, whatever its value).
fn value_type(v: &Json) -> u8 {
    match v {
        Json::Null => NULL,
        Json::Bool(_) => BOOLEAN,
        Json::Number(_) => NUMBER | INTEGER,
        Json::String(_) => STRING,
        Json::Array(_) => ARRAY,
        Json::Object(_) => OBJECT,
    }
}

impl Doc<'_> {
    /// A schema that validates exactly the instances `schema` does not, for the forms
    /// whose complement JSON Schema itself can say: `required` (a property that must be
    /// absent is `properties: {p: false}`), `type` (the other types), booleans,
    /// `properties` (present with a value in the complement of its schema), `enum` and
    /// `const` (strings, booleans and null by `not: {enum}`, numbers by the open
    /// intervals between them), `pattern` (`not: {pattern}`), bounds, lengths and
    /// counts (the opposite bound on the same type), `items` (`contains` of the
    /// complement), `contains`, dependencies, `if`/`then`/`else`, and
    /// `anyOf`/`allOf`/`oneOf`'s branches'/`not`/`$ref` over those (De Morgan). `None` for
    /// anything else. Being a schema, the complement is compiled like any other, so the
    /// compiler's own approximations (property order, number spellings, depth cuts)
    /// stay on the safe side.
    fn negate(&self, schema: &Json, base: &str) -> Option<Json> {
        self.complement(schema, base, 0, true, &mut ComplementWork::default())
    }

    /// The exact complement ([`Doc::negate`]) where it can be said, else a subset of it
    /// that is not empty; `None` where nothing of it can be said.
    pub(super) fn negate_or_part(&self, schema: &Json, base: &str) -> Option<Json> {
        self.negate(schema, base).or_else(|| {
            let part = self.complement(schema, base, 0, false, &mut ComplementWork::default());
            part.filter(|c| !matches!(c, Json::Bool(false)))
        })
    }

    /// Per `oneOf` branch: a schema of values that fail it (`false` where none is known),
    /// and whether that is all of them ([`OneOf::complements`](super::OneOf::complements)).
    pub(super) fn one_of_complements(&self, branches: &[Json], base: &str) -> Vec<(Json, bool)> {
        branches
            .iter()
            .map(|b| {
                let mut work = ComplementWork::default();
                let c = self.complement(b, base, 0, false, &mut work);
                let exact = work.lossless && c.is_some();
                (c.unwrap_or(Json::Bool(false)), exact)
            })
            .collect()
    }

    /// The complement of `schema`, exact when `exact` (else `None` where it cannot be
    /// said); otherwise a subset of it: the complement of a larger schema, the keywords it
    /// cannot say being dropped from `schema` (`false` where nothing is left). A subset
    /// of the complement is what `oneOf` needs: a branch intersected with it may allow
    /// fewer values than it should, never a value that also satisfies the other branch.
    /// `work` counts the subschemas visited (references are followed, so it is bounded).
    fn complement(
        &self,
        schema: &Json,
        base: &str,
        depth: usize,
        exact: bool,
        work: &mut ComplementWork,
    ) -> Option<Json> {
        const MAX_DEPTH: usize = 16;
        const MAX_WORK: usize = 4096;
        const MAX_ALTERNATIVES: usize = 4;
        work.visited += 1;
        let total = self.complement_visits.get() + 1;
        self.complement_visits.set(total);
        if depth > MAX_DEPTH || work.visited > MAX_WORK || total > MAX_COMPLEMENT_VISITS {
            return work.lose(exact);
        }
        let members = match schema {
            Json::Bool(b) => return Some(Json::Bool(!b)),
            Json::Object(m) => m,
            _ => return work.lose(exact),
        };
        // Before 2019-09 a `$ref`'s siblings are ignored: the schema is its target.
        let legacy_ref = self.draft != Draft::Modern && schema.get("$ref").is_some();
        let members: Vec<&(String, Json)> = members
            .iter()
            .filter(|(k, _)| !legacy_ref || k == "$ref")
            .collect();
        let obj = |k: &str, v: Json| Json::Object(vec![(k.to_string(), v)]);
        let absent = |name: &String| obj("properties", obj(name, Json::Bool(false)));
        let typed = |t: &str, k: &str, v: Json| {
            Json::Object(vec![
                ("type".to_string(), Json::String(t.to_string())),
                (k.to_string(), v),
            ])
        };
        let sibling = |k: &str| schema.get(k);
        let types_but = |types: u8, work: &mut ComplementWork| -> Option<Json> {
            let mut rest = ALL_TYPES & !types;
            if rest & NUMBER != 0 && rest & INTEGER == 0 {
                // "Numbers that are not integers" has no type name; a subset leaves them out.
                if exact {
                    return None;
                }
                rest &= !NUMBER;
                work.lossless = false;
            }
            let mut names = Vec::new();
            for (bit, name) in [
                (NULL, "null"),
                (BOOLEAN, "boolean"),
                (OBJECT, "object"),
                (ARRAY, "array"),
                (STRING, "string"),
            ] {
                if rest & bit != 0 {
                    names.push(Json::String(name.to_string()));
                }
            }
            if rest & NUMBER != 0 {
                names.push(Json::String("number".to_string()));
            } else if rest & INTEGER != 0 {
                names.push(Json::String("integer".to_string()));
            }
            Some(if names.is_empty() {
                Json::Bool(false)
            } else {
                obj("type", Json::array(names))
            })
        };
        // not (A and B and ...) = (not A) or (not B) or ...; a keyword left out of a
        // subset adds no alternative (its complement taken as empty).
        // Ranked (kept first where a subset keeps only some): other types, a property's
        // value outside an enum (a discriminator), a required property absent, the rest.
        let mut alternatives: Vec<(u8, Json)> = Vec::new();
        let fine = exact || !self.coarse_one_of;
        for (key, value) in members {
            let alternative = match key.as_str() {
                k if is_annotation(k) => continue,
                k if !fine && REFINING_COMPLEMENTS.contains(&k) => {
                    work.lossless = false;
                    continue;
                }
                // Each of these fails only on its own type, by a bound JSON Schema can
                // state: `minLength: n` fails on strings of at most n - 1 characters.
                "minLength" | "minItems" | "minProperties" => {
                    let n = count(value, key, "").ok()?;
                    if n == 0 {
                        continue;
                    }
                    let (t, k) = match key.as_str() {
                        "minLength" => ("string", "maxLength"),
                        "minItems" => ("array", "maxItems"),
                        _ => ("object", "maxProperties"),
                    };
                    Some(typed(
                        t,
                        k,
                        Json::Number(Decimal::from_u128(u128::from(n - 1), false)),
                    ))
                }
                "maxLength" | "maxItems" | "maxProperties" => {
                    let n = count(value, key, "").ok()?.checked_add(1)?;
                    let (t, k) = match key.as_str() {
                        "maxLength" => ("string", "minLength"),
                        "maxItems" => ("array", "minItems"),
                        _ => ("object", "minProperties"),
                    };
                    Some(typed(
                        t,
                        k,
                        Json::Number(Decimal::from_u128(u128::from(n), false)),
                    ))
                }
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    if let Json::Bool(_) = value {
                        continue; // draft-04's flag, read with minimum/maximum
                    }
                    number(value)?;
                    let flag = |f: &str| matches!(sibling(f), Some(Json::Bool(true)));
                    let k = match key.as_str() {
                        "minimum" if flag("exclusiveMinimum") => "maximum",
                        "minimum" => "exclusiveMaximum",
                        "maximum" if flag("exclusiveMaximum") => "minimum",
                        "maximum" => "exclusiveMinimum",
                        "exclusiveMinimum" => "maximum",
                        _ => "minimum",
                    };
                    Some(typed("number", k, value.clone()))
                }
                "pattern" => {
                    let Json::String(_) = value else { return None };
                    Some(typed("string", "not", obj("pattern", value.clone())))
                }
                // Failing `items` (one schema for every item): an array holding an item
                // that fails it. With `prefixItems` beside it, `items` covers only the
                // items after those, which `contains` cannot say.
                "items"
                    if matches!(value, Json::Object(_) | Json::Bool(_))
                        && sibling("prefixItems").is_none() =>
                {
                    let c = self.complement(value, base, depth + 1, exact, work)?;
                    if matches!(c, Json::Bool(false)) {
                        continue;
                    }
                    Some(typed("array", "contains", c))
                }
                "contains"
                    if sibling("minContains").is_none() && sibling("maxContains").is_none() =>
                {
                    let c = self.complement(value, base, depth + 1, exact, work)?;
                    Some(typed("array", "items", c))
                }
                "uniqueItems" if matches!(value, Json::Bool(false)) => continue,
                // A format the compiler does not know is an annotation: no value fails it.
                // (With unknown formats as errors, a positive use of the schema is
                // refused; its complement alone reads the name as the annotation.)
                // Known formats are not negated: their patterns may be narrower than a
                // validator's, and the complement of a narrower set is too wide.
                "format" if matches!(value, Json::String(f) if !super::super::fragments::FORMATS.contains(&f.as_str())) => {
                    continue
                }
                // Failing if/then/else: `if` holds and `then` fails, or `if` fails and
                // `else` fails.
                "if" if self.draft.has_conditionals() => {
                    let then = sibling("then");
                    let otherwise = sibling("else");
                    let mut sides = Vec::new();
                    if let Some(then) = then {
                        let c = self.complement(then, base, depth + 1, exact, work)?;
                        sides.push(obj("allOf", Json::array(vec![value.clone(), c])));
                    }
                    if let Some(otherwise) = otherwise {
                        let c = self.complement(otherwise, base, depth + 1, exact, work)?;
                        let not_if = self.complement(value, base, depth + 1, exact, work)?;
                        sides.push(obj("allOf", Json::array(vec![not_if, c])));
                    }
                    if sides.is_empty() {
                        continue;
                    }
                    Some(obj("anyOf", Json::array(sides)))
                }
                "then" | "else" if self.draft.has_conditionals() => continue,
                // Failing a dependency: the property present and its dependency failing.
                "dependentRequired" | "dependentSchemas" | "dependencies" => {
                    let Json::Object(deps) = value else {
                        return None;
                    };
                    for (p, dep) in deps {
                        let present = typed(
                            "object",
                            "required",
                            Json::array(vec![Json::String(p.clone())]),
                        );
                        let failing = match dep {
                            Json::Array(names) => {
                                let names = names
                                    .iter()
                                    .map(|n| match n {
                                        Json::String(n) => Some(absent(n)),
                                        _ => None,
                                    })
                                    .collect::<Option<Vec<_>>>()?;
                                match names.len() {
                                    0 => continue,
                                    _ => obj("anyOf", Json::array(names)),
                                }
                            }
                            dep => self.complement(dep, base, depth + 1, exact, work)?,
                        };
                        if !matches!(failing, Json::Bool(false)) {
                            alternatives
                                .push((3, obj("allOf", Json::array(vec![present, failing]))));
                        }
                    }
                    continue;
                }
                "required" => {
                    let Json::Array(names) = value else {
                        return None;
                    };
                    for n in names.iter() {
                        let Json::String(n) = n else { return None };
                        // Only objects can lack a property: every other value has them all.
                        let mut missing = absent(n);
                        if let Json::Object(m) = &mut missing {
                            m.insert(0, ("type".to_string(), Json::String("object".to_string())));
                        }
                        alternatives.push((2, missing));
                    }
                    continue;
                }
                "type" => types_but(parse_types(value, "").ok()?, work),
                "properties" => {
                    let Json::Object(props) = value else {
                        return None;
                    };
                    // Failing `properties`: an object with one of them present, its
                    // value failing that property's schema.
                    for (name, sub) in props {
                        let c = self.complement(sub, base, depth + 1, exact, work)?;
                        if !matches!(c, Json::Bool(false)) {
                            let rank = if c.get("not").is_some() { 1 } else { 3 };
                            alternatives.push((
                                rank,
                                Json::Object(vec![
                                    ("type".to_string(), Json::String("object".to_string())),
                                    (
                                        "required".to_string(),
                                        Json::array(vec![Json::String(name.clone())]),
                                    ),
                                    ("properties".to_string(), obj(name, c)),
                                ]),
                            ));
                        }
                    }
                    continue;
                }
                "anyOf" | "allOf" | "oneOf" => {
                    let Json::Array(list) = value else {
                        return None;
                    };
                    // oneOf's values are among anyOf's: exact only for one branch.
                    if key == "oneOf" && exact && list.len() > 1 {
                        return None;
                    }
                    let negated = list
                        .iter()
                        .map(|x| self.complement(x, base, depth + 1, exact, work))
                        .collect::<Option<Vec<_>>>()?;
                    Some(obj(
                        if key == "allOf" { "anyOf" } else { "allOf" },
                        Json::array(negated),
                    ))
                }
                "not" => Some(value.clone()),
                "$ref" => {
                    let Json::String(r) = value else { return None };
                    let target = self.resolve_ref(&resolve_uri(base, r), "").ok();
                    match target.as_deref().and_then(|t| self.at(t)) {
                        Some(t) => self.complement(t, base, depth + 1, exact, work),
                        None => work.lose(exact),
                    }
                }
                // Failing an enum: a value of another type, or one of the same type
                // that is not listed, said exactly for strings, booleans and null (by
                // `not: {enum}`) and numbers (the open intervals between the listed
                // ones, whatever their spelling); a subset leaves unlisted arrays and
                // objects out.
                "enum" | "const" => {
                    let values: &[Json] = match (key.as_str(), value) {
                        ("enum", Json::Array(v)) => v,
                        ("const", v) => std::slice::from_ref(v),
                        _ => return None,
                    };
                    let (simple, other): (Vec<&Json>, Vec<&Json>) = values
                        .iter()
                        .partition(|v| matches!(v, Json::String(_) | Json::Bool(_) | Json::Null));
                    let mut numbers: Vec<&Decimal> = other
                        .iter()
                        .filter(|_| fine)
                        .filter_map(|v| match v {
                            Json::Number(d) => Some(d),
                            _ => None,
                        })
                        .collect();
                    numbers.sort();
                    numbers.dedup();
                    let other: Vec<&Json> = other
                        .into_iter()
                        .filter(|v| !fine || !matches!(v, Json::Number(_)))
                        .collect();
                    if exact && !other.is_empty() {
                        return None;
                    }
                    if !other.is_empty() {
                        work.lossless = false;
                    }
                    let mut other_types = other.iter().fold(0, |t, v| t | value_type(v));
                    if !numbers.is_empty() {
                        other_types |= NUMBER | INTEGER;
                    }
                    let rest = types_but(other_types, work)?;
                    let rest = if simple.is_empty() || matches!(rest, Json::Bool(false)) {
                        rest
                    } else {
                        let not = obj("enum", Json::Array(simple.into_iter().cloned().collect()));
                        let mut m = match rest {
                            Json::Object(m) => m,
                            _ => Vec::new(), // `true`: every type
                        };
                        m.push(("not".to_string(), not));
                        Json::Object(m)
                    };
                    if numbers.is_empty() {
                        Some(rest)
                    } else {
                        let bound = |k: &str, d: &Decimal| (k.to_string(), Json::Number(d.clone()));
                        let number = ("type".to_string(), Json::String("number".to_string()));
                        let mut sides = vec![rest];
                        sides.push(Json::Object(vec![
                            number.clone(),
                            bound("exclusiveMaximum", numbers[0]),
                        ]));
                        for pair in numbers.windows(2) {
                            sides.push(Json::Object(vec![
                                number.clone(),
                                bound("exclusiveMinimum", pair[0]),
                                bound("exclusiveMaximum", pair[1]),
                            ]));
                        }
                        sides.push(Json::Object(vec![
                            number,
                            bound("exclusiveMinimum", numbers[numbers.len() - 1]),
                        ]));
                        sides.retain(|a| !matches!(a, Json::Bool(false)));
                        Some(obj("anyOf", Json::array(sides)))
                    }
                }
                // Failing `additionalProperties: false`: an object with a key that is not
                // declared. No keyword says "some key", so an internal one does; only
                // canonical spellings of the key and values 2 levels deep
                // (`Compiler::object`), so a subset (never exact).
                "additionalProperties"
                    if !exact
                        && matches!(value, Json::Bool(false))
                        && sibling("patternProperties").is_none() =>
                {
                    let names = match sibling("properties") {
                        Some(Json::Object(props)) => {
                            props.iter().map(|(k, _)| Json::String(k.clone())).collect()
                        }
                        _ => Vec::new(),
                    };
                    work.lossless = false;
                    Some(typed("object", SOME_KEY_NOT_IN, Json::array(names)))
                }
                _ if exact => None,
                _ => {
                    work.lossless = false;
                    continue;
                }
            };
            let rank = if key == "type" { 0 } else { 3 };
            alternatives.push((rank, alternative?));
        }
        alternatives.retain(|(_, a)| !matches!(a, Json::Bool(false)));
        if !exact {
            // Each alternative multiplies the branches a `oneOf` expands into.
            alternatives.sort_by_key(|&(rank, _)| rank);
            if alternatives.len() > MAX_ALTERNATIVES {
                alternatives.truncate(MAX_ALTERNATIVES);
                work.lossless = false;
            }
        }
        let mut alternatives: Vec<Json> = alternatives.into_iter().map(|(_, a)| a).collect();
        Some(match alternatives.len() {
            0 => Json::Bool(false),
            1 => alternatives.pop().expect("one"),
            _ => obj("anyOf", Json::array(alternatives)),
        })
    }
}
