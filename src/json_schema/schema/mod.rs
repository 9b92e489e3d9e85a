//! Parsing a schema document into checked keywords, resolving `$ref`, merging `allOf`.
//!
//! Each subschema becomes a [`Node`]: `true`/`{}` ([`Node::Any`]), `false`
//! ([`Node::Nothing`]), or a [`Sch`] holding the keywords logitmask implements, already
//! type-checked. Every validation keyword of draft-04 to 2020-12 is either implemented,
//! refused with an error naming it and its location, or (where it is provably a no-op)
//! skipped; keywords of no vocabulary (annotations, unknown names) are ignored, as JSON
//! Schema specifies.

use std::cell::Cell;
use std::rc::Rc;

use super::json::{pointer_push, Json};
use super::{stack_exhausted, stack_position, MAX_SCHEMA_NESTING};
use super::number::{tighter_lower, tighter_upper, Bound, Decimal};
use crate::automaton::expr::{FastMap, FastSet};
use crate::error::{Error, ErrorKind, Result};

/// Instance types as bits. `NUMBER` is the non-integer numbers; the keyword `number`
/// means `NUMBER | INTEGER`.
pub(crate) const NULL: u8 = 1;
pub(crate) const BOOLEAN: u8 = 2;
pub(crate) const OBJECT: u8 = 4;
pub(crate) const ARRAY: u8 = 8;
pub(crate) const STRING: u8 = 16;
pub(crate) const NUMBER: u8 = 32;
pub(crate) const INTEGER: u8 = 64;
pub(crate) const ALL_TYPES: u8 = 127;

pub(crate) type NodeRef = Rc<Node>;

/// A subschema.
#[derive(Debug)]
pub(crate) enum Node {
    Any,
    Nothing,
    Schema(Box<Sch>),
    /// Several subschemas that must all hold (merged when compiled).
    AllOf(Vec<NodeRef>),
}

/// The implemented keywords of one (sub)schema, grouped by the instance type they
/// constrain. Absent keywords hold no constraint.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sch {
    /// Where this schema is, as a URI fragment (`#/properties/a`), for messages.
    pub(crate) ptr: String,
    pub(crate) types: Option<u8>,
    /// `enum` / `const` constraints (each must hold), with their locations.
    pub(crate) enums: Vec<(Rc<[Json]>, String)>,
    /// Values `not: {enum}` / `not: {const}` exclude: strings, booleans and null only,
    /// whose every spelling a complement can name (numbers have spellings no regular
    /// language can tie to a value: `1`, `1.0`, `10e-1`...).
    pub(crate) excluded: Vec<Json>,
    pub(crate) number: NumberKeywords,
    pub(crate) string: StringKeywords,
    pub(crate) array: ArrayKeywords,
    pub(crate) object: ObjectKeywords,
    pub(crate) apply: Applicators,
}

/// `minimum`, `maximum` (exclusive or not), `multipleOf`.
#[derive(Clone, Debug, Default)]
pub(crate) struct NumberKeywords {
    pub(crate) lo: Option<Bound>,
    pub(crate) hi: Option<Bound>,
    pub(crate) multiple_of: Vec<(Decimal, String)>,
}

/// `minLength`, `maxLength`, `pattern`, `format`.
#[derive(Clone, Debug, Default)]
pub(crate) struct StringKeywords {
    pub(crate) min_len: u64,
    pub(crate) max_len: Option<u64>,
    pub(crate) patterns: Vec<(String, String)>,
    /// `not: {pattern}`: patterns the string must not match, with their locations.
    pub(crate) excluded_patterns: Vec<(String, String)>,
    pub(crate) formats: Vec<(String, String)>,
}

/// `prefixItems`, `items`, `minItems`, `maxItems`, `contains` and its counts,
/// `uniqueItems`.
#[derive(Clone, Debug, Default)]
pub(crate) struct ArrayKeywords {
    pub(crate) prefix: Vec<NodeRef>,
    /// Items after `prefix` (`None`: any).
    pub(crate) items: Option<NodeRef>,
    pub(crate) min_items: u64,
    pub(crate) max_items: Option<u64>,
    pub(crate) contains: Vec<(NodeRef, String)>,
    pub(crate) min_contains: Option<(u64, String)>,
    pub(crate) max_contains: Option<(u64, String)>,
    /// `uniqueItems: true`, with its location.
    pub(crate) unique: Option<String>,
}

/// `properties`, `required`, `additionalProperties`, `minProperties`, `maxProperties`.
#[derive(Clone, Debug, Default)]
pub(crate) struct ObjectKeywords {
    pub(crate) props: Vec<(String, NodeRef)>,
    pub(crate) required: Vec<String>,
    /// `patternProperties`: (ECMA pattern, schema, location). Undeclared names that match
    /// a pattern take its schema (every matching one); the others take `additional`.
    pub(crate) patterns: Vec<(String, NodeRef, String)>,
    /// Properties not in `props` and matching no pattern (`None`: any).
    pub(crate) additional: Option<NodeRef>,
    pub(crate) min_props: u64,
    pub(crate) max_props: Option<u64>,
    /// `propertyNames`: a schema every name (as a string) must satisfy (`None`: any).
    pub(crate) names: Option<NodeRef>,
    /// Where `props` were merged from several places (`properties` beside `allOf`, a
    /// `$ref`'s siblings, `anyOf`/`oneOf` branches): each place's own order of names.
    /// Empty when `props` came from one place (its order is `props`'s).
    pub(crate) orders: Vec<Vec<String>>,
    /// Each a name list: the object has some key not in it (canonically spelled, its
    /// values nested at most 2 levels). Only from a complement of `additionalProperties: false`
    /// ([`SOME_KEY_NOT_IN`]), which no schema keyword can state.
    pub(crate) some_key_not_in: Vec<Vec<String>>,
}

/// The internal keyword a complement of `additionalProperties: false` writes: an array
/// of names, "some key is not one of these". A NUL starts it, so no schema meant for
/// validators spells it by chance.
pub(crate) const SOME_KEY_NOT_IN: &str = "\u{0}someKeyNotIn";

impl ObjectKeywords {
    /// The orders of the places `props` came from ([`ObjectKeywords::orders`]).
    pub(crate) fn place_orders(&self) -> Vec<Vec<String>> {
        if !self.orders.is_empty() {
            self.orders.clone()
        } else if self.props.is_empty() {
            Vec::new()
        } else {
            vec![self.props.iter().map(|(k, _)| k.clone()).collect()]
        }
    }
}

/// The in-place applicators: `allOf`, `anyOf`, `oneOf`, `$ref`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Applicators {
    pub(crate) all_of: Vec<NodeRef>,
    pub(crate) any_of: Vec<(Vec<NodeRef>, String)>,
    pub(crate) one_of: Vec<OneOf>,
    /// `$ref`s, as absolute URIs with fragment, with their locations.
    pub(crate) refs: Vec<(String, String)>,
}

/// A `oneOf`: its branches, where it is, and for each branch a schema of values that
/// surely fail it. Branches the compiler cannot prove exclusive are each intersected with
/// the others' complements: `oneOf [A, B]` = `A and not B` or `B and not A`. Where a
/// branch's complement cannot be said exactly ([`Doc::complement`]), a smaller one is
/// (values failing a part of the branch, e.g. its `required` and `type`): the branch
/// then allows fewer values than the schema does, never one it refuses.
#[derive(Clone, Debug)]
pub(crate) struct OneOf {
    pub(crate) branches: Vec<NodeRef>,
    /// The keyword's location.
    pub(crate) at: String,
    /// The base URI the complements' `$ref`s resolve against.
    pub(crate) base: String,
    /// Per branch: JSON Schema of values that fail it (`false` where none is known),
    /// and whether that is all of them (the exact complement).
    pub(crate) complements: Rc<Vec<(Json, bool)>>,
}

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

fn is_any(n: &Option<NodeRef>) -> bool {
    n.as_ref().is_none_or(|n| matches!(**n, Node::Any))
}

impl Sch {
    /// The one `$ref` of a schema that says nothing else.
    pub(crate) fn only_ref(&self) -> Option<&(String, String)> {
        let a = &self.apply;
        let alone =
            a.refs.len() == 1 && a.all_of.is_empty() && a.any_of.is_empty() && a.one_of.is_empty();
        (alone && self.keywords_trivial()).then(|| &a.refs[0])
    }

    /// Whether no keyword but the applicators constrains anything.
    pub(crate) fn keywords_trivial(&self) -> bool {
        self.types.is_none_or(|t| t == ALL_TYPES)
            && self.enums.is_empty()
            && self.excluded.is_empty()
            && self.number.is_trivial()
            && self.string.is_trivial()
            && self.array.is_trivial()
            && self.object.is_trivial()
    }

    /// Whether no keyword constrains anything (`{}`).
    pub(crate) fn is_trivial(&self) -> bool {
        self.keywords_trivial() && self.apply.is_trivial()
    }
}

impl NumberKeywords {
    fn is_trivial(&self) -> bool {
        self.lo.is_none() && self.hi.is_none() && self.multiple_of.is_empty()
    }
}

impl StringKeywords {
    fn is_trivial(&self) -> bool {
        self.min_len == 0
            && self.max_len.is_none()
            && self.patterns.is_empty()
            && self.excluded_patterns.is_empty()
            && self.formats.is_empty()
    }
}

impl ArrayKeywords {
    fn is_trivial(&self) -> bool {
        self.prefix.is_empty()
            && is_any(&self.items)
            && self.min_items == 0
            && self.max_items.is_none()
            && self.contains.is_empty()
            && self.min_contains.is_none()
            && self.max_contains.is_none()
            && self.unique.is_none()
    }
}

impl ObjectKeywords {
    fn is_trivial(&self) -> bool {
        self.props.is_empty()
            && self.required.is_empty()
            && self.patterns.is_empty()
            && is_any(&self.additional)
            && self.min_props == 0
            && self.max_props.is_none()
            && is_any(&self.names)
            && self.some_key_not_in.is_empty()
    }
}

impl Applicators {
    fn is_trivial(&self) -> bool {
        self.all_of.is_empty()
            && self.any_of.is_empty()
            && self.one_of.is_empty()
            && self.refs.is_empty()
    }
}

pub(crate) fn unsupported(keyword: &str, ptr: &str, why: &str) -> Error {
    let ptr = if ptr.is_empty() { "#" } else { ptr };
    if why.is_empty() {
        Error::new(
            ErrorKind::UnsupportedSchema,
            format!("unsupported keyword \"{keyword}\" at {ptr}"),
        )
    } else {
        Error::new(
            ErrorKind::UnsupportedSchema,
            format!("unsupported keyword \"{keyword}\" at {ptr}: {why}"),
        )
    }
}

pub(crate) fn invalid(keyword: &str, ptr: &str, why: &str) -> Error {
    let ptr = if ptr.is_empty() { "#" } else { ptr };
    Error::new(
        ErrorKind::InvalidSchema,
        format!("invalid \"{keyword}\" at {ptr}: {why}"),
    )
}

/// Which draft's rules apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Draft {
    /// draft-04: `id`, boolean `exclusiveMinimum`, `$ref` siblings ignored.
    Four,
    /// draft-06: `$ref` siblings ignored.
    Six,
    /// draft-07: `$ref` siblings ignored; `if`/`then`/`else`.
    Seven,
    /// 2019-09, 2020-12 and unknown.
    Modern,
}

impl Draft {
    pub(crate) fn of(root: &Json) -> Draft {
        match root.get("$schema") {
            Some(Json::String(s)) if s.contains("draft-04") || s.contains("draft-03") => {
                Draft::Four
            }
            Some(Json::String(s)) if s.contains("draft-06") => Draft::Six,
            Some(Json::String(s)) if s.contains("draft-07") => Draft::Seven,
            _ => Draft::Modern,
        }
    }
    /// Whether `if`/`then`/`else` are keywords (draft-07 on; earlier drafts ignore them).
    fn has_conditionals(self) -> bool {
        !matches!(self, Draft::Four | Draft::Six)
    }
    fn id_keyword(self) -> &'static str {
        if self == Draft::Four {
            "id"
        } else {
            "$id"
        }
    }
}

/// Base URI of a document without `$id`.
/// Subschemas all the complements of one document may visit (each `not`, `if` and
/// `oneOf` branch takes one; a complement parsed may hold more `not`s and `if`s): past
/// it complements are given up (a subset taken, or none), so that a schema whose
/// complements feed each other cannot take seconds (one took 28 s before).
const MAX_COMPLEMENT_VISITS: usize = 50_000;

const DEFAULT_BASE: &str = "https://logitmask.invalid/schema.json";

/// The document: its root, draft, and where each `$id` and anchor is.
pub(crate) struct Doc<'a> {
    pub(crate) root: &'a Json,
    pub(crate) draft: Draft,
    /// Whether `oneOf`'s complements (the subsets, [`Doc::complement`] with `exact`
    /// false) leave out the keywords whose complements only refine them (lengths,
    /// bounds, patterns, items...): fewer alternatives, so fewer combinations to
    /// distribute. A compile that exceeds the combinations limit is tried again so.
    pub(crate) coarse_one_of: bool,
    /// Absolute URI (no fragment) -> pointer of the resource.
    resources: FastMap<String, String>,
    /// (absolute URI, anchor name) -> pointer.
    anchors: FastMap<(String, String), String>,
    /// Parsed nodes by pointer.
    cache: FastMap<String, NodeRef>,
    /// Nesting of [`Doc::parse`] calls, bounded by [`MAX_SCHEMA_NESTING`]: the complement
    /// of a `not` or an `if` is a new schema, parsed in turn, and one that refers back to
    /// itself (`{"if": {"not": {"$ref": "#"}}, ...}`) would produce complements forever.
    nesting: Cell<usize>,
    /// The stack's position when this document was made ([`stack_exhausted`]).
    stack_start: usize,
    /// Subschemas visited by all complements of this document
    /// ([`MAX_COMPLEMENT_VISITS`]).
    complement_visits: Cell<usize>,
}

impl<'a> Doc<'a> {
    pub(crate) fn new(root: &'a Json) -> Doc<'a> {
        let draft = Draft::of(root);
        let mut doc = Doc {
            root,
            draft,
            coarse_one_of: false,
            resources: FastMap::default(),
            anchors: FastMap::default(),
            cache: FastMap::default(),
            nesting: Cell::new(0),
            stack_start: stack_position(),
            complement_visits: Cell::new(0),
        };
        doc.scan(root, "#".to_string(), DEFAULT_BASE.to_string());
        doc.resources
            .entry(DEFAULT_BASE.to_string())
            .or_insert_with(|| "#".to_string());
        doc
    }

    /// Records `$id`s and anchors of every subschema (following only keywords whose
    /// values are subschemas, so that `const` and `enum` values are not mistaken).
    fn scan(&mut self, node: &Json, ptr: String, base: String) {
        let Json::Object(_) = node else { return };
        let mut base = base;
        if let Some(Json::String(id)) = node.get(self.draft.id_keyword()) {
            if let Some(anchor) = id.strip_prefix('#') {
                // draft-06/07 plain-name fragment ids.
                if !anchor.is_empty() && !anchor.starts_with('/') {
                    self.anchors.insert(
                        (strip_fragment(&base).to_string(), anchor.to_string()),
                        ptr.clone(),
                    );
                }
            } else {
                base = resolve_uri(&base, id);
                self.resources
                    .insert(strip_fragment(&base).to_string(), ptr.clone());
            }
        }
        for key in ["$anchor", "$dynamicAnchor"] {
            if let Some(Json::String(a)) = node.get(key) {
                self.anchors
                    .insert((strip_fragment(&base).to_string(), a.clone()), ptr.clone());
            }
        }
        const MAPS: [&str; 6] = [
            "properties",
            "patternProperties",
            "$defs",
            "definitions",
            "dependentSchemas",
            "dependencies",
        ];
        const ONES: [&str; 13] = [
            "additionalProperties",
            "items",
            "additionalItems",
            "contains",
            "propertyNames",
            "not",
            "if",
            "then",
            "else",
            "unevaluatedItems",
            "unevaluatedProperties",
            "contentSchema",
            "extends",
        ];
        const LISTS: [&str; 5] = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];
        for key in MAPS {
            if let Some(Json::Object(members)) = node.get(key) {
                for (k, v) in members {
                    self.scan(v, pointer_push(&pointer_push(&ptr, key), k), base.clone());
                }
            }
        }
        for key in ONES {
            if let Some(v @ Json::Object(_)) = node.get(key) {
                self.scan(v, pointer_push(&ptr, key), base.clone());
            }
        }
        for key in LISTS {
            if let Some(Json::Array(items)) = node.get(key) {
                for (i, v) in items.iter().enumerate() {
                    self.scan(
                        v,
                        pointer_push(&pointer_push(&ptr, key), &i.to_string()),
                        base.clone(),
                    );
                }
            }
        }
    }

    /// The pointers that the `$ref`s written anywhere under `ptr` designate (those in
    /// this document), for telling recursive references apart. Values that are data,
    /// not schemas (`enum`, `const`, `default`, `examples`), are skipped; anything else
    /// is read as if it could be a schema: at worst a reference is taken to recurse
    /// that does not, which only makes it lazy. Calls `visit` once per JSON node.
    pub(crate) fn refs_under(&self, ptr: &str, visit: &mut dyn FnMut()) -> Vec<String> {
        let mut out = Vec::new();
        let Some(node) = self.at(ptr) else {
            return out;
        };
        let mut stack = vec![(node, ptr.to_string(), self.base_at(ptr))];
        while let Some((node, at, base)) = stack.pop() {
            visit();
            match node {
                Json::Object(members) => {
                    let mut base = base;
                    if let Some(Json::String(id)) = node.get(self.draft.id_keyword()) {
                        if !id.starts_with('#') {
                            base = resolve_uri(&base, id);
                        }
                    }
                    if let Some(Json::String(r)) = node.get("$ref") {
                        if let Ok(target) = self.resolve_ref(&resolve_uri(&base, r), &at) {
                            out.push(target);
                        }
                    }
                    for (k, v) in members {
                        if matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                            continue;
                        }
                        if matches!(v, Json::Object(_) | Json::Array(_)) {
                            stack.push((v, pointer_push(&at, k), base.clone()));
                        }
                    }
                }
                Json::Array(items) => {
                    for (i, v) in items.iter().enumerate() {
                        if matches!(v, Json::Object(_) | Json::Array(_)) {
                            stack.push((v, format!("{at}/{i}"), base.clone()));
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The JSON at a pointer (`#/a/b`).
    pub(crate) fn at(&self, ptr: &str) -> Option<&'a Json> {
        let mut node = self.root;
        let path = ptr.strip_prefix('#')?;
        if path.is_empty() {
            return Some(node);
        }
        for token in path.strip_prefix('/')?.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            node = match node {
                Json::Object(_) => node.get(&token)?,
                Json::Array(items) => items.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// The base URI in effect at a pointer.
    fn base_at(&self, ptr: &str) -> String {
        let mut base = DEFAULT_BASE.to_string();
        let mut node = self.root;
        let apply = |node: &Json, base: &mut String| {
            if let Some(Json::String(id)) = node.get(self.draft.id_keyword()) {
                if !id.starts_with('#') {
                    *base = resolve_uri(base, id);
                }
            }
        };
        apply(node, &mut base);
        let path = ptr.strip_prefix('#').unwrap_or("");
        if let Some(path) = path.strip_prefix('/') {
            for token in path.split('/') {
                let token = token.replace("~1", "/").replace("~0", "~");
                let next = match node {
                    Json::Object(_) => node.get(&token),
                    Json::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
                    _ => None,
                };
                let Some(next) = next else { break };
                node = next;
                apply(node, &mut base);
            }
        }
        base
    }

    /// The pointer a `$ref` (already absolute) designates, if it is in this document.
    pub(crate) fn resolve_ref(&self, uri: &str, at: &str) -> Result<String> {
        let (base, fragment) = match uri.split_once('#') {
            Some((b, f)) => (b, f),
            None => (uri, ""),
        };
        let fragment = percent_decode(fragment);
        let Some(resource) = self.resources.get(base) else {
            return Err(unsupported(
                "$ref",
                at,
                &format!("\"{uri}\" is not in this document (remote references are not fetched)"),
            ));
        };
        if fragment.is_empty() {
            return Ok(resource.clone());
        }
        if fragment.starts_with('/') {
            let ptr = format!("{}{}", resource, fragment);
            if self.at(&ptr).is_none() {
                return Err(invalid("$ref", at, &format!("\"{uri}\" points at nothing")));
            }
            return Ok(ptr);
        }
        self.anchors
            .get(&(base.to_string(), fragment.clone()))
            .cloned()
            .ok_or_else(|| {
                invalid(
                    "$ref",
                    at,
                    &format!("no anchor \"{fragment}\" for \"{uri}\""),
                )
            })
    }

    /// The parsed node at a pointer (cached).
    pub(crate) fn node_at(&mut self, ptr: &str) -> Result<NodeRef> {
        if let Some(n) = self.cache.get(ptr) {
            return Ok(n.clone());
        }
        let json = self
            .at(ptr)
            .ok_or_else(|| invalid("$ref", ptr, "points at nothing"))?;
        let base = self.base_at(ptr);
        let node = self.parse(json, ptr, &base)?;
        self.cache.insert(ptr.to_string(), node.clone());
        Ok(node)
    }

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
        self.nesting.set(depth + 1);
        let parsed = self.parse_nested(json, ptr, base);
        self.nesting.set(depth);
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
            ptr: ptr.to_string(),
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
            "not" => {
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
                        return Ok(true);
                    }
                    _ if excluded_values(value).is_some() => {
                        s.excluded.extend(excluded_values(value).expect("checked"));
                        return Ok(true);
                    }
                    _ => {
                        // The complement as a schema applied beside this one: exact where
                        // JSON Schema can state it, else the part of it that can be stated
                        // (values failing the keywords it can negate), which may refuse
                        // a valid value but never accepts one the negated schema accepts.
                        let Some(negated) = self.negate_or_part(value, k.base) else {
                            return Err(unsupported(
                                key,
                                ptr,
                                "no part of its complement can be stated (negated: `type`, `required`, `enum`, `const`, `pattern`, bounds, lengths and counts, `properties`, `items`, `contains`, dependencies, `if`, and anyOf/allOf/oneOf/not/$ref over those)",
                            ));
                        };
                        let node = self.parse(&negated, &k.at(), k.base)?;
                        s.apply.all_of.push(node);
                        return Ok(true);
                    }
                };
                s.types = Some(s.types.unwrap_or(ALL_TYPES) & !excluded & ALL_TYPES);
            }
            "if" if self.draft.has_conditionals()
                && (k.schema.get("then").is_some() || k.schema.get("else").is_some()) =>
            {
                // `(if and then) or (not if and else)`. Where the complement of `if`
                // cannot be said exactly, a subset of it is taken (as for `oneOf`): the
                // `else` side then allows fewer values, never one the schema refuses.
                let Some(otherwise) = self.negate_or_part(value, k.base) else {
                    return Err(unsupported(
                        key,
                        ptr,
                        "no part of the complement of `if` can be stated as a schema",
                    ));
                };
                let both = |a: Json, b: Option<&Json>| match b {
                    Some(b) => {
                        Json::Object(vec![("allOf".to_string(), Json::array(vec![a, b.clone()]))])
                    }
                    None => a,
                };
                let at = k.at();
                let branches = vec![
                    self.parse(&both(value.clone(), k.schema.get("then")), &at, k.base)?,
                    self.parse(&both(otherwise, k.schema.get("else")), &at, k.base)?,
                ];
                s.apply.any_of.push((branches, at));
            }
            "if" => {}            // no effect without "then"/"else", or before draft-07
            "then" | "else" => {} // no effect without "if"
            "dependentRequired" | "dependentSchemas" | "dependencies" => {
                // "If `p` is present, then D" is exactly `anyOf: [p absent, {required: [p]} and D]`,
                // with "absent" as `properties: {p: false}`: a schema the compiler has.
                let Json::Object(deps) = value else {
                    return Err(invalid(key, ptr, "not an object"));
                };
                let obj = |k: &str, v: Json| Json::Object(vec![(k.to_string(), v)]);
                for (p, dep) in deps {
                    let then = match (key, dep) {
                        (_, Json::Array(names)) if key != "dependentSchemas" => {
                            if names.is_empty() {
                                continue;
                            }
                            if names.iter().any(|n| !matches!(n, Json::String(_))) {
                                return Err(invalid(
                                    key,
                                    ptr,
                                    "a dependency list holds a non-string",
                                ));
                            }
                            obj("required", Json::Array(names.clone()))
                        }
                        (_, Json::Bool(true)) if key != "dependentRequired" => continue,
                        (_, Json::Object(m)) if key != "dependentRequired" && m.is_empty() => {
                            continue
                        }
                        (_, schema @ (Json::Object(_) | Json::Bool(false)))
                            if key != "dependentRequired" =>
                        {
                            schema.clone()
                        }
                        _ => {
                            return Err(invalid(
                                key,
                                ptr,
                                "a dependency is neither a list of names nor a schema",
                            ))
                        }
                    };
                    let absent = obj("properties", obj(p, Json::Bool(false)));
                    let present = obj(
                        "allOf",
                        Json::array(vec![
                            obj("required", Json::array(vec![Json::String(p.clone())])),
                            then,
                        ]),
                    );
                    let at = pointer_push(&k.at(), p);
                    let branches = vec![
                        self.parse(&absent, &at, k.base)?,
                        self.parse(&present, &at, k.base)?,
                    ];
                    s.apply.any_of.push((branches, at));
                }
            }
            "$dynamicRef" | "$recursiveRef" | "extends" | "disallow" => {
                return Err(unsupported(key, ptr, ""))
            }
            _ => return Ok(false),
        }
        Ok(true)
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
                for (name, sub) in props {
                    let node = self.parse(sub, &pointer_push(&k.at(), name), base)?;
                    o.props.push((name.clone(), node));
                }
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
                        if !o.required.contains(n) {
                            o.required.push(n.clone());
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
    fn negate_or_part(&self, schema: &Json, base: &str) -> Option<Json> {
        self.negate(schema, base).or_else(|| {
            let part = self.complement(schema, base, 0, false, &mut ComplementWork::default());
            part.filter(|c| !matches!(c, Json::Bool(false)))
        })
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
                "format" if matches!(value, Json::String(f) if !super::fragments::FORMATS.contains(&f.as_str())) => {
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
                    "anyOf" => a.any_of.push((nodes, k.at())),
                    _ => {
                        let complements = list
                            .iter()
                            .map(|b| {
                                let mut work = ComplementWork::default();
                                let c = self.complement(b, base, 0, false, &mut work);
                                let exact = work.lossless && c.is_some();
                                (c.unwrap_or(Json::Bool(false)), exact)
                            })
                            .collect();
                        a.one_of.push(OneOf {
                            branches: nodes,
                            at: k.at(),
                            base: base.to_string(),
                            complements: Rc::new(complements),
                        })
                    }
                }
            }
            "$ref" => {
                let Json::String(r) = value else {
                    return Err(invalid(key, ptr, "not a string"));
                };
                a.refs.push((resolve_uri(base, r), ptr.to_string()));
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

/// Keywords that carry no constraint.
pub(crate) fn is_annotation(k: &str) -> bool {
    matches!(
        k,
        "title"
            | "description"
            | "default"
            | "examples"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
            | "$comment"
            | "$schema"
            | "$id"
            | "id"
            | "$anchor"
            | "$dynamicAnchor"
            | "$vocabulary"
            | "$defs"
            | "definitions"
            | "contentMediaType"
            | "contentEncoding"
            | "contentSchema"
    )
}

fn show(ptr: &str) -> &str {
    if ptr.is_empty() {
        "#"
    } else {
        ptr
    }
}

fn number(v: &Json) -> Option<Decimal> {
    match v {
        Json::Number(d) => Some(d.clone()),
        _ => None,
    }
}

/// A non-negative integer keyword value (`2.0` counts as 2).
fn count(v: &Json, key: &str, ptr: &str) -> Result<u64> {
    match v {
        Json::Number(d) if d.is_integer() && !d.is_neg() => {
            Ok(d.int_digits().parse::<u64>().unwrap_or(u64::MAX))
        }
        _ => Err(invalid(key, ptr, "not a non-negative integer")),
    }
}

fn parse_types(v: &Json, at: &str) -> Result<u8> {
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

fn strip_fragment(uri: &str) -> &str {
    uri.split_once('#').map_or(uri, |(b, _)| b)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16).map(|v| v as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// RFC 3986 section 5.2 reference resolution (enough for `$id` and `$ref`).
pub(crate) fn resolve_uri(base: &str, reference: &str) -> String {
    let has_scheme = |s: &str| {
        let mut chars = s.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && s.find(':').is_some_and(|i| {
                s[..i]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            })
    };
    if has_scheme(reference) {
        return reference.to_string();
    }
    let base_nf = strip_fragment(base);
    if reference.is_empty() {
        return base_nf.to_string();
    }
    if let Some(frag) = reference.strip_prefix('#') {
        return format!("{base_nf}#{frag}");
    }
    let scheme_end = base_nf.find(':').map_or(0, |i| i + 1);
    let scheme = &base_nf[..scheme_end];
    let rest = &base_nf[scheme_end..];
    if let Some(r) = reference.strip_prefix("//") {
        return format!("{scheme}//{r}");
    }
    let (authority, path) = if let Some(r) = rest.strip_prefix("//") {
        match r.find('/') {
            Some(i) => (format!("//{}", &r[..i]), r[i..].to_string()),
            None => (format!("//{r}"), String::new()),
        }
    } else {
        (String::new(), rest.to_string())
    };
    let path = path.split(['?']).next().unwrap_or("").to_string();
    let (ref_path, ref_tail) = match reference.find(['?', '#']) {
        Some(i) => (&reference[..i], &reference[i..]),
        None => (reference, ""),
    };
    let merged = if ref_path.starts_with('/') {
        ref_path.to_string()
    } else if ref_path.is_empty() {
        path.clone()
    } else {
        match path.rfind('/') {
            Some(i) => format!("{}{}", &path[..=i], ref_path),
            None if !authority.is_empty() => format!("/{ref_path}"),
            None => ref_path.to_string(),
        }
    };
    format!(
        "{scheme}{authority}{}{ref_tail}",
        remove_dot_segments(&merged)
    )
}

fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." => {
                if i == segments.len() - 1 {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if i == segments.len() - 1 {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    out.join("/")
}

// ---------------------------------------------------------------------------------------
// allOf: merging two schemas into one that holds exactly when both do.

fn all_of(a: &Option<NodeRef>, b: &Option<NodeRef>) -> Option<NodeRef> {
    match (a, b) {
        (None, x) | (x, None) => x.clone(),
        (Some(a), Some(b)) => Some(both(a, b)),
    }
}

/// A node requiring both.
pub(crate) fn both(a: &NodeRef, b: &NodeRef) -> NodeRef {
    match (&**a, &**b) {
        (Node::Any, _) => b.clone(),
        (_, Node::Any) => a.clone(),
        (Node::Nothing, _) => a.clone(),
        (_, Node::Nothing) => b.clone(),
        _ => Rc::new(Node::AllOf(vec![a.clone(), b.clone()])),
    }
}

/// Merges `b` into `a` (both already free of `$ref` and `allOf`). Errors where the
/// conjunction cannot be written as one schema.
pub(crate) fn merge(a: &Sch, b: &Sch) -> Result<Sch> {
    let mut m = a.clone();
    m.types = match (a.types, b.types) {
        (Some(x), Some(y)) => Some(x & y),
        (x, y) => x.or(y),
    };
    m.enums.extend(b.enums.iter().cloned());
    m.excluded.extend(b.excluded.iter().cloned());
    m.number.lo = tighter_lower(a.number.lo.clone(), b.number.lo.clone());
    m.number.hi = tighter_upper(a.number.hi.clone(), b.number.hi.clone());
    for mo in &b.number.multiple_of {
        if !m.number.multiple_of.iter().any(|(x, _)| x == &mo.0) {
            m.number.multiple_of.push(mo.clone());
        }
    }
    m.string.min_len = a.string.min_len.max(b.string.min_len);
    m.string.max_len = min_opt(a.string.max_len, b.string.max_len);
    for p in &b.string.patterns {
        if !m.string.patterns.iter().any(|(x, _)| *x == p.0) {
            m.string.patterns.push(p.clone());
        }
    }
    m.string
        .excluded_patterns
        .extend(b.string.excluded_patterns.iter().cloned());
    for f in &b.string.formats {
        if !m.string.formats.iter().any(|(x, _)| *x == f.0) {
            m.string.formats.push(f.clone());
        }
    }
    // Arrays: position i holds under both schemas' rule for position i.
    let n = a.array.prefix.len().max(b.array.prefix.len());
    let eff = |s: &Sch, i: usize| -> Option<NodeRef> {
        s.array
            .prefix
            .get(i)
            .cloned()
            .or_else(|| s.array.items.clone())
    };
    m.array.prefix = (0..n)
        .map(|i| all_of(&eff(a, i), &eff(b, i)).unwrap_or_else(|| Rc::new(Node::Any)))
        .collect();
    m.array.items = all_of(&a.array.items, &b.array.items);
    m.array.min_items = a.array.min_items.max(b.array.min_items);
    m.array.max_items = min_opt(a.array.max_items, b.array.max_items);
    // One pair of counts holds for every `contains` of the merged schema: where both
    // sides have a `contains`, their counts (1 and none by default) must agree, else a
    // side's counts would apply to the other's `contains` (`minContains: 0` beside a
    // `$ref` whose `contains` it does not govern made that `contains` vacuous).
    let counts = |s: &Sch| {
        (
            s.array.min_contains.as_ref().map_or(1, |x| x.0),
            s.array.max_contains.as_ref().map(|x| x.0),
        )
    };
    if !a.array.contains.is_empty() && !b.array.contains.is_empty() && counts(a) != counts(b) {
        return Err(unsupported(
            "minContains",
            &b.ptr,
            "two contains with different minContains/maxContains in allOf or beside $ref",
        ));
    }
    m.array.contains.extend(b.array.contains.iter().cloned());
    m.array.min_contains = a
        .array
        .min_contains
        .clone()
        .or_else(|| b.array.min_contains.clone());
    m.array.max_contains = a
        .array
        .max_contains
        .clone()
        .or_else(|| b.array.max_contains.clone());
    m.array.unique = a.array.unique.clone().or_else(|| b.array.unique.clone());
    // Objects: a property holds under both schemas' rule for that name. Each side's
    // pattern rules apply to every name, so their union is exact; a side's
    // `additionalProperties` stays exact where the other side adds no pattern and no name
    // it does not declare (else the names only the other side's patterns match would
    // need this side's rule for undeclared names, which no pattern can say).
    if !a.object.patterns.is_empty() || !b.object.patterns.is_empty() {
        let names_within = |o: &Sch, s: &Sch| {
            o.object
                .props
                .iter()
                .all(|(k, _)| s.object.props.iter().any(|(n, _)| n == k))
        };
        let exact = |s: &Sch, o: &Sch| {
            is_any(&s.object.additional) || (o.object.patterns.is_empty() && names_within(o, s))
        };
        if !exact(a, b) || !exact(b, a) {
            return Err(unsupported(
                "patternProperties",
                &b.ptr,
                "in allOf beside another schema's patternProperties or properties, next to additionalProperties",
            ));
        }
        let mut patterns = a.object.patterns.clone();
        for (pat, node, at) in &b.object.patterns {
            match patterns.iter_mut().find(|(p, _, _)| p == pat) {
                Some(same) => same.1 = both(&same.1, node),
                None => patterns.push((pat.clone(), node.clone(), at.clone())),
            }
        }
        m.object.patterns = patterns;
        m.object.additional = all_of(&a.object.additional, &b.object.additional);
    }
    // By name, not by a scan per name: an object of 50,000 properties merged with
    // another was quadratic (seconds before any budget saw it).
    fn props_of(s: &Sch) -> FastMap<&str, &NodeRef> {
        let mut props = FastMap::default();
        for (k, v) in &s.object.props {
            // The first of a repeated name, as a scan finds it.
            props.entry(k.as_str()).or_insert(v);
        }
        props
    }
    let (props_a, props_b) = (props_of(a), props_of(b));
    let eff_prop = |s: &Sch, props: &FastMap<&str, &NodeRef>, k: &str| -> Option<NodeRef> {
        props
            .get(k)
            .map(|&v| v.clone())
            .or_else(|| s.object.additional.clone())
    };
    let mut names: Vec<String> = a.object.props.iter().map(|(k, _)| k.clone()).collect();
    let mut added: FastSet<&str> = FastSet::default();
    for (k, _) in &b.object.props {
        if !props_a.contains_key(k.as_str()) && added.insert(k.as_str()) {
            names.push(k.clone());
        }
    }
    m.object.props = names
        .into_iter()
        .map(|k| {
            let node = all_of(&eff_prop(a, &props_a, &k), &eff_prop(b, &props_b, &k))
                .unwrap_or_else(|| Rc::new(Node::Any));
            (k, node)
        })
        .collect();
    for r in &b.object.required {
        if !m.object.required.contains(r) {
            m.object.required.push(r.clone());
        }
    }
    if a.object.patterns.is_empty() && b.object.patterns.is_empty() {
        m.object.additional = all_of(&a.object.additional, &b.object.additional);
    }
    m.object.names = all_of(&a.object.names, &b.object.names);
    let mut orders = a.object.place_orders();
    for o in b.object.place_orders() {
        if !orders.contains(&o) {
            orders.push(o);
        }
    }
    m.object.orders = if orders.len() > 1 { orders } else { Vec::new() };
    m.object.some_key_not_in = a.object.some_key_not_in.clone();
    m.object
        .some_key_not_in
        .extend(b.object.some_key_not_in.iter().cloned());
    m.object.min_props = a.object.min_props.max(b.object.min_props);
    m.object.max_props = min_opt(a.object.max_props, b.object.max_props);
    m.apply.all_of.extend(b.apply.all_of.iter().cloned());
    m.apply.any_of.extend(b.apply.any_of.iter().cloned());
    m.apply.one_of.extend(b.apply.one_of.iter().cloned());
    m.apply.refs.extend(b.apply.refs.iter().cloned());
    Ok(m)
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_resolution() {
        assert_eq!(
            resolve_uri("http://x.y/a/b.json", "c.json"),
            "http://x.y/a/c.json"
        );
        assert_eq!(
            resolve_uri("http://x.y/a/b.json", "#/defs"),
            "http://x.y/a/b.json#/defs"
        );
        assert_eq!(resolve_uri("http://x.y/a/b.json", "/z"), "http://x.y/z");
        assert_eq!(resolve_uri("http://x.y/a/b.json", "../c"), "http://x.y/c");
        assert_eq!(resolve_uri("http://x.y/a/b.json", "urn:q"), "urn:q");
        assert_eq!(percent_decode("a%25b"), "a%b");
    }
}
