//! The per-sequence cursor over a shared [`Index`].

use std::collections::VecDeque;
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};
use crate::index::{Index, MaskBuffer, StateId, TokenSet};

/// Default number of steps a [`Guide`] can roll back.
pub const DEFAULT_MAX_ROLLBACK: usize = 32;

/// The cap of forced text the JS `forcedBytes()` uses by default, in bytes.
pub const DEFAULT_MAX_FORCED_BYTES: usize = 256;
/// The largest cap the JS `forcedBytes(max)` takes (each byte costs one automaton state).
pub const MAX_FORCED_BYTES: usize = 1 << 16;

/// Options for a [`Guide`].
#[derive(Clone, Debug)]
pub struct GuideConfig {
    max_rollback: usize,
}

impl Default for GuideConfig {
    fn default() -> Self {
        GuideConfig {
            max_rollback: DEFAULT_MAX_ROLLBACK,
        }
    }
}

impl GuideConfig {
    /// Defaults: [`DEFAULT_MAX_ROLLBACK`] steps of history.
    pub fn new() -> GuideConfig {
        GuideConfig::default()
    }
    /// How many of the latest steps [`Guide::rollback`] can undo (0 disables it).
    pub fn max_rollback(mut self, steps: usize) -> GuideConfig {
        self.max_rollback = steps;
        self
    }
    /// The rollback depth.
    pub fn get_max_rollback(&self) -> usize {
        self.max_rollback
    }
}

/// Where one generated sequence stands: the current state, what may come next, and a
/// bounded history for rollback. Cheap to create; many guides share one `Arc<Index>`.
///
/// After an EOS id is accepted the guide is finished: its state stays the same,
/// [`is_finished`](Guide::is_finished) is true, and from then on only the EOS ids are
/// allowed.
///
/// ```
/// use logitmask::{Guide, Index, Vocabulary};
/// use std::sync::Arc;
/// let vocab = Arc::new(Vocabulary::new(
///     [Some("yes"), Some("no"), Some("y"), Some("es"), Some("<eos>")],
///     &[4],
/// )?);
/// let index = Arc::new(Index::new("yes|no", &vocab)?);
/// let mut guide = Guide::new(index.clone());
/// let mut mask = vec![0u32; 1];
/// guide.fill_mask(&mut mask)?;
/// assert_eq!(mask[0], 0b00111); // "yes", "no", "y"
/// guide.advance(2)?;             // "y"
/// assert_eq!(guide.allowed_tokens()?.to_vec(), [3]);
/// guide.advance(3)?;             // "es"
/// assert!(guide.can_finish());
/// guide.advance(4)?;             // EOS
/// assert!(guide.is_finished());
/// assert!(guide.advance(0).is_err());
/// guide.rollback(2)?;            // back to after "y"
/// assert_eq!(guide.allowed_tokens()?.to_vec(), [3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Guide {
    index: Arc<Index>,
    state: u32,
    finished: bool,
    /// (state, finished) before each of the latest steps, newest last.
    history: VecDeque<(u32, bool)>,
    max_rollback: usize,
}

impl Guide {
    /// A guide at the index's initial state, with the default rollback depth.
    pub fn new(index: Arc<Index>) -> Guide {
        Guide::with_config(index, &GuideConfig::default())
    }

    /// A guide at the index's initial state.
    pub fn with_config(index: Arc<Index>, config: &GuideConfig) -> Guide {
        let state = index.initial_state().as_u32();
        Guide {
            index,
            state,
            finished: false,
            history: VecDeque::with_capacity(config.max_rollback.min(1024)),
            max_rollback: config.max_rollback,
        }
    }

    /// The shared index.
    pub fn index(&self) -> &Arc<Index> {
        &self.index
    }

    /// The current state.
    pub fn state(&self) -> StateId {
        StateId::new(self.state)
    }

    /// The tokens allowed now (only the EOS ids once finished).
    pub fn allowed_tokens(&self) -> Result<Arc<TokenSet>> {
        if self.finished {
            return Ok(self.index.eos_tokens().clone());
        }
        self.index.allowed_tokens(StateId::new(self.state))
    }

    /// The allowed set, to write a mask of: a mid-density sparse row keeps its bitset for
    /// the masks to copy (see [`IndexConfig::mask_cache_bytes`](crate::IndexConfig::mask_cache_bytes)).
    pub(crate) fn mask_row(&self) -> Result<Arc<TokenSet>> {
        if self.finished {
            return Ok(self.index.eos_tokens().clone());
        }
        self.index.row_for_mask(StateId::new(self.state))
    }

    /// Writes the allowed set as a bitmask (bit `id & 31` of word `id >> 5`); `mask`
    /// needs at least `ceil(vocab_size / 32)` words, extra words are cleared.
    pub fn fill_mask(&self, mask: &mut [u32]) -> Result<()> {
        self.mask_row()?.fill_mask(mask)
    }

    /// Writes the allowed set into a reusable [`MaskBuffer`] with as few stores as the
    /// row needs (see there); the cheapest way to hand masks to a runtime step after step.
    pub fn fill_mask_buffer(&self, buffer: &mut MaskBuffer) -> Result<()> {
        self.mask_row()?.fill_mask_buffer(buffer)
    }

    /// Sets every disallowed logit (and padding past the vocabulary) to negative
    /// infinity, in place; `logits` needs at least `vocab_size` entries.
    pub fn mask_logits(&self, logits: &mut [f32]) -> Result<()> {
        self.mask_row()?.mask_logits(logits)
    }

    /// Whether `token` may come next.
    pub fn is_allowed(&self, token: u32) -> Result<bool> {
        self.index.check_token(token)?;
        Ok(self.step(token)?.is_some())
    }

    fn step(&self, token: u32) -> Result<Option<u32>> {
        if self.finished {
            return Ok(self.index.vocabulary().is_eos(token).then_some(self.state));
        }
        self.index.step_token(self.state, token)
    }

    /// Consumes `token`. An id outside the vocabulary is [`ErrorKind::UnknownTokenId`];
    /// a known id the current state does not allow is [`ErrorKind::TokenNotAllowed`].
    /// On error nothing changes.
    pub fn advance(&mut self, token: u32) -> Result<()> {
        self.index.check_token(token)?;
        let Some(next) = self.step(token)? else {
            return Err(self.not_allowed(token));
        };
        if self.max_rollback > 0 {
            if self.history.len() == self.max_rollback {
                self.history.pop_front();
            }
            self.history.push_back((self.state, self.finished));
        }
        self.finished = self.finished || self.index.vocabulary().is_eos(token);
        self.state = next;
        Ok(())
    }

    fn not_allowed(&self, token: u32) -> Error {
        let vocab = self.index.vocabulary();
        let what = if vocab.is_eos(token) {
            "EOS is not allowed: the text so far does not fully match".to_string()
        } else if self.finished {
            "the guide is finished (EOS was accepted); only EOS ids are allowed".to_string()
        } else {
            match vocab.text_bytes(token) {
                None => "it has no text (no token, an empty token or a special token)".to_string(),
                Some(b) => format!(
                    "its text {:?} cannot continue a match here",
                    String::from_utf8_lossy(b)
                ),
            }
        };
        Error::new(
            ErrorKind::TokenNotAllowed,
            format!(
                "token id {token} is not allowed in state {}: {what}",
                self.state
            ),
        )
    }

    /// The text every completion from here starts with, at most `max` bytes
    /// ([`Index::forced_bytes`]; empty once finished). A runtime may tokenize it and
    /// feed the tokens in one batch, advancing the guide with each; docs/semantics.md,
    /// "Forced text", says how to keep the token sequence one the tokenizer would write.
    pub fn forced_bytes(&self, max: usize) -> Result<Vec<u8>> {
        if self.finished {
            return Ok(Vec::new());
        }
        self.index.forced_bytes(StateId::new(self.state), max)
    }

    /// How many of the forced bytes may be written as tokens now without a token of the
    /// text that follows being able to span them ([`Index::forced_safe_len`]).
    pub fn forced_safe_len(&self, forced: &[u8]) -> Result<usize> {
        if self.finished || forced.is_empty() {
            return Ok(0);
        }
        self.index.forced_safe_len(StateId::new(self.state), forced)
    }

    /// Whether EOS is allowed now: the text so far fully matches.
    pub fn can_finish(&self) -> bool {
        self.index.state_is_final(self.state)
    }

    /// Whether an EOS id has been accepted.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Undoes the last `n` steps; more than the history holds (at most `max_rollback`)
    /// is [`ErrorKind::RollbackTooFar`] and changes nothing.
    pub fn rollback(&mut self, n: usize) -> Result<()> {
        if n > self.history.len() {
            return Err(Error::new(
                ErrorKind::RollbackTooFar,
                format!(
                    "cannot roll back {n} steps: only {} are kept (max_rollback {})",
                    self.history.len(),
                    self.max_rollback
                ),
            ));
        }
        for _ in 0..n {
            let (state, finished) = self.history.pop_back().expect("length checked");
            self.state = state;
            self.finished = finished;
        }
        Ok(())
    }

    /// Back to the initial state, history cleared.
    pub fn reset(&mut self) {
        self.state = self.index.initial_state().as_u32();
        self.finished = false;
        self.history.clear();
    }
}
