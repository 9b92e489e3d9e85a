//! JSON Schema -> regex, for [`Index`](crate::Index) to compile.
//!
//! [`regex_from_json_schema_str`] turns a schema (draft 2020-12, 2019-09, and the
//! draft-04/06/07 forms people still write) into a regex whose full matches are exactly
//! some JSON texts of instances that validate: the regex never accepts an invalid
//! instance, and it accepts every valid instance written in the *target form*:
//!
//! * with the whitespace [`Config::whitespace`] allows between tokens: by default
//!   [`DEFAULT_WHITESPACE`], the forms models write (compact, `", "` and `": "`, pretty
//!   printing with one newline and an indentation of up to 12 spaces or 4 tabs), bounded so
//!   a model cannot loop on whitespace; `whitespace(None)` for compact only;
//! * declared properties in schema order (`properties`, then names only in `required`),
//!   then any other properties;
//! * numbers as `JSON.stringify` writes them (integers without fraction or exponent;
//!   fractions and trailing zeros allowed where a value range does not forbid them);
//! * strings with any JSON escapes, except inside `pattern`/`format`/`enum` strings and
//!   undeclared property names, which are written canonically (only `"`, `\` and control
//!   characters escaped, as `JSON.stringify` does).
//!
//! Whatever the schema needs that the regex cannot express is an error
//! ([`ErrorKind::UnsupportedSchema`] naming the keyword and its location, e.g.
//! `unsupported keyword "uniqueItems" at #/properties/tags: item uniqueness is not a
//! regular language: ...` for unique strings); malformed schemas are
//! [`ErrorKind::InvalidSchema`]. Nothing is silently ignored but annotations and
//! keywords of no vocabulary.
//!
//! ```
//! use logitmask::json_schema::{regex_from_json_schema_str, Config};
//! use logitmask::Dfa;
//!
//! let schema = r#"{
//!     "type": "object",
//!     "properties": {
//!         "name": {"type": "string", "maxLength": 10},
//!         "age": {"type": "integer", "minimum": 0, "maximum": 150}
//!     },
//!     "required": ["name"]
//! }"#;
//! let regex = regex_from_json_schema_str(schema, &Config::new())?;
//! let dfa = Dfa::new(&regex)?;
//! assert!(dfa.is_match(br#"{"name":"Ada","age":36}"#));
//! assert!(dfa.is_match(br#"{"name":"Ada"}"#));            // optional "age" absent
//! assert!(!dfa.is_match(br#"{"name":"Ada","age":151}"#)); // out of range
//! assert!(!dfa.is_match(br#"{"age":36}"#));               // "name" is required
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Supported keywords, options, limits
//!
//! One page says it all, for Rust and JS users alike: `docs/json-schema.md` in the
//! repository (every keyword and how far it is supported, the options, the documented
//! limits, and the conformance figures against the JSON-Schema-Test-Suite). It is not
//! copied here, so that the two cannot drift apart.
//!
//! ## Layout
//!
//! `schema.rs` parses a document into checked keywords (grouped by instance type),
//! resolving `$ref` and merging `allOf`; `compile.rs` turns them into a regex (`re.rs`),
//! with numbers in `number.rs`, `pattern`s in `pattern.rs` and formats in `fragments.rs`.

mod compile;
pub use compile::AUTO_ANY_ORDER_MAX_PROPERTIES;
mod fragments;
pub(crate) mod json;
mod key_names;
mod number;
mod pattern;
mod re;
mod schema;

use std::cell::RefCell;
use std::rc::Rc;

use crate::automaton::expr::{ExprId, ExprSet, FastMap};
use crate::automaton::{Dfa, DEAD, DEFAULT_MAX_WORK};
use crate::error::{Error, ErrorKind, Result};
use json::Json;
use re::Re;

/// Default for [`Config::max_recursion_depth`] in regex text and eager indexes, where
/// each level is written out.
pub const DEFAULT_MAX_RECURSION_DEPTH: usize = 3;
/// Default for [`Config::max_recursion_depth`] in lazy indexes, where a recursive
/// reference is a call into one shared template, instantiated level by level only as a
/// text reaches it: a deep limit costs nothing until used.
pub const DEFAULT_LAZY_MAX_RECURSION_DEPTH: usize = 32;
/// Default for [`Config::any_value_depth`] in regex text and in eager indexes, whose
/// automaton holds every state: each level about doubles it.
pub const DEFAULT_ANY_VALUE_DEPTH: usize = 2;
/// Default for [`Config::any_value_depth`] in lazy indexes (rows on request), where a
/// state exists only once a text reaches it, so a deep limit costs nothing until used:
/// real documents nest free-form values (`{}`, `"additionalProperties": true`) deeper
/// than 2: at 2, about 90 of the schema corpus's 5,767 schemas refused valid texts there.
pub const DEFAULT_LAZY_ANY_VALUE_DEPTH: usize = 32;
/// Default for [`Config::max_regex_size`]: 1 MiB.
pub const DEFAULT_MAX_REGEX_SIZE: usize = 1 << 20;
/// Largest accepted [`Config::max_recursion_depth`]: each expansion nests the regex one
/// level deeper, and the compiler, the regex parser and the NFA compiler all recurse on
/// that nesting (a larger value is an [`ErrorKind::InvalidArgument`] error, never a stack
/// overflow).
pub const MAX_RECURSION_DEPTH_LIMIT: usize = 64;
/// Largest accepted [`Config::any_value_depth`] (each level at least doubles the regex).
pub const MAX_ANY_VALUE_DEPTH_LIMIT: usize = 32;
/// Largest accepted [`Config::max_regex_size`]: 16 MiB, the default NFA size cap.
pub const MAX_REGEX_SIZE_LIMIT: usize = 16 << 20;
/// Sub-schemas may nest (through properties, items, `$ref`, `anyOf` distribution) at most
/// this deep in one compilation; deeper is [`ErrorKind::UnsupportedSchema`].
pub const MAX_SCHEMA_NESTING: usize = 256;

/// Stack a compilation may use below where it started, checked where it nests (parsing,
/// compiling): nesting counts alone do not bound it, as frames differ in size by path
/// (a `not` of a `oneOf` of a recursive `$ref` nested 165 compiles deep, 12 KiB each in a
/// test build, and overflowed a 2 MiB test thread). Release builds take less room per
/// frame; wasm's stack is 1 MiB.
pub(crate) const MAX_STACK_BYTES: usize = if cfg!(debug_assertions) && !cfg!(target_arch = "wasm32")
{
    1536 << 10
} else {
    640 << 10
};

/// Where the stack stands now (it grows down, natively as in wasm's shadow stack).
#[inline(never)]
pub(crate) fn stack_position() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Whether more than [`MAX_STACK_BYTES`] of stack are in use since `start`
/// ([`stack_position`] then).
pub(crate) fn stack_exhausted(start: usize) -> bool {
    start.saturating_sub(stack_position()) > MAX_STACK_BYTES
}

/// The whitespace allowed between JSON tokens by default: nothing, one space (`", "`,
/// `": "`), or one newline followed by up to 12 spaces or up to 4 tabs (pretty printing,
/// 2-space indentation to depth 6, 4-space to depth 3). Bounded, so that a model cannot
/// loop on whitespace: at most 13 bytes between two tokens.
pub const DEFAULT_WHITESPACE: &str = r"(?:[ ]|\n[ ]{0,12}|\n\t{0,4})?";

/// How declared properties may be ordered (docs/json-schema.md, "The three choices
/// that decide what a model may write").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PropertyOrder {
    /// In schema order (`properties`, then names only in `required`). The default: one
    /// order keeps the automaton small, models follow the order they are shown, and the
    /// keys a schema decides are forced text (`Guide::forced_bytes`), fed without
    /// forward passes.
    #[default]
    Schema,
    /// In any order, at any size (an index takes up to 1,024 declared properties per
    /// object). Every order is listed in regex text, so there objects may declare at
    /// most 6 properties.
    Any,
    /// In a lazy index, any order in objects of at most
    /// [`AUTO_ANY_ORDER_MAX_PROPERTIES`] declared properties and schema order in larger
    /// ones; schema order in eager indexes (which build every set of members written)
    /// and in regex text. For texts written elsewhere (validation, scoring): JSON Schema
    /// gives members no order, and in any order each set of members written is a state
    /// of its own (up to 2^n for n properties; a nested object's sets multiply with its
    /// parent's), so the cost grows with the object's size while most objects are small.
    Auto,
}

/// Options for turning a JSON Schema into a regex.
///
/// ```
/// use logitmask::json_schema::{regex_from_json_schema_str, Config, PropertyOrder};
/// use logitmask::Dfa;
///
/// let config = Config::new().whitespace(Some(r"[ \n]{0,2}")).property_order(PropertyOrder::Any);
/// let regex = regex_from_json_schema_str(
///     r#"{"properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}}}"#,
///     &config,
/// )?;
/// assert!(Dfa::new(&regex)?.is_match(b"{ \"b\": true, \"a\": 1 }"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    whitespace: Option<String>,
    /// `None`: the default of the build ([`DEFAULT_MAX_RECURSION_DEPTH`], or for the
    /// calls of a lazy index [`DEFAULT_LAZY_MAX_RECURSION_DEPTH`]).
    max_recursion_depth: Option<usize>,
    /// Recursive references written alone are calls into shared templates (a lazy
    /// index's automaton).
    recursion_calls: bool,
    /// For a lazy index (rows on request), where [`PropertyOrder::Auto`] unfolds
    /// objects as texts reach them.
    lazy_index: bool,
    /// `None`: the default of the build ([`DEFAULT_ANY_VALUE_DEPTH`] or, for a lazy
    /// index, [`DEFAULT_LAZY_ANY_VALUE_DEPTH`]).
    any_value_depth: Option<usize>,
    property_order: PropertyOrder,
    allow_additional_properties: bool,
    max_regex_size: usize,
    unknown_formats_are_errors: bool,
    max_work: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            whitespace: Some(DEFAULT_WHITESPACE.to_string()),
            max_recursion_depth: None,
            recursion_calls: false,
            lazy_index: false,
            any_value_depth: None,
            property_order: PropertyOrder::Schema,
            allow_additional_properties: false,
            max_regex_size: DEFAULT_MAX_REGEX_SIZE,
            unknown_formats_are_errors: false,
            max_work: DEFAULT_MAX_WORK,
        }
    }
}

impl Config {
    /// The defaults: [`DEFAULT_WHITESPACE`] between tokens, recursion depth 3 and
    /// free-form nesting 2 (32 and 32 in a lazy index), schema property order, no
    /// undeclared properties next to declared ones, regex size cap 1 MiB.
    pub fn new() -> Config {
        Config::default()
    }

    /// A regex for the whitespace allowed between JSON tokens (after `{`, `[`, `,`,
    /// `:`, and before `}`, `]`, `:`, `,`), e.g. `[ ]?`. It may only match JSON whitespace
    /// (space, tab, newline, carriage return), and should be bounded: models given
    /// unbounded whitespace tend to ramble. Default [`DEFAULT_WHITESPACE`]; `None` (or
    /// `Some("")`): compact, no whitespace at all.
    pub fn whitespace(mut self, pattern: Option<&str>) -> Config {
        self.whitespace = pattern.map(str::to_string);
        self
    }

    /// How deep recursive `$ref`s nest: past that a reference matches nothing. In regex
    /// text and eager indexes (default 3) recursive references are expanded in place,
    /// a cycle of definitions re-entered at most this many times along one path (every
    /// entry counts, whichever definition of the cycle it enters). In a lazy index
    /// (default 32) a recursive
    /// reference written alone (`{"$ref": ...}`, annotations aside) is a call into one
    /// shared automaton, instantiated a level at a time as a text reaches it, and at
    /// most this many calls nest along one path (of any targets: mutual recursion counts
    /// every step); references merged with sibling keywords or through `allOf` are still
    /// expanded in place (3 deep unless this is set). At most
    /// [`MAX_RECURSION_DEPTH_LIMIT`].
    pub fn max_recursion_depth(mut self, depth: usize) -> Config {
        self.max_recursion_depth = Some(depth);
        self
    }

    /// How deeply free-form values (`{}`, `true`, absent `items`) nest arrays and
    /// objects (0: scalars only). Default 2 for regex text and eager indexes, where each
    /// level roughly doubles the automaton (sizes in docs/json-schema.md, "Options"), and
    /// 32 for lazy indexes, which build only the states a text reaches. At most
    /// [`MAX_ANY_VALUE_DEPTH_LIMIT`].
    pub fn any_value_depth(mut self, depth: usize) -> Config {
        self.any_value_depth = Some(depth);
        self
    }

    /// This configuration for a lazy index: an unset [`any_value_depth`](Self::any_value_depth)
    /// becomes [`DEFAULT_LAZY_ANY_VALUE_DEPTH`].
    pub(crate) fn for_lazy_index(&self) -> Config {
        let mut c = self.clone();
        c.any_value_depth
            .get_or_insert(DEFAULT_LAZY_ANY_VALUE_DEPTH);
        c.recursion_calls = true;
        c.lazy_index = true;
        c
    }

    /// This configuration with recursive references expanded in place.
    pub(crate) fn without_recursion_calls(&self) -> Config {
        let mut c = self.clone();
        c.recursion_calls = false;
        c
    }

    /// How many calls into recursive definitions may nest (a lazy index).
    pub(crate) fn call_depth(&self) -> usize {
        self.max_recursion_depth
            .unwrap_or(DEFAULT_LAZY_MAX_RECURSION_DEPTH)
    }

    /// How declared properties are ordered (default [`PropertyOrder::Schema`]).
    pub fn property_order(mut self, order: PropertyOrder) -> Config {
        self.property_order = order;
        self
    }

    /// Whether an object that declares properties (`properties` or `required`) but says
    /// nothing of `additionalProperties` accepts other properties too. JSON Schema says
    /// it does; the default `false` writes only the declared ones (as outlines-core
    /// does): models then do not invent keys, and the automaton stays small (free-form
    /// extra members cost hundreds of states per object). Objects that declare no
    /// property (`{"type": "object"}`) are free-form either way.
    pub fn allow_additional_properties(mut self, yes: bool) -> Config {
        self.allow_additional_properties = yes;
        self
    }

    /// Cap on the regex size in bytes (default 1 MiB); a larger regex is a
    /// [`ErrorKind::DfaTooLarge`] error. At most [`MAX_REGEX_SIZE_LIMIT`].
    pub fn max_regex_size(mut self, bytes: usize) -> Config {
        self.max_regex_size = bytes;
        self
    }

    /// Whether a `format` logitmask does not know is an error (`true`) or, as JSON
    /// Schema 2020-12 says, an annotation that constrains nothing (`false`, the default).
    pub fn unknown_formats_are_errors(mut self, yes: bool) -> Config {
        self.unknown_formats_are_errors = yes;
        self
    }

    /// Work budget of one compilation, in steps (default [`DEFAULT_MAX_WORK`]): each
    /// sub-schema compiled, schema merged (weighed by its keywords), `oneOf` exclusivity
    /// check, enum value and object layout step is charged, so that a schema whose
    /// `anyOf`/`oneOf`/`$ref` combinations multiply stops with
    /// [`ErrorKind::BuildTooExpensive`] within about a second instead of expanding for
    /// tens of seconds. An [`Index`](crate::Index) built from a schema eagerly charges its
    /// DFA and rows to what the compilation left of [`IndexConfig::max_work`](crate::IndexConfig::max_work).
    pub fn max_work(mut self, steps: u64) -> Config {
        self.max_work = steps;
        self
    }

    /// The compilation's work budget.
    pub fn get_max_work(&self) -> u64 {
        self.max_work
    }

    /// Whether unknown formats are errors.
    pub fn get_unknown_formats_are_errors(&self) -> bool {
        self.unknown_formats_are_errors
    }

    /// The whitespace pattern (`None`: compact).
    pub fn get_whitespace(&self) -> Option<&str> {
        self.whitespace.as_deref()
    }
    /// The recursion depth.
    pub fn get_max_recursion_depth(&self) -> usize {
        self.max_recursion_depth
            .unwrap_or(DEFAULT_MAX_RECURSION_DEPTH)
    }
    /// The free-form nesting depth.
    /// The depth set, or [`DEFAULT_ANY_VALUE_DEPTH`] (a lazy index raises an unset one to
    /// [`DEFAULT_LAZY_ANY_VALUE_DEPTH`]).
    pub fn get_any_value_depth(&self) -> usize {
        self.any_value_depth.unwrap_or(DEFAULT_ANY_VALUE_DEPTH)
    }
    /// The property order.
    pub fn get_property_order(&self) -> PropertyOrder {
        self.property_order
    }
    /// Whether undeclared properties are allowed where `additionalProperties` is absent.
    pub fn get_allow_additional_properties(&self) -> bool {
        self.allow_additional_properties
    }
    /// The regex size cap.
    pub fn get_max_regex_size(&self) -> usize {
        self.max_regex_size
    }
}

/// The regex for a schema given as a `serde_json::Value` (feature `serde_json`).
///
/// Property order is the order of the value's maps: sorted by name unless serde_json's
/// `preserve_order` feature is on. To keep the order written in the schema, pass its
/// text to [`regex_from_json_schema_str`].
#[cfg(feature = "serde_json")]
pub fn regex_from_json_schema(schema: &serde_json::Value, config: &Config) -> Result<String> {
    regex_from_json(&Json::from_value(schema), config)
}

/// The regex for a schema given as JSON text (property order as written).
///
/// Errors: [`ErrorKind::InvalidSchema`] (not JSON, malformed keywords, a schema that
/// matches nothing), [`ErrorKind::UnsupportedSchema`] (a keyword or combination the
/// regex cannot express), [`ErrorKind::DfaTooLarge`] (regex over the size cap),
/// [`ErrorKind::InvalidArgument`] (a whitespace pattern that matches other text).
pub fn regex_from_json_schema_str(schema: &str, config: &Config) -> Result<String> {
    let json = parse_schema_text(schema)?;
    regex_from_json(&json, config)
}

/// Schema text read into a [`Json`] tree (keys in the order written).
fn parse_schema_text(schema: &str) -> Result<Json> {
    Json::parse(schema).map_err(|e| {
        Error::with_source(
            ErrorKind::InvalidSchema,
            format!("the schema is not valid JSON: {e}"),
            e,
        )
    })
}

fn regex_from_json(schema: &Json, config: &Config) -> Result<String> {
    let Compiled {
        re, automaton_only, ..
    } = compile_re(schema, config, Target::Regex)?;
    if re.needs_automaton() {
        let (keyword, at) = automaton_only.unwrap_or(("pattern", "#".to_string()));
        return Err(Error::new(
            ErrorKind::UnsupportedSchema,
            format!(
                "unsupported keyword \"{keyword}\" at {at} in a regex: it needs an intersection or a complement \
                 of languages (several patterns/formats on one string, a length a pattern does not imply, \
                 patternProperties), which regex text cannot express; Index::from_json_schema \
                 (JS: Index.fromJsonSchema) compiles it to an automaton"
            ),
        ));
    }
    if re.size() > config.max_regex_size as u64 {
        return Err(Error::new(
            ErrorKind::DfaTooLarge,
            format!(
                "the regex for this schema would exceed max_regex_size ({} bytes; about {} needed)",
                config.max_regex_size,
                re.size()
            ),
        ));
    }
    Ok(re.render())
}

/// A compiled schema: its expression, the keyword that needs an automaton (if any) and the
/// work the compilation used.
struct Compiled {
    re: Re,
    automaton_only: Option<(&'static str, String)>,
    work: u64,
    /// How deep the free-form values the schema reaches nest containers.
    free_form_depth: usize,
    /// The thread's free-form values the compile started from.
    free_form: Rc<FreeFormTemplate>,
    /// Key contents of which every string is a prefix ([`SchemaAutomaton::string_bodies`]).
    string_bodies: Vec<Re>,
    /// The bodies of the recursive definitions `re` calls ([`Re::call`]), by slot.
    templates: Vec<Re>,
    /// Whether a reference was cut at the recursion depth ([`SchemaAutomaton::depth_cut`]).
    depth_cut: bool,
}

/// The error for a schema that leaves no value once its references are cut at the
/// recursion depth: the schema's verdict is not known (one that recurses without
/// nesting a value, `{"if": {"not": {"$ref": "#"}}, ...}`, allows every value).
pub(crate) fn nothing_within_recursion_depth() -> Error {
    Error::new(
        ErrorKind::UnsupportedSchema,
        "no value is left within the recursion depth (maxRecursionDepth): references past it match nothing, and here that left nothing (a reference that recurses without nesting a value, or a recursion no finite value ends)",
    )
}

/// What a compile makes: regex text, or an automaton (which can say more, lazily).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Regex,
    Automaton,
}

fn compile_re(schema: &Json, config: &Config, target: Target) -> Result<Compiled> {
    check_limits(config)?;
    if matches!(schema, Json::Bool(false)) {
        return Err(Error::new(
            ErrorKind::InvalidSchema,
            "the schema is `false`: no value validates",
        ));
    }
    let free_form = free_form_template(config)?;
    let mut compiler = compile::Compiler::new(schema, config, free_form.ws.clone());
    compiler.for_automaton = target == Target::Automaton;
    compiler.recursion_calls = compiler.for_automaton && config.recursion_calls;
    compiler.seed_free_form(&free_form.levels);
    let re = match compiler.compile_root() {
        // Finer `oneOf` complements are more alternatives to distribute: where they
        // exceed the combinations limit, the coarse ones (a smaller subset of each
        // complement, still never a value the branch accepts) are tried once.
        // (Only where some complement would be coarser: otherwise the second compile
        // would take the same branches and fail the same way.)
        Err(_) if compiler.branch_limit_hit && compiler.doc.coarse_differs.get() => {
            compiler = compile::Compiler::new(schema, config, free_form.ws.clone());
            compiler.doc.coarse_one_of = true;
            compiler.for_automaton = target == Target::Automaton;
            compiler.recursion_calls = compiler.for_automaton && config.recursion_calls;
            compiler.seed_free_form(&free_form.levels);
            compiler.compile_root()?
        }
        other => other?,
    };
    if re.is_never() {
        if compiler.depth_cut() {
            return Err(nothing_within_recursion_depth());
        }
        return Err(Error::new(
            ErrorKind::InvalidSchema,
            "no value validates against the schema (within the documented limits: recursion depth, formats, number forms)",
        ));
    }
    let work = compiler.work_used();
    let free_form_depth = compiler.free_form_depth(&re);
    // Calls into recursive definitions end at the recursion depth as cuts do.
    let templates = compiler.take_templates();
    Ok(Compiled {
        depth_cut: compiler.depth_cut() || !templates.is_empty(),
        templates,
        re,
        automaton_only: compiler.automaton_only,
        work,
        free_form_depth,
        free_form,
        string_bodies: compiler.string_bodies.into_values().collect(),
    })
}

/// Free-form values (any JSON value, `any_value_depth` containers deep) made and lowered
/// once per thread for a whitespace option and depth, then handed to each compile: most
/// objects admit them (additional properties), and making and lowering their ~1,200
/// expressions again was most of a small schema's compile (`{"type": "object"}`: 0.9 ms
/// natively). A compile starts from copies of the lowered arena and its memo, so the
/// shared nodes are found there instead of being lowered again.
struct FreeFormTemplate {
    whitespace: Option<String>,
    depth: usize,
    /// The whitespace expression the levels were made with (each compile uses it).
    ws: Re,
    levels: FastMap<(usize, bool), Re>,
    exprs: ExprSet,
    memo: re::LowerMemo,
}

thread_local! {
    /// The last template made on this thread (one whitespace option and depth).
    static FREE_FORM: RefCell<Option<Rc<FreeFormTemplate>>> = const { RefCell::new(None) };
}

/// The thread's template for `config`, made first if the last one was for other options
/// (this is also where the whitespace option is checked, once per template).
fn free_form_template(config: &Config) -> Result<Rc<FreeFormTemplate>> {
    let depth = config.get_any_value_depth();
    let cached = FREE_FORM.with(|t| t.borrow().clone());
    if let Some(t) = cached.filter(|t| t.depth == depth && t.whitespace == config.whitespace) {
        return Ok(t);
    }
    let ws = whitespace_re(config)?;
    let anything = Json::Bool(true);
    let mut maker = compile::Compiler::new(&anything, config, ws.clone());
    let top = maker.any(depth);
    let mut exprs = ExprSet::new();
    let mut memo = re::LowerMemo::default();
    top.to_expr(&mut exprs, &mut memo)?;
    let template = Rc::new(FreeFormTemplate {
        whitespace: config.whitespace.clone(),
        depth,
        ws,
        levels: maker.free_form_levels().clone(),
        exprs,
        memo,
    });
    FREE_FORM.with(|t| *t.borrow_mut() = Some(template.clone()));
    Ok(template)
}

/// A schema compiled to an automaton expression, with the regex text that says the same
/// where it fits in `max_regex_size` (else a description), for [`Index`](crate::Index).
pub(crate) struct SchemaAutomaton {
    pub(crate) exprs: ExprSet,
    pub(crate) root: ExprId,
    pub(crate) pattern: String,
    /// Work steps the compilation used (an eager index charges its build to the rest).
    pub(crate) work: u64,
    /// How deep free-form values nest containers: the complete automaton has at least
    /// `2^free_form_depth` states.
    pub(crate) free_form_depth: usize,
    /// Expressions of which every JSON string body (characters that need no escape) is
    /// a prefix, each followed in the automaton by a key's closing quote: the contents
    /// of undeclared keys. At a state that starts one, every token made of such
    /// characters is allowed (`ExprDfa::covers_string_body`).
    pub(crate) string_bodies: Vec<ExprId>,
    /// Whether a reference was cut at the recursion depth: where nothing is left, the
    /// cut may be why ([`nothing_within_recursion_depth`]).
    pub(crate) depth_cut: bool,
}

/// Compiles a schema given as JSON text (property order as written) to an automaton
/// expression: no regex text is built, so no size limit on text applies and counts stay
/// counts.
pub(crate) fn automaton_from_json_schema_str(
    schema: &str,
    config: &Config,
) -> Result<SchemaAutomaton> {
    let json = parse_schema_text(schema)?;
    automaton_from_json(&json, config)
}

/// Compiles a schema given as a `serde_json::Value` to an automaton expression.
#[cfg(feature = "serde_json")]
pub(crate) fn automaton_from_json_schema(
    schema: &serde_json::Value,
    config: &Config,
) -> Result<SchemaAutomaton> {
    automaton_from_json(&Json::from_value(schema), config)
}

fn automaton_from_json(schema: &Json, config: &Config) -> Result<SchemaAutomaton> {
    let Compiled {
        re,
        work,
        free_form_depth,
        free_form,
        string_bodies,
        templates,
        depth_cut,
        ..
    } = compile_re(schema, config, Target::Automaton)?;
    let mut exprs = free_form.exprs.clone();
    let mut memo = free_form.memo.clone();
    let root = re.to_expr(&mut exprs, &mut memo)?;
    // Lowered after the root with the same memo: the same nodes.
    let string_bodies = string_bodies
        .iter()
        .map(|b| b.to_expr(&mut exprs, &mut memo))
        .collect::<Result<Vec<_>>>()?;
    let (root, string_bodies) = if templates.is_empty() {
        (root, string_bodies)
    } else {
        let bodies = templates
            .iter()
            .map(|t| t.to_expr(&mut exprs, &mut memo))
            .collect::<Result<Vec<_>>>()?;
        exprs.define_templates(bodies).map_err(|e| {
            Error::new(
                ErrorKind::UnsupportedSchema,
                format!("a recursive definition: {e}"),
            )
        })?;
        if !exprs.templates_monotone() {
            // A call under a complement: deeper levels would take strings away, and
            // the lazy automaton decides a call's emptiness from its shallowest level
            // up, which needs levels that only gain strings. The compiler puts no call
            // there today (its complements are of strings and keys); should one
            // appear, the recursion is expanded in place, as in an eager index.
            return automaton_from_json(schema, &config.without_recursion_calls());
        }
        // A definition may be entered once and re-entered `call_depth` times below
        // (as in regex text, where `max_recursion_depth` counts re-entries): the root's
        // calls get `call_depth + 1` levels, its holes filled as a template's one above.
        let depth = config.call_depth() as u32 + 2;
        let mut work = 0;
        let root = exprs.instantiate(root, depth, &mut work);
        let bodies = string_bodies
            .into_iter()
            .map(|b| exprs.instantiate(b, depth, &mut work))
            .collect();
        (root, bodies)
    };
    let pattern = if !re.needs_automaton() && re.size() <= config.max_regex_size as u64 {
        re.render()
    } else {
        format!(
            "<JSON Schema automaton: {} expression nodes; as a regex about {} bytes>",
            exprs.len(),
            re.size()
        )
    };
    Ok(SchemaAutomaton {
        exprs,
        root,
        pattern,
        work,
        free_form_depth,
        string_bodies,
        depth_cut,
    })
}

/// A schema given as JSON text (property order as written) compiled into `exprs`,
/// another front end's expression set (a grammar's `%json`), with `config`'s lazy-index
/// defaults. Recursive definitions are expanded in place (`max_recursion_depth` deep):
/// the set's templates are its owner's to define. The keys' free runs are not handed
/// down (rows there are walked, exact and slower).
pub(crate) fn embed_json_schema_str(
    schema: &str,
    config: &Config,
    exprs: &mut ExprSet,
    memo: &mut EmbedMemo,
) -> Result<ExprId> {
    let json = parse_schema_text(schema)?;
    let config = config.for_lazy_index().without_recursion_calls();
    let compiled = compile_re(&json, &config, Target::Automaton)?;
    let e = compiled.re.to_expr(exprs, &mut memo.lowered)?;
    // The memo is keyed by node addresses: the tree stays alive with it, so that no
    // later schema's node can take a freed node's address and meet its entry.
    memo.alive.push(compiled.re);
    Ok(e)
}

/// What [`embed_json_schema_str`] lowered into one expression set so far: schemas
/// embedded in the same set share their free-form values and formats, lowered once.
#[derive(Default)]
pub(crate) struct EmbedMemo {
    lowered: re::LowerMemo,
    /// The trees lowered (see above).
    alive: Vec<Re>,
}

/// Refuses option values past the limits the compiler is safe and useful within.
fn check_limits(config: &Config) -> Result<()> {
    let checks = [
        (
            "max_recursion_depth / maxRecursionDepth",
            config.max_recursion_depth.unwrap_or(0),
            MAX_RECURSION_DEPTH_LIMIT,
        ),
        (
            "any_value_depth / anyValueDepth",
            config.get_any_value_depth(),
            MAX_ANY_VALUE_DEPTH_LIMIT,
        ),
        (
            "max_regex_size / maxRegexSize",
            config.max_regex_size,
            MAX_REGEX_SIZE_LIMIT,
        ),
    ];
    for (name, value, max) in checks {
        if value > max {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("{name} is {value}; at most {max} is supported"),
            ));
        }
    }
    Ok(())
}

/// The whitespace regex, checked to match only JSON whitespace.
fn whitespace_re(config: &Config) -> Result<Re> {
    let Some(p) = config.whitespace.as_ref().filter(|p| !p.is_empty()) else {
        return Ok(Re::empty());
    };
    let dfa = Dfa::new(p).map_err(|e| {
        Error::new(
            ErrorKind::InvalidArgument,
            format!("invalid whitespace pattern {p:?}: {}", e.message()),
        )
    })?;
    for s in 1..dfa.state_count() as u32 {
        for b in 0..=255u8 {
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') && dfa.step(s, b) != DEAD {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    format!("the whitespace pattern {p:?} matches more than JSON whitespace (byte 0x{b:02x})"),
                ));
            }
        }
    }
    Ok(Re::raw(p.clone()))
}

/// Developer tools over the schema corpus (ignored tests run on demand).
#[cfg(test)]
mod corpus_tools;
