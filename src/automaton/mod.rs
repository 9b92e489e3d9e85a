//! Regex -> expression -> DFA: the automata behind every index.
//!
//! One engine for every front end (regexes, JSON Schemas, grammars):
//!
//! * [`expr`]: automaton expressions, hash-consed, determinized lazily by derivatives
//!   ([`ExprDfa`]), with exact liveness; a regex is parsed by regex-syntax (our Unicode
//!   tables, `unicode_class.rs`) and lowered from its HIR, look-around included
//!   (`expr/look.rs`).
//! * [`dense`]: the compact DFA ([`Dfa`]): live states only (reachable and co-accessible),
//!   numbered from 1, state 0 [`DEAD`].
//! * [`minimize`]: Hopcroft partition refinement, to merge equivalent states
//!   ([`Minimize`]) and to find states that keep the same strings alive.
//!
//! [`Dfa::with_config`] runs the whole pipeline; a lazy index keeps the [`ExprDfa`]
//! instead and determinizes what its walks need. The contracts (full match over bytes,
//! exact co-accessibility) are in docs/semantics.md.

mod case_fold;
mod case_fold_table;
mod config;
pub(crate) mod dense;
pub mod expr;
pub(crate) mod minimize;
pub(crate) mod primitives;
pub(crate) mod syntax;
mod unicode_class;
mod unicode_class_table;

// Work budgets live on the ground floor (`crate::budget`); the compilers of the front
// ends reach them through here too.
pub(crate) use crate::budget::{Budget, DEFAULT_MAX_WORK};
pub use config::{
    DfaConfig, Minimize, AUTO_MINIMIZE_MAX_STATES, DEFAULT_DETERMINIZE_SIZE_LIMIT,
    DEFAULT_DFA_SIZE_LIMIT, DEFAULT_NFA_SIZE_LIMIT,
};
pub use dense::Dfa;
pub(crate) use expr::ExprDfa;
pub(crate) use minimize::liveness_blocks;
pub use primitives::Walk;
pub(crate) use primitives::DEAD;

use crate::error::Result;

impl Dfa {
    /// Compiles `pattern` with the default limits.
    pub fn new(pattern: &str) -> Result<Dfa> {
        Dfa::with_config(pattern, &DfaConfig::default())
    }

    /// Compiles `pattern` with the given limits.
    ///
    /// Errors: [`ErrorKind::InvalidRegex`](crate::ErrorKind::InvalidRegex) for a
    /// malformed pattern, an unsupported feature (e.g. a Unicode word boundary `\b`; use
    /// `(?-u:\b)`), or a pattern that matches no string;
    /// [`ErrorKind::DfaTooLarge`](crate::ErrorKind::DfaTooLarge) when a size limit is
    /// exceeded.
    pub fn with_config(pattern: &str, config: &DfaConfig) -> Result<Dfa> {
        Dfa::from_on_demand(ExprDfa::for_regex(pattern, config)?, config)
    }

    /// Completes `determinizer` into a DFA of live states only, minimized as `config`
    /// says.
    pub(crate) fn from_on_demand(determinizer: ExprDfa, config: &DfaConfig) -> Result<Dfa> {
        Dfa::from_on_demand_charged(determinizer, config, &mut Budget::unlimited("regex"))
    }

    /// [`from_on_demand`](Self::from_on_demand), charging `budget` the
    /// determinization's work (which the determinizer's own budget, the same limit,
    /// already bounds).
    pub(crate) fn from_on_demand_charged(
        mut determinizer: ExprDfa,
        config: &DfaConfig,
        budget: &mut Budget,
    ) -> Result<Dfa> {
        determinizer.complete()?;
        budget.charge(determinizer.work_used())?;
        let dfa = Dfa::from_complete(&determinizer);
        drop(determinizer);
        let minimize = match config.get_minimize() {
            Minimize::Never => false,
            Minimize::Always => true,
            Minimize::Auto => dfa.state_count() <= AUTO_MINIMIZE_MAX_STATES,
        };
        Ok(if minimize {
            minimize::minimized(&dfa)
        } else {
            dfa
        })
    }

    /// A completed determinizer as a DFA with the same state numbers (dead ends kept).
    pub(crate) fn from_complete(determinizer: &ExprDfa) -> Dfa {
        let (classes, stride, trans, finals) = determinizer.parts();
        Dfa::from_parts(classes, stride, trans, finals, ExprDfa::START)
            .expect("a completed determinizer has the Dfa invariants")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn full_match_over_bytes_and_unicode() {
        let d = Dfa::new(r"\d+").unwrap();
        assert!(d.is_match("١٢".as_bytes())); // Arabic-Indic digits are \d
        assert!(d.is_match(b"42"));
        assert!(!d.is_match(b""));
        assert!(!d.is_match(b"4a"));
        // Half a character is alive, not a match.
        let two = "٢".as_bytes();
        assert!(matches!(
            d.walk(d.start(), &two[..1]),
            Walk::Alive {
                is_match: false,
                ..
            }
        ));
    }

    #[test]
    fn all_alternatives_survive() {
        // Leftmost-first would drop the longer alternatives after "12/05/20".
        let d = Dfa::new(r"([0-9]{2}/){2}([0-9][0-9]|20[0-9][0-9])").unwrap();
        assert!(d.is_match(b"12/05/2023"));
        assert!(d.is_match(b"12/05/23"));
    }

    #[test]
    fn dead_ends_are_dead() {
        // "ac" and "xa" can never complete: an empty class, an end anchor mid-pattern.
        let d = Dfa::new(r"ab|ac[a&&b]|xa$b|xy").unwrap();
        assert!(matches!(d.walk(d.start(), b"a"), Walk::Alive { .. }));
        assert_eq!(d.walk(d.start(), b"ac"), Walk::Dead);
        assert!(matches!(d.walk(d.start(), b"x"), Walk::Alive { .. }));
        assert_eq!(d.walk(d.start(), b"xa"), Walk::Dead);
        assert!(d.is_match(b"xy") && d.is_match(b"ab"));
    }

    #[test]
    fn errors_name_the_problem() {
        let e = Dfa::new("(ab").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRegex);
        assert!(e.message().contains("(ab"), "{e}");
        let e = Dfa::new(r"\bfoo").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRegex);
        let e = Dfa::new(r"[a&&b]").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRegex);
        assert!(e.message().contains("matches no string"), "{e}");
        let e =
            Dfa::with_config(r"\w{50}", &DfaConfig::new().dfa_size_limit(Some(1000))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DfaTooLarge);
        assert!(e.message().contains("1000 bytes"), "{e}");
    }

    #[test]
    fn non_greedy_repetitions_compile_to_the_greedy_dfa() {
        let never = DfaConfig::new().minimize(Minimize::Never);
        for (lazy, greedy) in [
            (
                r"\+?\d{1,4}?[-.\s]?\(?\d{1,3}?\)?[-.\s]?\d{1,4}",
                r"\+?\d{1,4}[-.\s]?\(?\d{1,3}\)?[-.\s]?\d{1,4}",
            ),
            ("(a+?b*?)??c{2,}?", "(a+b*)?c{2,}"),
            ("(?U)a+b?", "a+b?"), // swap_greed: the parser already made these lazy
        ] {
            assert_eq!(
                Dfa::with_config(lazy, &never).unwrap(),
                Dfa::with_config(greedy, &never).unwrap(),
                "{lazy}"
            );
            assert_eq!(Dfa::new(lazy).unwrap(), Dfa::new(greedy).unwrap(), "{lazy}");
        }
        // Errors read as before.
        let e = Dfa::new("(a+?").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRegex);
        let e =
            Dfa::with_config(r"\w{50}?", &DfaConfig::new().dfa_size_limit(Some(1000))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DfaTooLarge);
    }
}
