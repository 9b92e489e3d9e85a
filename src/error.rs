//! Errors: one opaque [`Error`] type with an inspectable [`ErrorKind`].
//!
//! Every kind has a stable [`ErrorKind::code`] string; the JS bindings throw an `Error`
//! whose `code` property is exactly that string, so Rust and JS callers match on the
//! same names.

use std::fmt;

/// Declares [`ErrorKind`], [`ErrorKind::ALL`] and [`ErrorKind::code`] from one list, so
/// that the three cannot drift apart: the code of a kind is its variant name.
macro_rules! error_kinds {
    ($($(#[doc = $doc:literal])* $name:ident,)*) => {
        /// What went wrong, as a closed set of kinds a caller can match on.
        ///
        /// [`ErrorKind::ALL`] lists every kind once; the JS binding exposes
        /// [`ErrorKind::code`] as the `code` property of the thrown `Error`, and a test
        /// checks that the TypeScript `ErrorCode` union names exactly these codes.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $($(#[doc = $doc])* $name,)*
        }

        impl ErrorKind {
            /// Every kind, in declaration order: the one list of error codes, which the
            /// JS `ErrorCode` type and the docs are checked against.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$name,)*];

            /// The stable name of this kind, e.g. `"InvalidRegex"` (the JS `code` property).
            pub fn code(self) -> &'static str {
                match self {
                    $(ErrorKind::$name => stringify!($name),)*
                }
            }
        }
    };
}

error_kinds! {
    /// The pattern is not a valid regex, uses a feature the DFA cannot express, or
    /// matches no string at all (nor any string the vocabulary can spell).
    InvalidRegex,
    /// A size limit of regex-automata (NFA, determinization or DFA) was exceeded.
    DfaTooLarge,
    /// More states were reached than `max_states` allows.
    TooManyStates,
    /// A JSON Schema uses a keyword or a combination logitmask does not support.
    UnsupportedSchema,
    /// A JSON Schema is malformed.
    InvalidSchema,
    /// A tokenizer or vocabulary is malformed.
    InvalidTokenizer,
    /// A tokenizer is well formed but of a kind logitmask does not handle.
    UnsupportedTokenizer,
    /// A token id outside the vocabulary.
    UnknownTokenId,
    /// A known token id that the current state does not allow.
    TokenNotAllowed,
    /// A state id that does not belong to the index.
    InvalidState,
    /// A rollback further back than the history kept.
    RollbackTooFar,
    /// A caller-provided buffer is shorter than the vocabulary requires.
    BufferTooSmall,
    /// Serialized index bytes are truncated, corrupt or not an index at all.
    CorruptIndex,
    /// Serialized index bytes were built for another vocabulary.
    VocabularyMismatch,
    /// An argument has the wrong type or value (an options object with an unknown
    /// key, an id that is not an integer); raised by the JS bindings.
    InvalidArgument,
    /// A build (regex, schema, vocabulary, serialized index, lazy row) needed more work
    /// steps than its budget allows; the message names the option that raises it.
    BuildTooExpensive,
    /// A grammar is malformed: a syntax error, an undefined or twice defined rule, a
    /// left recursion that cannot be rewritten, a rule that matches nothing.
    InvalidGrammar,
    /// A grammar is well formed but uses a feature logitmask does not support.
    UnsupportedGrammar,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// An error from any logitmask operation: a [`kind`](Error::kind) to match on and a
/// message that says what was wrong and with what value.
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

/// `Result` with logitmask's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn with_source(
        kind: ErrorKind,
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Error {
        Error {
            kind,
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }

    /// The kind of error, for matching.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The stable name of the kind (`"InvalidRegex"`, ...), as the JS `code` property.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The human-readable message, without the kind prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.code(), self.message)?;
        if let Some(source) = &self.source {
            write!(f, " ({source})")?;
        }
        Ok(())
    }
}

/// A size limit for a message: `"1000 bytes"` or `"none"`.
pub(crate) fn limit(l: Option<usize>) -> String {
    l.map_or_else(|| "none".to_string(), |b| format!("{b} bytes"))
}

/// The pattern for an error message, shortened so that a huge pattern does not make a
/// huge message.
pub(crate) fn quote(pattern: &str) -> String {
    const MAX: usize = 200;
    if pattern.len() <= MAX {
        return format!("{pattern:?}");
    }
    let mut end = MAX;
    while !pattern.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}... ({} bytes)", &pattern[..end], pattern.len())
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_kind_once_with_its_name_as_code() {
        let mut codes: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
        for kind in ErrorKind::ALL {
            assert_eq!(format!("{kind:?}"), kind.code());
        }
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), ErrorKind::ALL.len());
        assert_eq!(ErrorKind::ALL.len(), 18);
    }
}
