//! The JSON Schema front end's way into an index: the schema compiled to an automaton
//! expression (`crate::json_schema`), the contents of keys of any undeclared name marked
//! as free runs of a string's body (`SchemaAutomaton::string_bodies`), and the text hints
//! ([`TEXT_HINTS`], whose body class is a JSON string's unescaped characters).

use std::sync::Arc;

use super::TEXT_HINTS;
use crate::automaton::expr::{ExprDfa, ExprId};
use crate::error::{Error, ErrorKind, Result};
use crate::index::{Index, IndexConfig, Path};
use crate::json_schema;
use crate::vocabulary::Vocabulary;

impl Index {
    /// Builds an index for a JSON Schema given as JSON text (property order as written).
    ///
    /// ```
    /// use logitmask::{json_schema, Index, IndexConfig, Vocabulary};
    /// use std::sync::Arc;
    /// let vocab = Arc::new(Vocabulary::new(
    ///     [Some("{\""), Some("ok"), Some("\":"), Some("true"), Some("false"), Some("}"), None],
    ///     &[6],
    /// )?);
    /// let schema = r#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}"#;
    /// let index = Index::from_json_schema_str(schema, &vocab, &IndexConfig::new(), &json_schema::Config::new())?;
    /// assert_eq!(index.allowed_tokens(index.initial_state())?.to_vec(), [0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_json_schema_str(
        schema: &str,
        vocab: &Arc<Vocabulary>,
        config: &IndexConfig,
        schema_config: &json_schema::Config,
    ) -> Result<Index> {
        let schema_config = Index::schema_config_for(vocab, config, schema_config);
        Index::from_schema_automaton(
            json_schema::automaton_from_json_schema_str(schema, &schema_config)?,
            vocab,
            config,
        )
    }

    /// The schema options as this index applies them: a lazy index (rows on request)
    /// takes the lazy defaults ([`json_schema::Config::for_lazy_index`]).
    fn schema_config_for(
        vocab: &Vocabulary,
        config: &IndexConfig,
        schema_config: &json_schema::Config,
    ) -> json_schema::Config {
        if Path::of(vocab, config).lazy {
            schema_config.for_lazy_index()
        } else {
            schema_config.clone()
        }
    }

    /// Builds an index for a JSON Schema given as a `serde_json::Value` (property order:
    /// see [`regex_from_json_schema`](json_schema::regex_from_json_schema)). Feature
    /// `serde_json`.
    #[cfg(feature = "serde_json")]
    pub fn from_json_schema(
        schema: &serde_json::Value,
        vocab: &Arc<Vocabulary>,
        config: &IndexConfig,
        schema_config: &json_schema::Config,
    ) -> Result<Index> {
        let schema_config = Index::schema_config_for(vocab, config, schema_config);
        Index::from_schema_automaton(
            json_schema::automaton_from_json_schema(schema, &schema_config)?,
            vocab,
            config,
        )
    }

    fn from_schema_automaton(
        mut a: json_schema::SchemaAutomaton,
        vocab: &Arc<Vocabulary>,
        config: &IndexConfig,
    ) -> Result<Index> {
        let what = format!("JSON Schema automaton ({} expression nodes)", a.exprs.len());
        let depth_cut = a.depth_cut;
        let path = Path::of(vocab, config);
        let mut roots: Vec<ExprId> = [a.root].into_iter().chain(a.string_bodies).collect();
        path.restrict(&mut a.exprs, &mut roots)?;
        a.root = roots[0];
        a.string_bodies = roots.split_off(1);
        // One call, one budget: an eager build gets what the compilation left. A lazy
        // index's requests each get a whole budget of their own, as for any lazy index.
        let spent = if config.get_lazy() { 0 } else { a.work };
        let max_work = config.get_dfa_config().get_max_work().saturating_sub(spent);
        // An intersection the compiler could not see empty (the parts of an `anyOf`
        // intersected, `oneOf` complements) is found so here: the schema's fault, said
        // as for a schema that allows nothing, not as a regex's.
        let mut dfa = ExprDfa::new(a.exprs, a.root, config.get_dfa_config(), max_work, what)
            .map_err(|e| match e.kind() {
                ErrorKind::InvalidRegex if depth_cut => json_schema::nothing_within_recursion_depth(),
                ErrorKind::InvalidRegex => Error::new(
                    ErrorKind::InvalidSchema,
                    "no value validates against the schema (within the documented limits: recursion depth, formats, number forms; oneOf branches whose complements are not exact may leave nothing)",
                ),
                _ => e,
            })?;
        // The contents of undeclared keys take a free run of the text hints' body class.
        dfa.set_free_runs(a.string_bodies);
        let too_large = complete_too_large(
            a.free_form_depth,
            dfa.max_states(),
            config.get_max_states(),
            path.exact,
        );
        if let (Some((kind, message)), false) = (&too_large, path.lazy) {
            return Err(Error::new(*kind, message.clone()));
        }
        let mut index = Index::from_automaton(dfa, &a.pattern, vocab, config, spent, &TEXT_HINTS)?;
        index.set_complete_too_large(too_large);
        Ok(index)
    }

    /// How many rows computed on request were at the start of a key of any name but
    /// the declared ones, where every token of JSON string characters was known allowed
    /// without checking the automaton: see docs/index-layout.md. (For the index these
    /// are free runs of its hints' body class; a regex's index has none.)
    pub fn key_start_row_count(&self) -> usize {
        self.free_run_row_count()
    }
}

/// Why a schema automaton whose free-form values nest containers `depth` levels deep
/// cannot be determinized completely within the limits, if it cannot: it has at least
/// `2^depth` states (one per stack of open objects and arrays), against `dfa_states`
/// (what `dfa_size_limit` allows) and, where every live state gets a row (a
/// byte-complete vocabulary), `max_states`.
fn complete_too_large(
    depth: usize,
    dfa_states: usize,
    max_states: usize,
    byte_complete: bool,
) -> Option<(ErrorKind, String)> {
    let floor = 1u64.checked_shl(depth as u32).unwrap_or(u64::MAX);
    let (kind, limit, name) = if byte_complete && floor > max_states as u64 {
        (
            ErrorKind::TooManyStates,
            max_states,
            "max_states / maxStates",
        )
    } else if floor > dfa_states as u64 {
        (
            ErrorKind::DfaTooLarge,
            dfa_states,
            "dfa_size_limit / dfaSizeLimit",
        )
    } else {
        return None;
    };
    Some((
        kind,
        format!(
            "the complete automaton of this JSON Schema has at least 2^{depth} states, more than {name} allows ({limit} states): \
             its free-form values (`{{}}`, `true`, an open object's values) nest objects and arrays {depth} levels deep \
             (option any_value_depth / anyValueDepth; a lazy index defaults to {lazy_depth}, since it builds only the states a text reaches). \
             Serializing and eager builds need every state: set a small anyValueDepth (an eager index defaults to {eager_depth}; each level about doubles the automaton)",
            lazy_depth = json_schema::DEFAULT_LAZY_ANY_VALUE_DEPTH,
            eager_depth = json_schema::DEFAULT_ANY_VALUE_DEPTH,
        ),
    ))
}
