//! Parsing a schema document into checked keywords, resolving `$ref`, merging `allOf`.
//!
//! Each subschema becomes a [`Node`]: `true`/`{}` ([`Node::Any`]), `false`
//! ([`Node::Nothing`]), or a [`Sch`] holding the keywords logitmask implements, already
//! type-checked. Every validation keyword of draft-04 to 2020-12 is either implemented,
//! refused with an error naming it and its location, or (where it is provably a no-op)
//! skipped; keywords of no vocabulary (annotations, unknown names) are ignored, as JSON
//! Schema specifies.
//!
//! Here the parsed form ([`Sch`] and its keyword groups) and the errors; [`document`] finds
//! `$id`s and anchors and resolves `$ref`s, [`parse`] checks each keyword into a [`Sch`],
//! [`negation`] states complements (for `not`, `if` and `oneOf`), [`merge`](mod@merge) intersects
//! two schemas (`allOf`, `$ref` siblings), [`uri`] resolves URIs.

mod document;
mod merge;
mod negation;
mod parse;
mod uri;

use std::rc::Rc;

use super::json::Json;
use super::number::{Bound, Decimal};
use crate::error::{Error, ErrorKind};

pub(crate) use document::{Doc, Draft};
pub(crate) use merge::{both, merge};
pub(crate) use uri::resolve_uri;

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
    pub(crate) ptr: Rc<str>,
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
    /// Shared, not copied, by the clones a flatten or a merge makes of the schema.
    pub(crate) props: Rc<[(Rc<str>, NodeRef)]>,
    pub(crate) required: Vec<Rc<str>>,
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
    pub(crate) orders: Vec<Rc<[Rc<str>]>>,
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
    pub(crate) fn place_orders(&self) -> Vec<Rc<[Rc<str>]>> {
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
    pub(crate) any_of: Vec<(Rc<[NodeRef]>, Rc<str>)>,
    pub(crate) one_of: Vec<OneOf>,
    /// `$ref`s, as absolute URIs with fragment, with their locations.
    pub(crate) refs: Vec<(Rc<str>, Rc<str>)>,
}

/// A `oneOf`: its branches, where it is, and for each branch a schema of values that
/// surely fail it. Branches the compiler cannot prove exclusive are each intersected with
/// the others' complements: `oneOf [A, B]` = `A and not B` or `B and not A`. Where a
/// branch's complement cannot be said exactly ([`Doc::complement`]), a smaller one is
/// (values failing a part of the branch, e.g. its `required` and `type`): the branch
/// then allows fewer values than the schema does, never one it refuses.
#[derive(Clone, Debug)]
pub(crate) struct OneOf {
    pub(crate) branches: Rc<[NodeRef]>,
    /// The keyword's location.
    pub(crate) at: Rc<str>,
    /// The base URI the complements' `$ref`s resolve against.
    pub(crate) base: Rc<str>,
    /// Per branch: JSON Schema of values that fail it (`false` where none is known),
    /// and whether that is all of them (the exact complement); taken on first use
    /// ([`Doc::one_of_complement`]).
    pub(crate) complements: Rc<Complements>,
}

/// The complements of a `oneOf`'s branches. Those of a `oneOf` in the document are taken
/// when the compiler first asks for one: most `oneOf`s' branches are told apart without
/// any (a `type`, a `const`, a required name), and taking every complement of every
/// `oneOf` as it was parsed (each a new schema, its references followed, parsed in turn
/// with the `oneOf`s inside it) was most of the compile of schemas with many of them.
/// Those of a `oneOf` inside a complement (JSON made here, not at its location in the
/// document) are taken when it is parsed.
#[derive(Debug)]
pub(crate) struct Complements {
    /// Per branch, once taken.
    taken: std::cell::RefCell<Vec<Option<(Json, bool)>>>,
}

impl Complements {
    pub(crate) fn pending(branches: usize) -> Complements {
        Complements {
            taken: std::cell::RefCell::new(vec![None; branches]),
        }
    }

    pub(crate) fn taken(all: Vec<(Json, bool)>) -> Complements {
        Complements {
            taken: std::cell::RefCell::new(all.into_iter().map(Some).collect()),
        }
    }

    /// Branch `j`'s complement if taken.
    pub(crate) fn get(&self, j: usize) -> Option<(Json, bool)> {
        self.taken.borrow().get(j).cloned().flatten()
    }

    /// Whether branch `j`'s complement, taken, is all the values that fail it.
    pub(crate) fn exact(&self, j: usize) -> bool {
        matches!(self.taken.borrow().get(j), Some(Some((_, true))))
    }

    fn set(&self, j: usize, c: (Json, bool)) {
        if let Some(slot) = self.taken.borrow_mut().get_mut(j) {
            *slot = Some(c);
        }
    }
}

fn is_any(n: &Option<NodeRef>) -> bool {
    n.as_ref().is_none_or(|n| matches!(**n, Node::Any))
}

impl Sch {
    /// The one `$ref` of a schema that says nothing else.
    pub(crate) fn only_ref(&self) -> Option<&(Rc<str>, Rc<str>)> {
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
    let ptr = show(ptr);
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
    let ptr = show(ptr);
    Error::new(
        ErrorKind::InvalidSchema,
        format!("invalid \"{keyword}\" at {ptr}: {why}"),
    )
}

/// The schema of one keyword: `{"<keyword>": value}`.
fn single_keyword(keyword: &str, value: Json) -> Json {
    Json::Object(vec![(keyword.to_string(), value)])
}

/// The schema of objects without property `name`: `{"properties": {name: false}}`.
fn absent_property(name: &str) -> Json {
    single_keyword("properties", single_keyword(name, Json::Bool(false)))
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

/// A location as messages write it: the root's empty pointer as `#`.
pub(crate) fn show(ptr: &str) -> &str {
    if ptr.is_empty() {
        "#"
    } else {
        ptr
    }
}
