//! Parsing a subschema into checked keywords ([`Sch`]), each keyword by the parser of
//! its group.

use std::rc::Rc;

use super::super::json::{pointer_push, Json};
use super::super::number::{tighter_lower, tighter_upper, Bound, Decimal};
use super::super::{stack_exhausted, MAX_SCHEMA_NESTING};
use super::unsupported;
use super::{absent_property, invalid, is_annotation, resolve_uri, show, single_keyword};
use super::{Applicators, ArrayKeywords, Doc, Draft, Node, NodeRef, NumberKeywords};
use super::{Complements, ObjectKeywords, OneOf, Sch, StringKeywords, SOME_KEY_NOT_IN};
use super::{ALL_TYPES, ARRAY, BOOLEAN, INTEGER, NULL, NUMBER, OBJECT, STRING};
use crate::error::{Error, ErrorKind, Result};

/// The one keyword of a schema that has one beside annotations.
fn sole_keyword(schema: &Json) -> Option<(&str, &Json)> {
    let Json::Object(m) = schema else { return None };
    let mut keywords = m.iter().filter(|(k, _)| !is_annotation(k));
    match (keywords.next(), keywords.next()) {
        (Some((k, v)), None) => Some((k.as_str(), v)),
        _ => None,
    }
}

/// The values of a `not` that is only an `enum` or a `const` of strings, booleans and
/// null (and annotations): the values [`Sch::excluded`] takes.
fn excluded_values(not: &Json) -> Option<Vec<Json>> {
    let values = match sole_keyword(not)? {
        ("enum", Json::Array(list)) => list.clone(),
        ("const", v) => vec![v.clone()].into(),
        _ => return None,
    };
    values
        .iter()
        .all(|v| matches!(v, Json::String(_) | Json::Bool(_) | Json::Null))
        .then(|| values.to_vec())
}

/// The pattern of a `not` that is only a `pattern` (and annotations).
fn excluded_pattern(not: &Json) -> Option<String> {
    match sole_keyword(not)? {
        ("pattern", Json::String(p)) => Some(p.clone()),
        _ => None,
    }
}

impl Doc<'_> {
    /// Parses a subschema and, eagerly, its subschemas (not what `$ref`s point at).
    ///
    /// Each keyword goes to the parser of its group (general, number, string, array,
    /// object, applicators); a keyword no group takes is an annotation or unknown, and
    /// ignored.
    pub(crate) fn parse(&self, json: &Json, ptr: &str, base: &str) -> Result<NodeRef> {
        let depth = self.nesting.get();
        if depth >= MAX_SCHEMA_NESTING || stack_exhausted(self.stack_start) {
            return Err(Error::new(
                ErrorKind::UnsupportedSchema,
                format!(
                    "unsupported schema at {}: sub-schemas nest more than {MAX_SCHEMA_NESTING} deep \
                     (or a `not` or `if` refers back to itself, so that its complement never ends)",
                    show(ptr)
                ),
            ));
        }
        let (known, key) = self.parsed_like(json);
        if let Some(node) = known {
            return Ok(node);
        }
        self.nesting.set(depth + 1);
        let parsed = self.parse_nested(json, ptr, base);
        self.nesting.set(depth);
        if let (Some(key), Ok(node)) = (key, &parsed) {
            self.remember_content(key, node);
        }
        parsed
    }

    fn parse_nested(&self, json: &Json, ptr: &str, base: &str) -> Result<NodeRef> {
        let members = match json {
            Json::Bool(true) => return Ok(Rc::new(Node::Any)),
            Json::Bool(false) => return Ok(Rc::new(Node::Nothing)),
            Json::Object(m) => m,
            other => {
                return Err(Error::new(
                    ErrorKind::InvalidSchema,
                    format!(
                        "invalid schema at {}: a schema is an object or a boolean, not {}",
                        show(ptr),
                        other.type_name()
                    ),
                ))
            }
        };
        let mut base = base.to_string();
        if let Some(Json::String(id)) = json.get(self.draft.id_keyword()) {
            if !id.starts_with('#') {
                base = resolve_uri(&base, id);
            }
        }
        let legacy_ref = self.draft != Draft::Modern && json.get("$ref").is_some();
        let mut s = Sch {
            ptr: ptr.into(),
            ..Sch::default()
        };
        let mut unevaluated = false;
        for (key, value) in members {
            if legacy_ref && key != "$ref" {
                continue;
            }
            let k = Keyword {
                schema: json,
                key: key.as_str(),
                value,
                ptr,
                base: &base,
            };
            let _taken = self.parse_general(&mut s, &k)?
                || self.parse_number(&mut s.number, &k)?
                || self.parse_string(&mut s.string, &k)?
                || self.parse_array(&mut s.array, &k)?
                || self.parse_object(&mut s.object, &k)?
                || self.parse_applicator(&mut s.apply, &k)?;
            unevaluated |= check_unevaluated(&k)?;
        }
        if s.array.contains.is_empty() {
            // Without `contains` beside them they say nothing (and must not govern a
            // `contains` merged in from a reference or an `allOf`).
            s.array.min_contains = None;
            s.array.max_contains = None;
        }
        if unevaluated {
            self.parse_unevaluated(&mut s, json, ptr, &base)?;
        }
        Ok(Rc::new(Node::Schema(Box::new(s))))
    }

    /// `type`, `enum`, `const`, `not`, and the keywords refused or ignored whatever the
    /// instance type. Returns whether the keyword was one of these.
    fn parse_general(&self, s: &mut Sch, k: &Keyword) -> Result<bool> {
        let (key, value, ptr) = (k.key, k.value, k.ptr);
        match key {
            // Intersected, not set: `not` may have narrowed the types already.
            "type" => s.types = Some(s.types.unwrap_or(ALL_TYPES) & parse_types(value, &k.at())?),
            "enum" => {
                let Json::Array(values) = value else {
                    return Err(invalid(key, ptr, "not an array"));
                };
                s.enums.push((values.clone(), k.at()));
            }
            "const" => s.enums.push((vec![value.clone()].into(), k.at())),
            "not" => self.parse_not(s, k)?,
            "if" if self.draft.has_conditionals()
                && (k.schema.get("then").is_some() || k.schema.get("else").is_some()) =>
            {
                self.parse_conditional(s, k)?
            }
            "if" => {}            // no effect without "then"/"else", or before draft-07
            "then" | "else" => {} // no effect without "if"
            "dependentRequired" | "dependentSchemas" | "dependencies" => {
                self.parse_dependencies(s, k)?
            }
            "$dynamicRef" | "$recursiveRef" | "extends" | "disallow" => {
                return Err(unsupported(key, ptr, ""))
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `not`: the types it excludes, else the `pattern` or the values it excludes, else
    /// its complement (or a part of it) as a schema beside this one.
    fn parse_not(&self, s: &mut Sch, k: &Keyword) -> Result<()> {
        let value = k.value;
        // Supported when it only excludes types: `not: {"type": ...}`.
        let excluded = match value {
            Json::Bool(false) => 0,
            Json::Object(m) if m.is_empty() => ALL_TYPES,
            Json::Bool(true) => ALL_TYPES,
            Json::Object(m) if m.iter().all(|(k, _)| k == "type" || is_annotation(k)) => {
                match value.get("type") {
                    Some(t) => parse_types(t, &pointer_push(&k.at(), "type"))?,
                    None => ALL_TYPES,
                }
            }
            _ if excluded_pattern(value).is_some() => {
                // Every non-string satisfies `pattern`, so none satisfies its `not`.
                let p = excluded_pattern(value).expect("checked");
                s.types = Some(s.types.unwrap_or(ALL_TYPES) & STRING);
                let at = pointer_push(&k.at(), "pattern");
                s.string.excluded_patterns.push((p, at));
                return Ok(());
            }
            _ if excluded_values(value).is_some() => {
                s.excluded.extend(excluded_values(value).expect("checked"));
                return Ok(());
            }
            _ => {
                // The complement as a schema applied beside this one: exact where
                // JSON Schema can state it, else the part of it that can be stated
                // (values failing the keywords it can negate), which may refuse
                // a valid value but never accepts one the negated schema accepts.
                let Some(negated) = self.negate_or_part(value, k.base) else {
                    return Err(unsupported(
                        k.key,
                        k.ptr,
                        "no part of its complement can be stated (negated: `type`, `required`, `enum`, `const`, `pattern`, bounds, lengths and counts, `properties`, `items`, `contains`, dependencies, `if`, and anyOf/allOf/oneOf/not/$ref over those)",
                    ));
                };
                let node = self.parse(&negated, &k.at(), k.base)?;
                s.apply.all_of.push(node);
                return Ok(());
            }
        };
        s.types = Some(s.types.unwrap_or(ALL_TYPES) & !excluded & ALL_TYPES);
        Ok(())
    }

    /// `if` with `then` or `else` (draft-07 on): `(if and then) or (not if and else)`.
    /// Where the complement of `if` cannot be said exactly, a subset of it is taken (as
    /// for `oneOf`): the `else` side then allows fewer values, never one the schema
    /// refuses.
    fn parse_conditional(&self, s: &mut Sch, k: &Keyword) -> Result<()> {
        let value = k.value;
        let Some(otherwise) = self.negate_or_part(value, k.base) else {
            return Err(unsupported(
                k.key,
                k.ptr,
                "no part of the complement of `if` can be stated as a schema",
            ));
        };
        let both = |a: Json, b: Option<&Json>| match b {
            Some(b) => Json::Object(vec![("allOf".to_string(), Json::array(vec![a, b.clone()]))]),
            None => a,
        };
        let at = k.at();
        let branches = vec![
            self.parse(&both(value.clone(), k.schema.get("then")), &at, k.base)?,
            self.parse(&both(otherwise, k.schema.get("else")), &at, k.base)?,
        ];
        s.apply.any_of.push((branches.into(), at.into()));
        Ok(())
    }

    /// `dependentRequired`, `dependentSchemas`, draft-04's `dependencies`. "If `p` is
    /// present, then D" is exactly `anyOf: [p absent, {required: [p]} and D]`, with
    /// "absent" as `properties: {p: false}`: a schema the compiler has.
    fn parse_dependencies(&self, s: &mut Sch, k: &Keyword) -> Result<()> {
        let Json::Object(deps) = k.value else {
            return Err(invalid(k.key, k.ptr, "not an object"));
        };
        for (p, dep) in deps {
            let Some(then) = dependency(k, dep)? else {
                continue;
            };
            let absent = absent_property(p);
            let present = single_keyword(
                "allOf",
                Json::array(vec![
                    single_keyword("required", Json::array(vec![Json::String(p.clone())])),
                    then,
                ]),
            );
            let at = pointer_push(&k.at(), p);
            let branches = vec![
                self.parse(&absent, &at, k.base)?,
                self.parse(&present, &at, k.base)?,
            ];
            s.apply.any_of.push((branches.into(), at.into()));
        }
        Ok(())
    }

    /// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`.
    fn parse_number(&self, n: &mut NumberKeywords, k: &Keyword) -> Result<bool> {
        let (key, value, ptr) = (k.key, k.value, k.ptr);
        match key {
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                // draft-04: booleans that make minimum/maximum exclusive (read with those).
                if let Json::Bool(_) = value {
                    if key.starts_with("exclusive") {
                        return Ok(true);
                    }
                }
                let v = number(value).ok_or_else(|| invalid(key, ptr, "not a number"))?;
                let excl_flag = |f: &str| matches!(k.schema.get(f), Some(Json::Bool(true)));
                match key {
                    "minimum" => {
                        n.lo = tighter_lower(
                            n.lo.take(),
                            Some(Bound::new(v, !excl_flag("exclusiveMinimum"))),
                        )
                    }
                    "maximum" => {
                        n.hi = tighter_upper(
                            n.hi.take(),
                            Some(Bound::new(v, !excl_flag("exclusiveMaximum"))),
                        )
                    }
                    "exclusiveMinimum" => {
                        n.lo = tighter_lower(n.lo.take(), Some(Bound::new(v, false)))
                    }
                    _ => n.hi = tighter_upper(n.hi.take(), Some(Bound::new(v, false))),
                }
            }
            "multipleOf" | "divisibleBy" => {
                let m = number(value).filter(|m| !m.is_neg() && !m.is_zero());
                let m = m.ok_or_else(|| invalid(key, ptr, "not a number > 0"))?;
                n.multiple_of.push((m, k.at()));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `minLength`, `maxLength`, `pattern`, `format`.
    fn parse_string(&self, t: &mut StringKeywords, k: &Keyword) -> Result<bool> {
        let (key, value, ptr) = (k.key, k.value, k.ptr);
        match key {
            "minLength" => t.min_len = count(value, key, ptr)?,
            "maxLength" => t.max_len = Some(count(value, key, ptr)?),
            "pattern" => {
                let Json::String(p) = value else {
                    return Err(invalid(key, ptr, "not a string"));
                };
                t.patterns.push((p.clone(), k.at()));
            }
            "format" => {
                let Json::String(f) = value else {
                    return Err(invalid(key, ptr, "not a string"));
                };
                t.formats.push((f.clone(), k.at()));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `prefixItems`, `items` (and draft-04's `additionalItems`), `minItems`, `maxItems`,
    /// `contains`, `minContains`, `maxContains`, `uniqueItems`.
    fn parse_array(&self, a: &mut ArrayKeywords, k: &Keyword) -> Result<bool> {
        let (key, value, ptr, base) = (k.key, k.value, k.ptr, k.base);
        match key {
            "prefixItems" => {
                let Json::Array(list) = value else {
                    return Err(invalid(key, ptr, "not an array"));
                };
                a.prefix = self.parse_list(list, &k.at(), base)?;
            }
            "items" => match value {
                Json::Array(list) => {
                    // draft-04 to 2019-09 tuple form.
                    a.prefix = self.parse_list(list, &k.at(), base)?;
                    a.items = match k.schema.get("additionalItems") {
                        Some(ai) => {
                            Some(self.parse(ai, &pointer_push(ptr, "additionalItems"), base)?)
                        }
                        None => None,
                    };
                }
                _ => a.items = Some(self.parse(value, &k.at(), base)?),
            },
            "additionalItems" => {} // with the tuple form of `items` only (see above)
            "minItems" => a.min_items = count(value, key, ptr)?,
            "maxItems" => a.max_items = Some(count(value, key, ptr)?),
            "contains" => a.contains.push((self.parse(value, &k.at(), base)?, k.at())),
            "minContains" => a.min_contains = Some((count(value, key, ptr)?, k.at())),
            "maxContains" => a.max_contains = Some((count(value, key, ptr)?, k.at())),
            "uniqueItems" => match value {
                Json::Bool(true) => a.unique = Some(k.at()),
                Json::Bool(false) => {}
                _ => return Err(invalid(key, ptr, "not a boolean")),
            },
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `properties`, `required`, `additionalProperties`, `minProperties`,
    /// `maxProperties`, and `propertyNames` where it is trivial or `false`.
    fn parse_object(&self, o: &mut ObjectKeywords, k: &Keyword) -> Result<bool> {
        let (key, value, ptr, base) = (k.key, k.value, k.ptr, k.base);
        match key {
            "properties" => {
                let Json::Object(props) = value else {
                    return Err(invalid(key, ptr, "not an object"));
                };
                let mut parsed = o.props.to_vec();
                for (name, sub) in props {
                    let node = self.parse(sub, &pointer_push(&k.at(), name), base)?;
                    parsed.push((name.as_str().into(), node));
                }
                o.props = parsed.into();
            }
            "patternProperties" => {
                let Json::Object(props) = value else {
                    return Err(invalid(key, ptr, "not an object"));
                };
                for (pattern, sub) in props {
                    let at = pointer_push(&k.at(), pattern);
                    let node = self.parse(sub, &at, base)?;
                    if !matches!(*node, Node::Any) {
                        o.patterns.push((pattern.clone(), node, at));
                    }
                }
            }
            "required" => match value {
                Json::Array(names) => {
                    for n in names.iter() {
                        let Json::String(n) = n else {
                            return Err(invalid(key, ptr, "not an array of strings"));
                        };
                        if !o.required.iter().any(|r| **r == **n) {
                            o.required.push(n.as_str().into());
                        }
                    }
                }
                // draft-03's boolean `required` inside a property: refused.
                _ => return Err(invalid(key, ptr, "not an array of strings")),
            },
            "additionalProperties" => o.additional = Some(self.parse(value, &k.at(), base)?),
            SOME_KEY_NOT_IN => {
                let Json::Array(names) = value else {
                    return Err(invalid(key, ptr, "not an array of strings"));
                };
                let names = names
                    .iter()
                    .map(|n| match n {
                        Json::String(n) => Ok(n.clone()),
                        _ => Err(invalid(key, ptr, "not an array of strings")),
                    })
                    .collect::<Result<Vec<_>>>()?;
                o.some_key_not_in.push(names);
            }
            "minProperties" => o.min_props = count(value, key, ptr)?,
            "maxProperties" => o.max_props = Some(count(value, key, ptr)?),
            "propertyNames" => match value {
                Json::Bool(true) => {}
                Json::Object(m) if m.iter().all(|(k, _)| is_annotation(k)) => {}
                Json::Bool(false) => o.max_props = Some(0),
                _ => o.names = Some(self.parse(value, &k.at(), base)?),
            },
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `allOf`, `anyOf`, `oneOf`, `$ref`.
    fn parse_applicator(&self, a: &mut Applicators, k: &Keyword) -> Result<bool> {
        let (key, value, ptr, base) = (k.key, k.value, k.ptr, k.base);
        match key {
            "allOf" | "anyOf" | "oneOf" => {
                let Json::Array(list) = value else {
                    return Err(invalid(key, ptr, "not an array"));
                };
                if list.is_empty() {
                    return Err(invalid(key, ptr, "an empty array"));
                }
                let nodes = self.parse_list(list, &k.at(), base)?;
                match key {
                    "allOf" => a.all_of.extend(nodes),
                    "anyOf" => a.any_of.push((nodes.into(), k.at().into())),
                    _ => {
                        let at = k.at();
                        // The document's own `oneOf` is found again at its location: its
                        // complements wait for the compiler. One inside a complement is
                        // not there (its location names the branch it came from).
                        let in_document = matches!(self.at(&at), Some(v) if std::ptr::eq(v, value));
                        let complements = if in_document {
                            Complements::pending(list.len())
                        } else {
                            Complements::taken(self.one_of_complements(list, base))
                        };
                        a.one_of.push(OneOf {
                            branches: nodes.into(),
                            at: at.into(),
                            base: base.into(),
                            complements: Rc::new(complements),
                        })
                    }
                }
            }
            "$ref" => {
                let Json::String(r) = value else {
                    return Err(invalid(key, ptr, "not a string"));
                };
                a.refs.push((resolve_uri(base, r).into(), ptr.into()));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Without in-place applicators, "unevaluated" is "not covered by the adjacent
    /// keywords", which `additionalProperties` / `items` express: they take the
    /// `unevaluated*` schemas where they are absent.
    fn parse_unevaluated(&self, s: &mut Sch, json: &Json, ptr: &str, base: &str) -> Result<()> {
        if let Some(u) = json.get("unevaluatedProperties") {
            if json.get("additionalProperties").is_none() {
                s.object.additional =
                    Some(self.parse(u, &pointer_push(ptr, "unevaluatedProperties"), base)?);
            }
        }
        if let Some(u) = json.get("unevaluatedItems") {
            if json.get("items").is_none()
                || matches!(json.get("items"), Some(Json::Array(_)))
                    && json.get("additionalItems").is_none()
            {
                s.array.items =
                    Some(self.parse(u, &pointer_push(ptr, "unevaluatedItems"), base)?);
            }
        }
        Ok(())
    }

    fn parse_list(&self, list: &[Json], ptr: &str, base: &str) -> Result<Vec<NodeRef>> {
        list.iter()
            .enumerate()
            .map(|(i, v)| self.parse(v, &pointer_push(ptr, &i.to_string()), base))
            .collect()
    }
}

/// What one property's dependency requires when the property is present: a list of
/// names (not in `dependentSchemas`) or a schema (not in `dependentRequired`); `None`
/// where that is nothing (an empty list, `true`, `{}`).
fn dependency(k: &Keyword, dep: &Json) -> Result<Option<Json>> {
    let (key, ptr) = (k.key, k.ptr);
    Ok(Some(match (key, dep) {
        (_, Json::Array(names)) if key != "dependentSchemas" => {
            if names.is_empty() {
                return Ok(None);
            }
            if names.iter().any(|n| !matches!(n, Json::String(_))) {
                return Err(invalid(key, ptr, "a dependency list holds a non-string"));
            }
            single_keyword("required", Json::Array(names.clone()))
        }
        (_, Json::Bool(true)) if key != "dependentRequired" => return Ok(None),
        (_, Json::Object(m)) if key != "dependentRequired" && m.is_empty() => return Ok(None),
        (_, schema @ (Json::Object(_) | Json::Bool(false))) if key != "dependentRequired" => {
            schema.clone()
        }
        _ => {
            return Err(invalid(
                key,
                ptr,
                "a dependency is neither a list of names nor a schema",
            ))
        }
    }))
}

/// One keyword of a schema object being parsed.
struct Keyword<'a> {
    /// The schema object the keyword is in (some keywords read their siblings).
    schema: &'a Json,
    key: &'a str,
    value: &'a Json,
    /// The schema's location.
    ptr: &'a str,
    /// The base URI in effect.
    base: &'a str,
}

impl Keyword<'_> {
    /// The keyword's location.
    fn at(&self) -> String {
        pointer_push(self.ptr, self.key)
    }
}

/// Whether an `unevaluatedProperties` / `unevaluatedItems` keyword constrains anything
/// (false for any other keyword). Next to in-place applicators it is refused.
fn check_unevaluated(k: &Keyword) -> Result<bool> {
    if !matches!(k.key, "unevaluatedProperties" | "unevaluatedItems") {
        return Ok(false);
    }
    if matches!(k.value, Json::Bool(true)) || matches!(k.value, Json::Object(m) if m.is_empty()) {
        return Ok(false);
    }
    let applicators = [
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "$ref",
        "$dynamicRef",
        "dependentSchemas",
        "$recursiveRef",
    ];
    if applicators.iter().any(|a| k.schema.get(a).is_some())
        || (k.key == "unevaluatedItems" && k.schema.get("contains").is_some())
    {
        return Err(unsupported(
            k.key,
            k.ptr,
            "next to in-place applicators (allOf, anyOf, $ref, ...)",
        ));
    }
    Ok(true)
}

pub(super) fn number(v: &Json) -> Option<Decimal> {
    match v {
        Json::Number(d) => Some(d.clone()),
        _ => None,
    }
}

/// A non-negative integer keyword value (`2.0` counts as 2).
pub(super) fn count(v: &Json, key: &str, ptr: &str) -> Result<u64> {
    match v {
        Json::Number(d) if d.is_integer() && !d.is_neg() => {
            Ok(d.int_digits().parse::<u64>().unwrap_or(u64::MAX))
        }
        _ => Err(invalid(key, ptr, "not a non-negative integer")),
    }
}

pub(super) fn parse_types(v: &Json, at: &str) -> Result<u8> {
    let one = |t: &Json| -> Result<u8> {
        match t {
            Json::String(s) => Ok(match s.as_str() {
                "null" => NULL,
                "boolean" => BOOLEAN,
                "object" => OBJECT,
                "array" => ARRAY,
                "string" => STRING,
                "number" => NUMBER | INTEGER,
                "integer" => INTEGER,
                other => {
                    return Err(Error::new(
                        ErrorKind::InvalidSchema,
                        format!("invalid \"type\" at {at}: unknown type \"{other}\""),
                    ))
                }
            }),
            _ => Err(Error::new(
                ErrorKind::InvalidSchema,
                format!("invalid \"type\" at {at}: not a type name"),
            )),
        }
    };
    match v {
        Json::Array(list) => list.iter().try_fold(0u8, |acc, t| Ok(acc | one(t)?)),
        t => one(t),
    }
}
