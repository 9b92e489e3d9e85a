//! Complements of schemas: a schema of the values a schema refuses (exact where JSON
//! Schema can say it, else a subset), for `not`, `if` without its condition, and
//! `oneOf`.

use super::super::fragments::FORMATS;
use super::super::json::Json;
use super::super::number::Decimal;
use super::document::{RefComplement, MADE_REF};
use super::parse::{count, number, parse_types};
use super::{absent_property, is_annotation, resolve_uri, single_keyword};
use super::{Doc, Draft, OneOf, SOME_KEY_NOT_IN};
use super::{ALL_TYPES, ARRAY, BOOLEAN, INTEGER, NULL, NUMBER, OBJECT, STRING};
use std::rc::Rc;

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

/// The complements of a schema's keywords, each with its rank: the complement of the
/// schema is their union (not (A and B and ...) = (not A) or (not B) or ...).
type Alternatives = Vec<(u8, Json)>;

// Ranks of alternatives, kept first where a subset keeps only some: other types, a
// property's value outside an enum (a discriminator), a required property absent, the
// rest.
const OTHER_TYPES: u8 = 0;
const DISCRIMINATOR: u8 = 1;
const ABSENT: u8 = 2;
const REST: u8 = 3;

/// The schema object [`Doc::complement`] is negating, and how.
struct Negating<'s> {
    /// The schema object (some keywords read their siblings).
    schema: &'s Json,
    /// The base URI its `$ref`s resolve against.
    base: &'s str,
    /// How many complements this one is nested in.
    depth: usize,
    /// Whether the complement must be exact (else a subset of it will do).
    exact: bool,
    /// Whether the keywords that only refine are negated too ([`REFINING_COMPLEMENTS`]).
    fine: bool,
}

impl Negating<'_> {
    fn sibling(&self, keyword: &str) -> Option<&Json> {
        self.schema.get(keyword)
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
            .map(|b| self.one_of_branch_complement(b, base))
            .collect()
    }

    /// Branch `j`'s complement ([`OneOf::complements`]), taken now if it was not yet.
    pub(crate) fn one_of_complement(&self, one_of: &OneOf, j: usize) -> (Json, bool) {
        if let Some(c) = one_of.complements.get(j) {
            return c;
        }
        let c = match self.at(&one_of.at) {
            Some(Json::Array(list)) if j < list.len() => {
                self.one_of_branch_complement(&list[j], &one_of.base)
            }
            _ => (Json::Bool(false), false),
        };
        one_of.complements.set(j, c.clone());
        c
    }

    /// One branch's entry of [`Doc::one_of_complements`].
    fn one_of_branch_complement(&self, branch: &Json, base: &str) -> (Json, bool) {
        let mut work = ComplementWork::default();
        let c = self.complement(branch, base, 0, false, &mut work);
        let exact = work.lossless && c.is_some();
        (c.unwrap_or(Json::Bool(false)), exact)
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
        let cx = Negating {
            schema,
            base,
            depth,
            exact,
            fine: exact || !self.coarse_one_of,
        };
        // A keyword left out of a subset adds no alternative (its complement taken as
        // empty).
        let mut alternatives = Alternatives::new();
        for (key, value) in members.iter().filter(|(k, _)| !legacy_ref || k == "$ref") {
            self.negate_keyword(&cx, key, value, work, &mut alternatives)?;
        }
        Some(union(alternatives, exact, work))
    }

    /// The complement of a subschema of the schema `cx` negates.
    fn sub_complement(
        &self,
        cx: &Negating,
        schema: &Json,
        work: &mut ComplementWork,
    ) -> Option<Json> {
        self.complement(schema, cx.base, cx.depth + 1, cx.exact, work)
    }

    /// Adds the complement of one keyword to `out`. `None` where the schema's complement
    /// cannot be said (exactly, where it must be).
    fn negate_keyword(
        &self,
        cx: &Negating,
        key: &str,
        value: &Json,
        work: &mut ComplementWork,
        out: &mut Alternatives,
    ) -> Option<()> {
        // What `cx.fine` decides below (refining keywords; numbers in an enum, which
        // `negate_enum` negates only in fine subsets) would differ in a coarse subset.
        let numbers = |v: &Json| matches!(v, Json::Number(_));
        let fine_decides = REFINING_COMPLEMENTS.contains(&key)
            || (matches!(key, "enum" | "const")
                && match value {
                    Json::Array(v) => v.iter().any(numbers),
                    v => numbers(v),
                });
        if !cx.exact && fine_decides {
            self.coarse_differs.set(true);
        }
        match key {
            k if is_annotation(k) => {}
            k if !cx.fine && REFINING_COMPLEMENTS.contains(&k) => work.lossless = false,
            "minLength" | "minItems" | "minProperties" | "maxLength" | "maxItems"
            | "maxProperties" => negate_count(key, value, out)?,
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                negate_bound(cx, key, value, out)?
            }
            "pattern" => negate_pattern(value, out)?,
            // With `prefixItems` beside it, `items` covers only the items after those,
            // which `contains` cannot say.
            "items"
                if matches!(value, Json::Object(_) | Json::Bool(_))
                    && cx.sibling("prefixItems").is_none() =>
            {
                self.negate_items(cx, value, work, out)?
            }
            "contains"
                if cx.sibling("minContains").is_none() && cx.sibling("maxContains").is_none() =>
            {
                self.negate_contains(cx, value, work, out)?
            }
            "uniqueItems" if matches!(value, Json::Bool(false)) => {}
            // A format the compiler does not know is an annotation: no value fails it.
            // (With unknown formats as errors, a positive use of the schema is
            // refused; its complement alone reads the name as the annotation.)
            // Known formats are not negated: their patterns may be narrower than a
            // validator's, and the complement of a narrower set is too wide.
            "format" if matches!(value, Json::String(f) if !FORMATS.contains(&f.as_str())) => {}
            "if" if self.draft.has_conditionals() => {
                self.negate_conditional(cx, value, work, out)?
            }
            "then" | "else" if self.draft.has_conditionals() => {}
            "dependentRequired" | "dependentSchemas" | "dependencies" => {
                self.negate_dependencies(cx, value, work, out)?
            }
            "required" => negate_required(value, out)?,
            "type" => negate_type(cx, value, work, out)?,
            "properties" => self.negate_properties(cx, value, work, out)?,
            "anyOf" | "allOf" | "oneOf" => self.negate_combination(cx, key, value, work, out)?,
            "not" => out.push((REST, value.clone())),
            "$ref" => self.negate_ref(cx, value, work, out)?,
            "enum" | "const" => negate_enum(cx, key, value, work, out)?,
            // Only in a subset, and only where no pattern covers undeclared names.
            "additionalProperties"
                if !cx.exact
                    && matches!(value, Json::Bool(false))
                    && cx.sibling("patternProperties").is_none() =>
            {
                negate_closed_object(cx, work, out)
            }
            _ if cx.exact => return None,
            _ => work.lossless = false,
        }
        Some(())
    }

    /// Failing `items` (one schema for every item): an array holding an item that fails
    /// it.
    fn negate_items(
        &self,
        cx: &Negating,
        value: &Json,
        work: &mut ComplementWork,
        out: &mut Alternatives,
    ) -> Option<()> {
        let c = self.sub_complement(cx, value, work)?;
        if !matches!(c, Json::Bool(false)) {
            out.push((REST, typed("array", "contains", c)));
        }
        Some(())
    }

    /// Failing `contains` (without counts): an array whose every item fails it.
    fn negate_contains(
        &self,
        cx: &Negating,
        value: &Json,
        work: &mut ComplementWork,
        out: &mut Alternatives,
    ) -> Option<()> {
        let c = self.sub_complement(cx, value, work)?;
        out.push((REST, typed("array", "items", c)));
        Some(())
    }

    /// Failing if/then/else: `if` holds and `then` fails, or `if` fails and `else` fails.
    fn negate_conditional(
        &self,
        cx: &Negating,
        value: &Json,
        work: &mut ComplementWork,
        out: &mut Alternatives,
    ) -> Option<()> {
        let then = cx.sibling("then");
        let otherwise = cx.sibling("else");
        let mut sides = Vec::new();
        if let Some(then) = then {
            let c = self.sub_complement(cx, then, work)?;
            sides.push(single_keyword("allOf", Json::array(vec![value.clone(), c])));
        }
        if let Some(otherwise) = otherwise {
            let c = self.sub_complement(cx, otherwise, work)?;
            let not_if = self.sub_complement(cx, value, work)?;
            sides.push(single_keyword("allOf", Json::array(vec![not_if, c])));
        }
        if !sides.is_empty() {
            out.push((REST, single_keyword("anyOf", Json::array(sides))));
        }
        Some(())
    }

    /// Failing a dependency: the property present and its dependency failing.
    fn negate_dependencies(
        &self,
        cx: &Negating,
        value: &Json,
        work: &mut ComplementWork,
        out: &mut Alternatives,
    ) -> Option<()> {
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
                            Json::String(n) => Some(absent_property(n)),
                            _ => None,
                        })
                        .collect::<Option<Vec<_>>>()?;
                    match names.len() {
                        0 => continue,
                        _ => single_keyword("anyOf", Json::array(names)),
                    }
                }
                dep => self.sub_complement(cx, dep, work)?,
            };
            if !matches!(failing, Json::Bool(false)) {
                out.push((
                    REST,
                    single_keyword("allOf", Json::array(vec![present, failing])),
                ));
            }
        }
        Some(())
    }

    /// Failing `properties`: an object with one of them present, its value failing that
    /// property's schema.
    fn negate_properties(
        &self,
        cx: &Negating,
        value: &Json,
        work: &mut ComplementWork,
        out: &mut Alternatives,
    ) -> Option<()> {
        let Json::Object(props) = value else {
            return None;
        };
        for (name, sub) in props {
            let c = self.sub_complement(cx, sub, work)?;
            if !matches!(c, Json::Bool(false)) {
                let rank = if c.get("not").is_some() {
                    DISCRIMINATOR
                } else {
                    REST
                };
                out.push((
                    rank,
                    Json::Object(vec![
                        ("type".to_string(), Json::String("object".to_string())),
                        (
                            "required".to_string(),
                            Json::array(vec![Json::String(name.clone())]),
                        ),
                        ("properties".to_string(), single_keyword(name, c)),
                    ]),
                ));
            }
        }
        Some(())
    }

    /// Failing `allOf`: failing some branch; failing `anyOf`: failing every branch, and
    /// so `oneOf` (whose values are among `anyOf`'s: exact only for one branch).
    fn negate_combination(
        &self,
        cx: &Negating,
        key: &str,
        value: &Json,
        work: &mut ComplementWork,
        out: &mut Alternatives,
    ) -> Option<()> {
        let Json::Array(list) = value else {
            return None;
        };
        if key == "oneOf" && cx.exact && list.len() > 1 {
            return None;
        }
        let negated = list
            .iter()
            .map(|x| self.sub_complement(cx, x, work))
            .collect::<Option<Vec<_>>>()?;
        out.push((
            REST,
            single_keyword(
                if key == "allOf" { "anyOf" } else { "allOf" },
                Json::array(negated),
            ),
        ));
        Some(())
    }

    /// Failing a `$ref`: failing its target (given up on where it is not in this
    /// document). The complement is a reference to the target's complement, taken once
    /// per document and mode ([`Doc::ref_complements`]): met again while it is being
    /// taken, the reference recurses, as the target does.
    fn negate_ref(
        &self,
        cx: &Negating,
        value: &Json,
        work: &mut ComplementWork,
        out: &mut Alternatives,
    ) -> Option<()> {
        let Json::String(r) = value else { return None };
        let c = match self.resolve_ref(&resolve_uri(cx.base, r), "") {
            Ok(t) => self.ref_complement(cx, &t, work),
            Err(_) => work.lose(cx.exact),
        };
        out.push((REST, c?));
        Some(())
    }

    /// The complement of the schema at `target`: `true` or `false` as they are, else a
    /// `$ref` to it, taken now if it was not yet.
    fn ref_complement(
        &self,
        cx: &Negating,
        target: &str,
        work: &mut ComplementWork,
    ) -> Option<Json> {
        let ptr = Doc::complement_ptr(target, cx.exact);
        let known = self.ref_complements.borrow().get(&ptr).cloned();
        let taken = match known {
            Some(RefComplement::Taking) => None,
            Some(RefComplement::Taken(taken)) => Some(taken),
            None => {
                let Some(json) = self.json_at(target) else {
                    return work.lose(cx.exact);
                };
                self.ref_complements
                    .borrow_mut()
                    .insert(ptr.clone(), RefComplement::Taking);
                let base = self.base_at(target);
                let mut own = ComplementWork::default();
                let c = self.complement(&json, &base, cx.depth + 1, cx.exact, &mut own);
                work.visited += own.visited;
                let taken = c.map(|c| (Rc::new(c), own.lossless));
                self.ref_complements
                    .borrow_mut()
                    .insert(ptr.clone(), RefComplement::Taken(taken.clone()));
                Some(taken)
            }
        };
        match taken {
            Some(None) => work.lose(cx.exact),
            Some(Some((json, lossless))) => {
                work.lossless &= lossless;
                match &*json {
                    Json::Bool(b) => Some(Json::Bool(*b)),
                    _ => Some(made_ref(&ptr)),
                }
            }
            // Being taken: exact as far as it goes (its own losses are counted where it
            // is taken).
            None => Some(made_ref(&ptr)),
        }
    }
}

/// `{"$ref": ...}` to a schema made here ([`Doc::json_at`]).
fn made_ref(ptr: &str) -> Json {
    single_keyword("$ref", Json::String(format!("{MADE_REF}{ptr}")))
}

/// Failing a length or a count, each only on its own type, by the opposite bound:
/// `minLength: n` fails on strings of at most n - 1 characters, `maxLength: n` on strings
/// of at least n + 1.
fn negate_count(key: &str, value: &Json, out: &mut Alternatives) -> Option<()> {
    let n = count(value, key, "").ok()?;
    let (t, opposite, bound) = match key {
        "minLength" | "minItems" | "minProperties" if n == 0 => return Some(()),
        "minLength" => ("string", "maxLength", n - 1),
        "minItems" => ("array", "maxItems", n - 1),
        "minProperties" => ("object", "maxProperties", n - 1),
        "maxLength" => ("string", "minLength", n.checked_add(1)?),
        "maxItems" => ("array", "minItems", n.checked_add(1)?),
        _ => ("object", "minProperties", n.checked_add(1)?),
    };
    let bound = Json::Number(Decimal::from_u128(u128::from(bound), false));
    out.push((REST, typed(t, opposite, bound)));
    Some(())
}

/// Failing a bound: a number beyond it (`minimum: x` fails on `exclusiveMaximum: x`).
fn negate_bound(cx: &Negating, key: &str, value: &Json, out: &mut Alternatives) -> Option<()> {
    if let Json::Bool(_) = value {
        return Some(()); // draft-04's flag, read with minimum/maximum
    }
    number(value)?;
    let flag = |f: &str| matches!(cx.sibling(f), Some(Json::Bool(true)));
    let k = match key {
        "minimum" if flag("exclusiveMinimum") => "maximum",
        "minimum" => "exclusiveMaximum",
        "maximum" if flag("exclusiveMaximum") => "minimum",
        "maximum" => "exclusiveMinimum",
        "exclusiveMinimum" => "maximum",
        _ => "minimum",
    };
    out.push((REST, typed("number", k, value.clone())));
    Some(())
}

/// Failing `pattern`: a string that does not match it.
fn negate_pattern(value: &Json, out: &mut Alternatives) -> Option<()> {
    let Json::String(_) = value else { return None };
    out.push((
        REST,
        typed("string", "not", single_keyword("pattern", value.clone())),
    ));
    Some(())
}

/// Failing `required`: an object without one of the names.
fn negate_required(value: &Json, out: &mut Alternatives) -> Option<()> {
    let Json::Array(names) = value else {
        return None;
    };
    for n in names.iter() {
        let Json::String(n) = n else { return None };
        // Only objects can lack a property: every other value has them all.
        let mut missing = absent_property(n);
        if let Json::Object(m) = &mut missing {
            m.insert(0, ("type".to_string(), Json::String("object".to_string())));
        }
        out.push((ABSENT, missing));
    }
    Some(())
}

/// Failing `type`: a value of another type.
fn negate_type(
    cx: &Negating,
    value: &Json,
    work: &mut ComplementWork,
    out: &mut Alternatives,
) -> Option<()> {
    let other_types = types_but(parse_types(value, "").ok()?, cx.exact, work)?;
    out.push((OTHER_TYPES, other_types));
    Some(())
}

/// Failing an enum: a value of another type, or one of the same type that is not
/// listed, said exactly for strings, booleans and null (by `not: {enum}`) and numbers
/// (the open intervals between the listed ones, whatever their spelling); a subset
/// leaves unlisted arrays and objects out.
fn negate_enum(
    cx: &Negating,
    key: &str,
    value: &Json,
    work: &mut ComplementWork,
    out: &mut Alternatives,
) -> Option<()> {
    let values: &[Json] = match (key, value) {
        ("enum", Json::Array(v)) => v,
        ("const", v) => std::slice::from_ref(v),
        _ => return None,
    };
    let (simple, other): (Vec<&Json>, Vec<&Json>) = values
        .iter()
        .partition(|v| matches!(v, Json::String(_) | Json::Bool(_) | Json::Null));
    let mut numbers: Vec<&Decimal> = other
        .iter()
        .filter(|_| cx.fine)
        .filter_map(|v| match v {
            Json::Number(d) => Some(d),
            _ => None,
        })
        .collect();
    crate::sort::sort(&mut numbers);
    numbers.dedup();
    let other: Vec<&Json> = other
        .into_iter()
        .filter(|v| !cx.fine || !matches!(v, Json::Number(_)))
        .collect();
    if cx.exact && !other.is_empty() {
        return None;
    }
    if !other.is_empty() {
        work.lossless = false;
    }
    let mut other_types = other.iter().fold(0, |t, v| t | value_type(v));
    if !numbers.is_empty() {
        other_types |= NUMBER | INTEGER;
    }
    let rest = types_but(other_types, cx.exact, work)?;
    let rest = if simple.is_empty() || matches!(rest, Json::Bool(false)) {
        rest
    } else {
        let not = single_keyword("enum", Json::Array(simple.into_iter().cloned().collect()));
        let mut m = match rest {
            Json::Object(m) => m,
            _ => Vec::new(), // `true`: every type
        };
        m.push(("not".to_string(), not));
        Json::Object(m)
    };
    if numbers.is_empty() {
        out.push((REST, rest));
    } else {
        out.push((REST, or_between(rest, &numbers)));
    }
    Some(())
}

/// `rest`, or a number in one of the open intervals around `numbers` (sorted, distinct).
fn or_between(rest: Json, numbers: &[&Decimal]) -> Json {
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
    single_keyword("anyOf", Json::array(sides))
}

/// Failing `additionalProperties: false`: an object with a key that is not declared. No
/// keyword says "some key", so an internal one does; only canonical spellings of the key
/// and values 2 levels deep (`Compiler::object`), so a subset (never exact).
fn negate_closed_object(cx: &Negating, work: &mut ComplementWork, out: &mut Alternatives) {
    let names = match cx.sibling("properties") {
        Some(Json::Object(props)) => props.iter().map(|(k, _)| Json::String(k.clone())).collect(),
        _ => Vec::new(),
    };
    work.lossless = false;
    out.push((REST, typed("object", SOME_KEY_NOT_IN, Json::array(names))));
}

/// A schema of the values of none of `types` (`false` where none is left). "Numbers
/// that are not integers" has no type name: `None` when `exact`, else left out.
fn types_but(types: u8, exact: bool, work: &mut ComplementWork) -> Option<Json> {
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
        single_keyword("type", Json::array(names))
    })
}

/// The schema `{"type": t, k: v}`.
fn typed(t: &str, k: &str, v: Json) -> Json {
    Json::Object(vec![
        ("type".to_string(), Json::String(t.to_string())),
        (k.to_string(), v),
    ])
}

/// The union of the alternatives (`false` for none). A subset keeps the first few by
/// rank: each alternative multiplies the branches a `oneOf` expands into.
fn union(mut alternatives: Alternatives, exact: bool, work: &mut ComplementWork) -> Json {
    const MAX_ALTERNATIVES: usize = 4;
    alternatives.retain(|(_, a)| !matches!(a, Json::Bool(false)));
    if !exact {
        crate::sort::sort_by_key(&mut alternatives, |&(rank, _)| rank);
        if alternatives.len() > MAX_ALTERNATIVES {
            alternatives.truncate(MAX_ALTERNATIVES);
            work.lossless = false;
        }
    }
    let mut alternatives: Vec<Json> = alternatives.into_iter().map(|(_, a)| a).collect();
    match alternatives.len() {
        0 => Json::Bool(false),
        1 => alternatives.pop().expect("one"),
        _ => single_keyword("anyOf", Json::array(alternatives)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the `oneOf` subsets of `branches` met anything coarse complements would
    /// leave out ([`Doc::coarse_differs`]): what lets a compile over the combinations
    /// limit skip its coarse retry.
    fn coarse_differs(branches: serde_json::Value) -> bool {
        let root = Json::from_value(&serde_json::json!({}));
        let doc = Doc::new(&root);
        let branches: Vec<Json> = branches
            .as_array()
            .unwrap()
            .iter()
            .map(Json::from_value)
            .collect();
        doc.one_of_complements(&branches, "");
        doc.coarse_differs.get()
    }

    #[test]
    fn coarse_complements_differ_only_where_a_subset_met_refining_keywords_or_numbers() {
        use serde_json::json;
        assert!(!coarse_differs(
            json!([{"type": "string"}, {"type": "integer"}])
        ));
        assert!(!coarse_differs(
            json!([{"enum": ["a", "b"]}, {"const": true}])
        ));
        assert!(!coarse_differs(
            json!([{"required": ["a"]}, {"properties": {"a": {"type": "null"}}}])
        ));
        assert!(coarse_differs(
            json!([{"type": "string", "minLength": 2}, {"type": "integer"}])
        ));
        assert!(coarse_differs(
            json!([{"enum": ["a", 1]}, {"type": "null"}])
        ));
        assert!(coarse_differs(
            json!([{"properties": {"a": {"maximum": 3}}}, {"type": "null"}])
        ));
    }
}
