//! Errors: one opaque [`Error`] type with an inspectable [`ErrorKind`].
//!
//! Every kind has a stable [`ErrorKind::code`] string; the JS bindings throw an `Error`
//! whose `code` property is exactly that string, so Rust and JS callers match on the
//! same names.

use std::fmt;

/// What went wrong, as a closed set of kinds a caller can match on.
///
/// The list mirrors the error table of the design document; the JS binding exposes
/// [`ErrorKind::code`] as the `code` property of the thrown `Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
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
}

impl ErrorKind {
    /// The stable name of this kind, e.g. `"InvalidRegex"` (the JS `code` property).
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidRegex => "InvalidRegex",
            ErrorKind::DfaTooLarge => "DfaTooLarge",
            ErrorKind::TooManyStates => "TooManyStates",
            ErrorKind::UnsupportedSchema => "UnsupportedSchema",
            ErrorKind::InvalidSchema => "InvalidSchema",
            ErrorKind::InvalidTokenizer => "InvalidTokenizer",
            ErrorKind::UnsupportedTokenizer => "UnsupportedTokenizer",
            ErrorKind::UnknownTokenId => "UnknownTokenId",
            ErrorKind::TokenNotAllowed => "TokenNotAllowed",
            ErrorKind::InvalidState => "InvalidState",
            ErrorKind::RollbackTooFar => "RollbackTooFar",
            ErrorKind::BufferTooSmall => "BufferTooSmall",
            ErrorKind::CorruptIndex => "CorruptIndex",
            ErrorKind::VocabularyMismatch => "VocabularyMismatch",
            ErrorKind::InvalidArgument => "InvalidArgument",
        }
    }
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
        Error { kind, message: message.into(), source: None }
    }

    pub(crate) fn with_source(
        kind: ErrorKind,
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Error {
        Error { kind, message: message.into(), source: Some(Box::new(source)) }
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

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}
