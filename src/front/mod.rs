//! Front ends' way into an index. Each compiles its language to an automaton over the
//! bytes the vocabulary spells (`index::Path`) and hands it to the index's one
//! constructor (`Index::from_automaton`) with the row hints its text affords
//! (`index::hints`): which character classes are worth a slice of the vocabulary, which
//! one its automata run over freely, and how that one splits into words and spaces. The
//! index below speaks of byte classes and those hints only; the language's knowledge
//! stays here and in the front ends' own modules (`crate::json_schema`).
//!
//! * `regex.rs`: `Index::new`, `Index::with_config`, `Index::from_expr`.
//! * `json.rs`: `Index::from_json_schema_str`, `Index::from_json_schema`, and
//!   `Index::key_start_row_count`: the JSON Schema compiler's automaton, with its keys'
//!   free runs.
//! * `grammar.rs`: `Index::from_grammar`, through `Index::from_expr`.
//!
//! All hand down [`TEXT_HINTS`]: regexes are mostly written for JSON text too (a
//! schema's regex from [`regex_from_json_schema`](crate::json_schema::regex_from_json_schema),
//! a string's pattern), and the hints cost nothing where they do not apply.

mod grammar;
mod json;
mod regex;

use crate::index::hints::{BodyHint, ClassHint, RowHints, MAX_CLASSES};
use crate::vocabulary::Vocabulary;

/// The classes of the text that regexes and JSON Schemas constrain, as row hints.
static TEXT_CLASSES: [ClassHint; 4] = [
    // What the JSON Schema compiler writes for an unescaped string character
    // (`json_schema::pattern::PLAIN_CHAR`): the body class.
    ClassHint {
        name: "json-string",
        pattern: r#"[^"\\\x00-\x1F]*"#,
        within: None,
    },
    // Identifier-like patterns (`^[a-zA-Z0-9_-]+$`, hex, base64...).
    ClassHint {
        name: "alnum",
        pattern: "[a-zA-Z0-9]*",
        within: Some(0),
    },
    ClassHint {
        name: "lower",
        pattern: "[a-z]*",
        within: Some(1),
    },
    ClassHint {
        name: "digits",
        pattern: "[0-9]*",
        within: Some(1),
    },
];

const _: () = assert!(TEXT_CLASSES.len() <= MAX_CLASSES);

/// The row hints of regex and JSON Schema indexes: the classes above, a JSON string's
/// unescaped characters as the body class (whose free runs are the contents of
/// undeclared keys, `json.rs`), split into word characters and the space.
pub(crate) static TEXT_HINTS: RowHints = RowHints {
    classes: &TEXT_CLASSES,
    body: Some(BodyHint {
        class: 0,
        // A JSON string holds ASCII from the space up unescaped (not `"` and `\`).
        ascii: (0x20, 0x7F),
        // The body's ASCII characters but the space, and the space (ECMA-262's `\s`,
        // which JSON Schema's patterns use, holds no other ASCII character a string may
        // hold unescaped).
        shape_classes: [r#"[!#-\[\]-~]*"#, "[ ]*"],
        word_probes: b"azA0.",
        space_probe: b' ',
    }),
};

impl Vocabulary {
    /// Builds what rows on request use besides the trie, the vocabulary slices of the
    /// text hints' classes, the tokens holding each byte and the word shapes
    /// (docs/index-layout.md), now instead of at the first row inside a string, which
    /// would otherwise pay for them (3.2 MiB for Llama 3; its JSON string slice alone
    /// takes 33 ms natively, and a fresh wasm worker's first such row took 84 ms).
    pub fn prepare_slices(&self) {
        crate::index::prepare_slices(self, &TEXT_HINTS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::automaton::{Dfa, DEAD};

    /// Whether the class of `pattern` ("any number of characters of the class") takes
    /// the one-byte character `b`.
    fn takes(pattern: &str, b: u8) -> bool {
        let d = Dfa::new(pattern).unwrap();
        let s = d.step(d.start(), b);
        s != DEAD && s == d.start()
    }

    #[test]
    fn the_body_hint_agrees_with_its_class() {
        let body = TEXT_HINTS.body.as_ref().unwrap();
        let class = TEXT_HINTS.classes[body.class].pattern;
        let ascii: Vec<u8> = (0..128u8).filter(|&b| takes(class, b)).collect();
        assert_eq!(body.ascii, (ascii[0], *ascii.last().unwrap()));
        // Word characters and the space are apart, among the body's ASCII characters
        // (which DEL is too: tokens holding it have no shape and are walked whole).
        let [word, space] = body.shape_classes;
        for b in 0..128u8 {
            let (w, s) = (takes(word, b), takes(space, b));
            assert!(takes(class, b) || !(w || s), "byte {b:#x}");
            assert!(!(w && s), "byte {b:#x}");
        }
        assert!(body.word_probes.iter().all(|&b| takes(word, b)));
        assert!(takes(space, body.space_probe));
    }
}
