//! The automaton's caches within `cache_bytes`: what they hold, when they clear, and
//! how a state whose expression was evicted gets it back (its recipe: the state and
//! byte class it was first reached from).

use super::*;

/// Bytes one expression node holds, about (node, info, hash-consing entry): the
/// determinization size limit caps the arena with it and the tables below.
pub(super) const BYTES_PER_NODE: usize = 96;

/// Bytes one slot of the memo tables holds, about (key, value, control byte).
pub(super) const BYTES_PER_MEMO_SLOT: usize = 16;

impl ExprDfa {
    /// Sets the bytes the arena and memo tables may hold between calls
    /// ([`clear_caches_if_over`](Self::clear_caches_if_over)).
    pub(crate) fn set_cache_bytes(&mut self, bytes: usize) {
        self.cache_bytes = bytes;
        self.clear_at = bytes;
    }

    /// The bytes past which the caches are cleared.
    pub(crate) fn cache_bytes(&self) -> usize {
        self.cache_bytes
    }

    /// Counts a clear of the index's rows alone (over the same budget).
    pub(crate) fn count_rows_clear(&mut self) {
        self.clears += 1;
    }

    /// How many times the caches were cleared.
    pub(crate) fn clears(&self) -> u64 {
        self.clears
    }

    /// Clears the caches if the arena and memo tables hold more than the cache budget,
    /// as regex-automata's lazy DFA clears its cache: the states, their transitions and
    /// finality stay (callers hold state ids), and so do the expressions of the states;
    /// every other node and every memo goes. Masks stay exact: a cleared memo is
    /// computed again, and a derivative that meets a state's expression finds it by
    /// hash-consing. Call it between computations only: no expression id may be held
    /// across it but the states'. True if it cleared.
    pub(crate) fn clear_caches_if_over(&mut self) -> bool {
        if self.working_bytes() <= self.clear_at {
            return false;
        }
        self.clear_caches();
        let kept = self.working_bytes();
        self.clear_at = self
            .cache_bytes
            .max(kept.saturating_add(self.cache_bytes / 2));
        true
    }

    /// See [`clear_caches_if_over`](Self::clear_caches_if_over).
    pub(crate) fn clear_caches(&mut self) {
        // Kept: the pinned states and those touched last; the others are evicted.
        let mut kept = vec![false; self.states.len()];
        for (s, recipe) in self.recipes.iter().enumerate() {
            kept[s] = *recipe == PINNED;
        }
        for &s in &self.recent {
            kept[s as usize] = true;
        }
        let kept_states: Vec<u32> = (0..self.states.len() as u32)
            .filter(|&s| kept[s as usize] && self.states[s as usize] != EVICTED)
            .collect();
        let mut roots: Vec<ExprId> = kept_states
            .iter()
            .map(|&s| self.states[s as usize])
            .collect();
        let n = roots.len();
        roots.extend(self.free_runs.drain());
        self.exprs.compact(&mut roots);
        self.free_runs = roots[n..].iter().copied().collect();
        self.states.fill(EVICTED);
        self.states[0] = ExprId::NOTHING;
        for (&s, &e) in kept_states.iter().zip(&roots) {
            self.states[s as usize] = e;
        }
        self.live = kept_states.len();
        // New tables, not cleared ones: a cleared table keeps its capacity.
        self.state_of = (kept_states.iter().zip(&roots))
            .filter(|(&s, _)| s != DEAD)
            .map(|(&s, &e)| (e, s))
            .collect();
        // Transitions are derived again (an evicted state's from its expression once
        // it is derived again); the dead state's lead nowhere.
        self.trans.clear();
        self.trans.write(0, &vec![DEAD; self.stride]);
        self.shared.clear();
        self.shared_known.fill(false);
        self.memo = DeriveMemo::default();
        self.nonempty = FastMap::default();
        self.built = FastMap::default();
        self.built_bytes = 0;
        self.first_seen = FastSet::default();
        self.first_stack = Vec::new();
        self.first_sets = Vec::new();
        // Its tables name expressions; the row bounds it gave are pinned state pairs.
        self.saturation = None;
        self.clears += 1;
    }

    /// Records that a caller is at state `s` (its row asked for, or a walk ended there):
    /// a clear keeps the last [`RECENT_STATES`] of them.
    pub(crate) fn touch(&mut self, s: u32) {
        if self.recent.len() < RECENT_STATES {
            self.recent.push(s);
        } else {
            self.recent[self.recent_at] = s;
            self.recent_at = (self.recent_at + 1) % RECENT_STATES;
        }
    }

    /// The expression of state `s`, derived again along its recipe if a clear evicted
    /// it: from its nearest ancestor with an expression (the start state at worst),
    /// every state on the way getting its expression back. The same language as
    /// before (the derivative of a language by a byte is one language), so rows and
    /// transitions met later agree with those given before.
    pub(super) fn expr_of(&mut self, s: u32) -> Result<ExprId, TooLarge> {
        let e = self.states[s as usize];
        if e != EVICTED {
            return Ok(e);
        }
        let mut path = Vec::new();
        let mut at = s;
        while self.states[at as usize] == EVICTED {
            let (parent, class) = self.recipes[at as usize];
            path.push((at, class));
            at = parent;
        }
        let mut e = self.states[at as usize];
        for &(state, class) in path.iter().rev() {
            e = self.derive_with(e, class as usize, false)?;
            self.states[state as usize] = e;
            self.state_of.entry(e).or_insert(state);
            self.live += 1;
        }
        Ok(e)
    }

    /// Bytes of memory held (arena, memo tables, states, transitions).
    pub(crate) fn memory_usage(&self) -> usize {
        self.exprs.memory_usage()
            + self.memo.capacity() * 16
            + self.nonempty.capacity() * 8
            + self.states.capacity() * 4
            + self.recipes.capacity() * 8
            + self.recent.capacity() * 4
            + self.state_of.capacity() * 12
            + self.trans.memory_usage()
            + self.shared.memory_usage()
            + self.shared_known.capacity()
            + self.partitions.capacity() * 2 * std::mem::size_of::<Box<[u8]>>()
            + self.partition_bytes
            + self.built_bytes
            + self.finals.capacity()
            + self.saturation.as_ref().map_or(0, Saturation::memory_usage)
    }
}
