//! Work budgets: deterministic limits on how much a build may do.
//!
//! Size limits alone let a small input cost seconds (a short regex with a large count, a
//! schema whose checks run after the expansion they guard). A [`Budget`] counts work in
//! abstract steps (states interned, derivative nodes visited, trie nodes walked), not
//! wall time, so the same input fails the same way on every machine and tests can pin
//! it. Exceeding it is [`ErrorKind::BuildTooExpensive`], naming the option that raises it.

use crate::error::{Error, ErrorKind, Result};

/// Default work budget per build call: sized so that one call stays well under a second
/// on a 2-core machine in wasm (calibrated on the schema corpus; see docs/schemabench.md).
pub const DEFAULT_MAX_WORK: u64 = 50_000_000;

/// Steps used against a limit. Charged with [`Budget::charge`]; cheap enough for hot
/// loops (one add and one compare).
#[derive(Clone, Debug)]
pub(crate) struct Budget {
    used: u64,
    limit: u64,
    /// What is being built, for the error message ("regex", "JSON Schema", ...).
    what: &'static str,
}

impl Budget {
    pub(crate) fn new(limit: u64, what: &'static str) -> Budget {
        Budget {
            used: 0,
            limit,
            what,
        }
    }

    /// A budget without a limit, for internal builds whose size is already bounded.
    pub(crate) fn unlimited(what: &'static str) -> Budget {
        Budget::new(u64::MAX, what)
    }

    /// Charges `steps`; errors once the total exceeds the limit (and stays over it, so a
    /// caller that ignores one error fails again at the next charge).
    #[inline]
    pub(crate) fn charge(&mut self, steps: u64) -> Result<()> {
        self.used = self.used.saturating_add(steps);
        if self.used > self.limit {
            return Err(self.exceeded());
        }
        Ok(())
    }

    /// The error of a spent budget (for callers that noticed it through their own path).
    #[cold]
    pub(crate) fn exceeded(&self) -> Error {
        Error::new(
            ErrorKind::BuildTooExpensive,
            format!(
                "building this {} needs more than {} work steps (option max_work / maxWork raises the limit)",
                self.what, self.limit
            ),
        )
    }

    /// Steps used since the last reset.
    pub(crate) fn used(&self) -> u64 {
        self.used
    }

    /// Steps left before the limit.
    pub(crate) fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.used)
    }

    /// The limit.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Sets the limit (a caller trying something within less than the whole budget
    /// lowers it, then puts it back).
    pub(crate) fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
    }

    /// Starts a new call's count (lazy builds charge per call, not per index lifetime).
    pub(crate) fn reset(&mut self) {
        self.used = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charge_fails_past_the_limit_and_keeps_failing() {
        let mut b = Budget::new(10, "regex");
        b.charge(6).unwrap();
        b.charge(4).unwrap();
        let e = b.charge(1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BuildTooExpensive);
        assert!(e.message().contains("maxWork"), "{}", e.message());
        assert!(b.charge(0).is_err());
        b.reset();
        b.charge(10).unwrap();
    }
}
