//! The document: its draft, where each `$id` and anchor is, `$ref` resolution, and the
//! references under a subschema (for telling recursive ones apart).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::super::json::{pointer_push, Json};
use super::super::stack_position;
use super::uri::{percent_decode, strip_fragment};
use super::{invalid, resolve_uri, unsupported, Node, NodeRef};
use crate::automaton::expr::FastMap;
use crate::error::Result;

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
    pub(super) fn has_conditionals(self) -> bool {
        !matches!(self, Draft::Four | Draft::Six)
    }
    pub(super) fn id_keyword(self) -> &'static str {
        if self == Draft::Four {
            "id"
        } else {
            "$id"
        }
    }
}

/// Base URI of a document without `$id`.
const DEFAULT_BASE: &str = "https://logitmask.invalid/schema.json";

/// What a `$ref` made by a complement starts with, before the pointer it names (a URN,
/// so that resolving it against any base leaves it as it is).
pub(super) const MADE_REF: &str = "urn:logitmask:";

/// Pointers of the complements of reference targets ([`Doc::complement_ptr`]): no
/// pointer into the document starts so (those start with `#`).
const COMPLEMENT_PTR: &str = "complement:";

/// The complement of a reference's target, as [`Doc::negate_ref`] takes it.
#[derive(Clone)]
pub(super) enum RefComplement {
    /// Being taken: a reference to it met meanwhile recurses into it.
    Taking,
    /// Taken: the schema (none where it cannot be said) and whether it is exact.
    Taken(Option<(Rc<Json>, bool)>),
}

/// A subschema's JSON: in the document, or made by a complement.
pub(crate) enum SchemaJson<'a> {
    InDocument(&'a Json),
    Made(Rc<Json>),
}

impl std::ops::Deref for SchemaJson<'_> {
    type Target = Json;
    fn deref(&self) -> &Json {
        match self {
            SchemaJson::InDocument(j) => j,
            SchemaJson::Made(j) => j,
        }
    }
}

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
    /// Nesting of [`Doc::parse`] calls, bounded by
    /// [`MAX_SCHEMA_NESTING`](crate::json_schema::MAX_SCHEMA_NESTING): the complement
    /// of a `not` or an `if` is a new schema, parsed in turn, and one that refers back to
    /// itself (`{"if": {"not": {"$ref": "#"}}, ...}`) would produce complements forever.
    pub(super) nesting: Cell<usize>,
    /// The stack's position when this document was made
    /// ([`stack_exhausted`](crate::json_schema::stack_exhausted)).
    pub(super) stack_start: usize,
    /// Subschemas visited by all complements of this document
    /// ([`MAX_COMPLEMENT_VISITS`](super::negation::MAX_COMPLEMENT_VISITS)).
    pub(super) complement_visits: Cell<usize>,
    /// Whether a complement taken so far would differ with [`coarse_one_of`](Self::coarse_one_of)
    /// flipped (a subset that met a refining keyword, or numbers in an `enum`): where none
    /// did, a compile that exceeded the combinations limit would exceed it again with
    /// coarse complements, so it is not tried.
    pub(crate) coarse_differs: Cell<bool>,
    /// The complements of reference targets taken so far, by their pointers
    /// ([`Doc::complement_ptr`]): a complement names the complement of a target rather
    /// than copying it, so that each is taken, parsed and compiled once, and a recursive
    /// definition's complement recurses as the definition does (copied, it was expanded
    /// to the complements' depth limit, a schema of thousands of nodes).
    pub(super) ref_complements: RefCell<FastMap<String, RefComplement>>,
    /// [`Doc::resolve_ref`]'s pointers by URI, once found: a large compile follows the
    /// same few references thousands of times, and each decoded the fragment and walked
    /// the pointer through the document again (`Github_ultra---o48661`: 3,600 calls, 6%
    /// of its compile).
    resolved: RefCell<FastMap<String, String>>,
    /// The document's objects that mean the same wherever they are written (no reference
    /// or identifier anywhere in them), by address: a hash of their content, and the
    /// object as the document holds it.
    self_contained: FastMap<*const Json, (u64, &'a Json)>,
    /// Such objects parsed, by content hash: an object written again elsewhere (schemas
    /// generated from types repeat the same definition inline, `Github_medium---o9804`
    /// twelve times) is the same node, so that it is parsed once and every compile memo
    /// keyed by node (`Compiler::compile_node`) finds it. Its [`Sch::ptr`](super::Sch)
    /// is where it was first met.
    by_content: RefCell<FastMap<u64, Vec<(&'a Json, NodeRef)>>>,
}

/// Keywords whose string value makes a subschema's meaning depend on where it is (a
/// reference resolves against the base URI, an identifier or anchor names the place).
/// Matched on every object below, schema or not: a `const` that holds one only costs
/// the sharing.
const PLACED_KEYWORDS: [&str; 8] = [
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "$id",
    "id",
    "$anchor",
    "$dynamicAnchor",
    "$recursiveAnchor",
];

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
            coarse_differs: Cell::new(false),
            ref_complements: RefCell::default(),
            resolved: RefCell::default(),
            self_contained: FastMap::default(),
            by_content: RefCell::default(),
        };
        doc.scan(root, "#".to_string(), DEFAULT_BASE.to_string());
        doc.index_content(root);
        doc.resources
            .entry(DEFAULT_BASE.to_string())
            .or_insert_with(|| "#".to_string());
        doc
    }

    /// Hashes `node`'s content (order-sensitive, as `Json`'s equality) and records the
    /// objects without [`PLACED_KEYWORDS`] below in `self_contained`; returns the hash and
    /// whether `node` is such. The document's nesting is bounded by its parser.
    fn index_content(&mut self, node: &'a Json) -> (u64, bool) {
        use std::hash::{Hash, Hasher};
        let mut h = crate::automaton::expr::FastHasher::default();
        std::mem::discriminant(node).hash(&mut h);
        let mut contained = true;
        match node {
            Json::Null => {}
            Json::Bool(b) => b.hash(&mut h),
            Json::Number(d) => d.hash(&mut h),
            Json::String(t) => t.hash(&mut h),
            Json::Array(items) => {
                h.write_usize(items.len());
                for item in items.iter() {
                    let (ih, ic) = self.index_content(item);
                    h.write_u64(ih);
                    contained &= ic;
                }
            }
            Json::Object(members) => {
                h.write_usize(members.len());
                for (key, value) in members {
                    key.hash(&mut h);
                    let (vh, vc) = self.index_content(value);
                    h.write_u64(vh);
                    contained &= vc
                        && !(matches!(value, Json::String(_) | Json::Bool(_))
                            && PLACED_KEYWORDS.contains(&key.as_str()));
                }
                if contained {
                    self.self_contained
                        .insert(node as *const Json, (h.finish(), node));
                }
            }
        }
        (h.finish(), contained)
    }

    /// The node parsed already for an object written the same as `json` (a
    /// self-contained object of the document), and `json`'s key for
    /// [`remember_content`](Self::remember_content).
    pub(super) fn parsed_like(&self, json: &Json) -> (Option<NodeRef>, Option<(u64, &'a Json)>) {
        let Some(&(hash, at)) = self.self_contained.get(&(json as *const Json)) else {
            return (None, None);
        };
        let found = self.by_content.borrow().get(&hash).and_then(|same| {
            same.iter()
                .find(|(other, _)| std::ptr::eq(*other, at) || *other == at)
                .map(|(_, node)| node.clone())
        });
        (found, Some((hash, at)))
    }

    /// Records `node`, parsed from the self-contained object `key` names.
    pub(super) fn remember_content(&self, key: (u64, &'a Json), node: &NodeRef) {
        self.by_content
            .borrow_mut()
            .entry(key.0)
            .or_default()
            .push((key.1, node.clone()));
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
        let Some(json) = self.json_at(ptr) else {
            return out;
        };
        let mut stack = vec![(&*json, ptr.to_string(), self.base_at(ptr))];
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

    /// The pointer of the complement of `target` (exact, or a part of it).
    pub(super) fn complement_ptr(target: &str, exact: bool) -> String {
        let mode = if exact { "exact" } else { "part" };
        format!("{COMPLEMENT_PTR}{mode}:{target}")
    }

    /// The target a complement's pointer ([`Doc::complement_ptr`]) is of.
    fn complement_target(ptr: &str) -> Option<&str> {
        let rest = ptr.strip_prefix(COMPLEMENT_PTR)?;
        rest.strip_prefix("exact:")
            .or_else(|| rest.strip_prefix("part:"))
    }

    /// The JSON of a subschema: at a pointer into the document, or a complement taken.
    pub(crate) fn json_at(&self, ptr: &str) -> Option<SchemaJson<'a>> {
        if Self::complement_target(ptr).is_some() {
            return match self.ref_complements.borrow().get(ptr) {
                Some(RefComplement::Taken(Some((json, _)))) => Some(SchemaJson::Made(json.clone())),
                _ => None,
            };
        }
        self.at(ptr).map(SchemaJson::InDocument)
    }

    /// The JSON at a pointer (`#/a/b`).
    pub(crate) fn at(&self, ptr: &str) -> Option<&'a Json> {
        let mut node = self.root;
        let path = ptr.strip_prefix('#')?;
        if path.is_empty() {
            return Some(node);
        }
        for token in path.strip_prefix('/')?.split('/') {
            let token = unescape_token(token);
            node = match node {
                Json::Object(_) => node.get(&token)?,
                Json::Array(items) => items.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// The base URI in effect at a pointer (for a complement: at its target).
    pub(super) fn base_at(&self, ptr: &str) -> String {
        if let Some(target) = Self::complement_target(ptr) {
            return self.base_at(target);
        }
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
                let token = unescape_token(token);
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
        if let Some(ptr) = uri.strip_prefix(MADE_REF) {
            if self.ref_complements.borrow().contains_key(ptr) {
                return Ok(ptr.to_string());
            }
            return Err(invalid("$ref", at, &format!("\"{uri}\" points at nothing")));
        }
        if let Some(ptr) = self.resolved.borrow().get(uri) {
            return Ok(ptr.clone());
        }
        let ptr = self.resolve_uri(uri, at)?;
        self.resolved
            .borrow_mut()
            .insert(uri.to_string(), ptr.clone());
        Ok(ptr)
    }

    /// [`resolve_ref`](Self::resolve_ref) for a URI of the document (not a complement's).
    fn resolve_uri(&self, uri: &str, at: &str) -> Result<String> {
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
        let node = match self.json_at(ptr) {
            Some(json) => {
                let base = self.base_at(ptr);
                self.parse(&json, ptr, &base)?
            }
            // A complement that could not be said, named by one taken meanwhile (a
            // recursion into it): no value, a subset of it.
            None if self.ref_complements.borrow().contains_key(ptr) => Rc::new(Node::Nothing),
            None => return Err(invalid("$ref", ptr, "points at nothing")),
        };
        self.cache.insert(ptr.to_string(), node.clone());
        Ok(node)
    }
}

/// A JSON Pointer token with `~1` and `~0` unescaped; borrowed where it has no `~` (most
/// do: pointers are resolved for every `$ref` followed).
fn unescape_token(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains('~') {
        token.replace("~1", "/").replace("~0", "~").into()
    } else {
        token.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nodes of the root's properties, in order.
    fn property_nodes(doc: &Doc, root: &Json) -> Vec<NodeRef> {
        let node = doc.parse(root, "#", DEFAULT_BASE).unwrap();
        let Node::Schema(s) = &*node else {
            panic!("a schema")
        };
        s.object.props.iter().map(|(_, n)| n.clone()).collect()
    }

    #[test]
    fn an_object_written_twice_is_one_node_unless_its_place_can_change_its_meaning() {
        // Parsed from text: members keep their written order.
        let x = r#"{"type": "object", "properties": {"x": {"type": "integer", "minimum": 2}}}"#;
        // The same reference under two bases: two targets.
        let r = r#"{"properties": {"x": {"$ref": "t.json"}}}"#;
        let text = format!(
            r#"{{"properties": {{
                "a": {x},
                "b": {x},
                "c": {{"type": "object", "properties": {{"x": {{"type": "integer", "minimum": 3}}}}}},
                "d": {{"properties": {{"x": {{"type": "integer", "minimum": 2}}}}, "type": "object"}},
                "e": {{"$id": "https://example.com/e/", "allOf": [{r}]}},
                "f": {{"$id": "https://example.com/f/", "allOf": [{r}]}},
                "g": {{"const": {{"id": "a value, not an identifier"}}, "type": "object"}},
                "h": {{"const": {{"id": "a value, not an identifier"}}, "type": "object"}}
            }}}}"#
        );
        let root = Json::parse(&text).unwrap();
        let doc = Doc::new(&root);
        let n = property_nodes(&doc, &root);
        assert!(Rc::ptr_eq(&n[0], &n[1]), "the same object twice");
        assert!(!Rc::ptr_eq(&n[0], &n[2]), "another bound");
        assert!(!Rc::ptr_eq(&n[0], &n[3]), "another order");
        let first_part = |node: &NodeRef| match &**node {
            Node::Schema(s) => s.apply.all_of[0].clone(),
            Node::AllOf(parts) => parts[0].clone(),
            _ => panic!("a schema"),
        };
        assert!(
            !Rc::ptr_eq(&first_part(&n[4]), &first_part(&n[5])),
            "a reference resolves against its base"
        );
        // A string under a placed keyword's name anywhere below only costs the sharing.
        assert!(!Rc::ptr_eq(&n[6], &n[7]));
    }
}
