//! Where rows live: one cell per state, identical rows shared, a count held to the
//! index's `max_states`.
//!
//! [`StateRows`] are the per-state cells (set once, read without a lock); a
//! [`RowStore`] decides whether a new row may be added, shares it with an identical
//! stored row, and counts it. Every write of a row, by the eager build, on request, by
//! the on-demand source or by loading, goes through these two types.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use super::token_set::TokenSet;
use crate::error::{quote, Error, ErrorKind, Result};

/// The row of each state, once computed.
pub(super) struct StateRows(Vec<OnceLock<Arc<TokenSet>>>);

impl StateRows {
    /// `n` states without rows.
    pub(super) fn new(n: usize) -> StateRows {
        StateRows((0..n).map(|_| OnceLock::new()).collect())
    }

    /// Number of states (with a row or not).
    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// Room for states `0..n` (the on-demand source, as its automaton grows).
    pub(super) fn grow_to(&mut self, n: usize) {
        if self.0.len() < n {
            self.0.resize_with(n, OnceLock::new);
        }
    }

    /// The row of state `s`, if computed.
    #[inline]
    pub(super) fn get(&self, s: u32) -> Option<&Arc<TokenSet>> {
        self.0.get(s as usize)?.get()
    }

    /// Sets the row of state `s` unless it has one; false if it had.
    pub(super) fn set(&self, s: u32, row: Arc<TokenSet>) -> bool {
        self.0[s as usize].set(row).is_ok()
    }

    /// Forgets the row of state `s` (the eager build's pruning).
    pub(super) fn clear(&mut self, s: u32) {
        self.0[s as usize] = OnceLock::new();
    }

    /// Replaces the row of state `s` (the eager build's pruning).
    pub(super) fn replace(&mut self, s: u32, row: Arc<TokenSet>) {
        self.0[s as usize] = OnceLock::from(row);
    }

    /// `(state, row)` for every state with a row, ascending.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, &Arc<TokenSet>)> {
        self.0
            .iter()
            .enumerate()
            .filter_map(|(s, cell)| Some((s as u32, cell.get()?)))
    }

    /// Bytes of memory held by the cells (not the rows).
    pub(super) fn memory_usage(&self) -> usize {
        self.0.capacity() * std::mem::size_of::<OnceLock<Arc<TokenSet>>>()
    }
}

/// The distinct rows of an index, and how many states have one.
pub(super) struct RowStore {
    /// Every distinct row, to share identical ones.
    distinct: Mutex<HashSet<Arc<TokenSet>>>,
    computed: AtomicUsize,
    /// Rows on request that came through a vocabulary slice (`sliced.rs`).
    sliced: AtomicUsize,
    /// Those of them that came from the word shapes (`sliced.rs`, `shaped`).
    shaped: AtomicUsize,
    /// Rows on request taken from the bounds of counts (`source.rs`), without a walk.
    bounded: AtomicUsize,
    /// Rows on request through slices at the start of a free run of the body class
    /// (`ExprDfa::starts_free_run`), its tokens known allowed without a check.
    free_run: AtomicUsize,
    /// Rows on request whose whole-trie walk decided subtrees at states that loop on the
    /// body class (`sliced.rs`, `walk_uncovered`).
    loop_cut: AtomicUsize,
    max_states: usize,
    /// Bytes left for rows' bitsets kept for masks (`IndexConfig::mask_cache_bytes`).
    expansion_left: AtomicUsize,
    /// What `expansion_left` starts from.
    expansion_budget: usize,
    /// Bytes of the distinct rows, as stored and expanded (what a lazy index's cache
    /// budget compares, without a walk over the rows).
    row_bytes: AtomicUsize,
}

impl RowStore {
    /// An empty store that admits up to `max_states` rows.
    pub(super) fn new(max_states: usize) -> RowStore {
        RowStore {
            distinct: Mutex::new(HashSet::new()),
            computed: AtomicUsize::new(0),
            sliced: AtomicUsize::new(0),
            shaped: AtomicUsize::new(0),
            bounded: AtomicUsize::new(0),
            free_run: AtomicUsize::new(0),
            loop_cut: AtomicUsize::new(0),
            max_states,
            expansion_left: AtomicUsize::new(0),
            expansion_budget: 0,
            row_bytes: AtomicUsize::new(0),
        }
    }

    /// Sets the bytes rows' kept bitsets may take, before any is kept.
    pub(super) fn set_expansion_budget(&mut self, bytes: usize) {
        self.expansion_left = AtomicUsize::new(bytes);
        self.expansion_budget = bytes;
    }

    /// Forgets every row (a lazy index's cache cleared, `source.rs`): the count of
    /// states with rows and the bitsets' budget start over; rows a caller still holds
    /// stay valid.
    pub(super) fn forget_rows(&self) {
        *self.distinct() = HashSet::new();
        self.computed.store(0, Ordering::Relaxed);
        self.row_bytes.store(0, Ordering::Relaxed);
        self.expansion_left
            .store(self.expansion_budget, Ordering::Relaxed);
    }

    /// Keeps `row`'s bitset for its masks if that makes them cheaper
    /// ([`TokenSet::worth_expanding`]) and the budget has room; the first come keep theirs.
    pub(super) fn expand_if_worth(&self, row: &TokenSet) {
        if !row.worth_expanding() {
            return;
        }
        let bytes = row.expansion_bytes();
        let take = |left: usize| left.checked_sub(bytes);
        let taken = self
            .expansion_left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, take)
            .is_ok();
        if !taken {
            return;
        }
        if row.expand() {
            self.row_bytes.fetch_add(bytes, Ordering::Relaxed);
        } else {
            // Expanded by another thread meanwhile, or no memory: give the bytes back.
            self.expansion_left.fetch_add(bytes, Ordering::Relaxed);
        }
    }

    /// Number of states with rows.
    pub(super) fn count(&self) -> usize {
        self.computed.load(Ordering::Relaxed)
    }

    /// Counts a row on request made through a slice (`shaped`: from the word shapes).
    pub(super) fn count_sliced(&self, shaped: bool) {
        self.sliced.fetch_add(1, Ordering::Relaxed);
        if shaped {
            self.shaped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Rows on request made from word shapes so far.
    pub(super) fn shaped_count(&self) -> usize {
        self.shaped.load(Ordering::Relaxed)
    }

    /// Rows on request made through a slice so far.
    pub(super) fn sliced_count(&self) -> usize {
        self.sliced.load(Ordering::Relaxed)
    }

    /// Counts a row on request taken from the bounds of counts.
    pub(super) fn count_bounded(&self) {
        self.bounded.fetch_add(1, Ordering::Relaxed);
    }

    /// Rows on request taken from the bounds of counts so far.
    pub(super) fn bounded_count(&self) -> usize {
        self.bounded.load(Ordering::Relaxed)
    }

    /// Counts a row on request whose body class tokens were known allowed.
    pub(super) fn count_free_run(&self) {
        self.free_run.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a row on request whose walk decided subtrees at looping states.
    pub(super) fn count_loop_cut(&self) {
        self.loop_cut.fetch_add(1, Ordering::Relaxed);
    }

    /// Rows on request whose walk decided subtrees at looping states so far.
    pub(super) fn loop_cut_count(&self) -> usize {
        self.loop_cut.load(Ordering::Relaxed)
    }

    /// Rows on request whose body class tokens were known allowed so far.
    pub(super) fn free_run_count(&self) -> usize {
        self.free_run.load(Ordering::Relaxed)
    }

    /// Number of distinct rows.
    pub(super) fn distinct_count(&self) -> usize {
        self.distinct().len()
    }

    /// The distinct rows. A panic elsewhere while the lock was held cannot have left the
    /// set half-changed (an insert is one call), so a poisoned lock is used as it is.
    fn distinct(&self) -> MutexGuard<'_, HashSet<Arc<TokenSet>>> {
        self.distinct.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether one more state may get a row; [`ErrorKind::TooManyStates`] (naming
    /// `pattern`) if not.
    pub(super) fn admit(&self, pattern: &str) -> Result<()> {
        if self.count() >= self.max_states {
            return Err(too_many_states(self.max_states, pattern));
        }
        Ok(())
    }

    /// Stores `row` for state `s` in `rows` (shared with an identical stored row) unless
    /// another thread stored one first, and returns the row `s` has.
    pub(super) fn store(&self, rows: &StateRows, s: u32, row: TokenSet) -> Arc<TokenSet> {
        self.store_shared(rows, s, self.share(row))
    }

    /// Stores `row`, a stored row already, for state `s` (unless another thread stored
    /// one first), and returns the row `s` has.
    pub(super) fn store_shared(
        &self,
        rows: &StateRows,
        s: u32,
        row: Arc<TokenSet>,
    ) -> Arc<TokenSet> {
        if rows.set(s, row) {
            self.computed.fetch_add(1, Ordering::Relaxed);
        }
        rows.get(s).expect("set above").clone()
    }

    /// Shares `row` with an identical stored row if one exists.
    fn share(&self, row: TokenSet) -> Arc<TokenSet> {
        let mut distinct = self.distinct();
        match distinct.get(&row) {
            Some(r) => r.clone(),
            None => {
                self.row_bytes
                    .fetch_add(row.memory_usage(), Ordering::Relaxed);
                let r = Arc::new(row);
                distinct.insert(r.clone());
                r
            }
        }
    }

    /// Recounts and re-shares after rows were cleared or replaced: identical rows become
    /// one again, and rows no state uses are forgotten.
    // A row's kept bitset (`TokenSet::expand`) is its only interior mutability, and it is
    // part of neither its hash nor its equality.
    #[allow(clippy::mutable_key_type)]
    pub(super) fn reshare(&mut self, rows: &mut StateRows) {
        let mut distinct = HashSet::new();
        let mut count = 0;
        for cell in &mut rows.0 {
            if let Some(row) = cell.take() {
                let row = distinct.get(&row).cloned().unwrap_or_else(|| {
                    distinct.insert(row.clone());
                    row
                });
                *cell = OnceLock::from(row);
                count += 1;
            }
        }
        let bytes = distinct.iter().map(|r| r.memory_usage()).sum();
        self.distinct = Mutex::new(distinct);
        self.computed = AtomicUsize::new(count);
        self.row_bytes = AtomicUsize::new(bytes);
    }

    /// Bytes held by the distinct rows, as counted when they were stored or expanded.
    pub(super) fn row_bytes(&self) -> usize {
        self.row_bytes.load(Ordering::Relaxed)
    }

    /// Bytes of memory held by the distinct rows.
    pub(super) fn memory_usage(&self) -> usize {
        self.distinct().iter().map(|r| r.memory_usage()).sum()
    }
}

pub(super) fn too_many_states(max: usize, pattern: &str) -> Error {
    Error::new(
        ErrorKind::TooManyStates,
        format!("regex {} needs more than max_states = {max} states; raise the limit or simplify the pattern", quote(pattern)),
    )
}
