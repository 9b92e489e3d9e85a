//! Support for logitmask's own tests: not part of the API, no stability promise.
//!
//! It lives in the library (hidden from the docs) because three kinds of tests need the
//! same helpers and only the library reaches all of them: the unit tests inside `src/`,
//! the native integration tests (`tests/lib.rs`), and the wasm-bindgen suite
//! (`tests/wasm.rs`, compiled for wasm32, where `tests/common` and its native-only
//! dev-dependencies do not build). It costs the shipped wasm nothing: nothing exported
//! calls it, so the linker drops it.

/// The tests' one seeded random number generator: xorshift64*, reproducible on every
/// target, with no dependency.
///
/// ```
/// use logitmask::test_support::Rng;
/// let (mut a, mut b) = (Rng::new(7), Rng::new(7));
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (any value, zero included).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        self.below_u64(n as u64) as usize
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below_u64(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        self.next_u64() % n
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below_u64(den) < num
    }

    /// True with probability `p` (0 to 1).
    pub fn probability(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}
