//! Sorting in little code. Each `slice::sort*` call with its own element type or comparator
//! instantiates the standard library's driftsort or ipnsort, 3-6 KB of wasm apiece: twenty of
//! them were ~95 KB of the module (docs/index-layout.md, "What the wasm module is made of").
//! The sorts that run once per compile, grammar, error or file go through one heap sort of
//! positions here (a few hundred bytes per call site); the hot ones (expression lists in the
//! arena, DFA state sets, token ids, a new lazy state's first-byte sets) keep the standard
//! sorts.

use std::cmp::Ordering;

/// Sorts `v` by `cmp`, stably, in O(n log n) comparisons: a heap sort of the positions with
/// ties broken by position (so the order is total and the result is the stable one), then
/// every element moved once into place.
pub(crate) fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let mut order: Vec<usize> = (0..v.len()).collect();
    {
        let v = &*v;
        heap_sort(&mut order, &mut |a, b| {
            cmp(&v[a], &v[b]).then(a.cmp(&b)) == Ordering::Less
        });
    }
    permute(v, &mut order);
}

/// [`sort_by`] on a key.
pub(crate) fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// [`sort_by`] on the elements' own order.
pub(crate) fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// Sorts `v` stably by a 32-bit key, for vocabulary-sized lists: the keys and positions
/// packed into `u64`s and sorted by the standard unstable sort (one instance for every
/// caller, as fast as it gets), then the elements moved into place.
pub(crate) fn sort_by_u32_key<T>(v: &mut [T], key: impl Fn(&T) -> u32) {
    if v.len() < 2 {
        return;
    }
    // Positions fit in 32 bits: every caller's list is indexed by token ids or file offsets,
    // which are u32 already; wider lists fall back to the heap sort.
    if u32::try_from(v.len()).is_err() {
        return sort_by_key(v, key);
    }
    let mut packed: Vec<u64> = v
        .iter()
        .enumerate()
        .map(|(i, x)| (u64::from(key(x)) << 32) | i as u64)
        .collect();
    packed.sort_unstable();
    let mut order: Vec<usize> = packed.iter().map(|&p| (p & 0xffff_ffff) as usize).collect();
    permute(v, &mut order);
}

/// A heap sort of positions by `less`, a strict total order. Not generic: one copy in the
/// module, whatever is sorted.
fn heap_sort(order: &mut [usize], less: &mut dyn FnMut(usize, usize) -> bool) {
    let n = order.len();
    for root in (0..n / 2).rev() {
        sift_down(order, root, n, less);
    }
    for end in (1..n).rev() {
        order.swap(0, end);
        sift_down(order, 0, end, less);
    }
}

fn sift_down(
    order: &mut [usize],
    mut root: usize,
    end: usize,
    less: &mut dyn FnMut(usize, usize) -> bool,
) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && less(order[child], order[child + 1]) {
            child += 1;
        }
        if !less(order[root], order[child]) {
            return;
        }
        order.swap(root, child);
        root = child;
    }
}

/// Rearranges `v` so that the element at `order[i]` ends at `i`, one swap per element moved,
/// following each cycle of the permutation (`order` is spent: every entry marked done).
fn permute<T>(v: &mut [T], order: &mut [usize]) {
    for start in 0..order.len() {
        // Along a cycle, `start`'s element rides in the slot being filled until its own
        // place comes round.
        let mut slot = start;
        loop {
            let from = order[slot];
            order[slot] = slot;
            if from == start {
                break;
            }
            v.swap(slot, from);
            slot = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Rng;

    /// The same order as the standard stable sort, ties included (the payload tells
    /// equal keys apart), over random lists with many repeated keys.
    #[test]
    fn sorts_stably_like_std() {
        let mut rng = Rng::new(7);
        for round in 0..400 {
            let len = rng.below(if round % 10 == 0 { 3000 } else { 60 });
            let distinct = 1 + rng.below(8);
            let items: Vec<(u8, usize)> =
                (0..len).map(|i| (rng.below(distinct) as u8, i)).collect();
            let mut want = items.clone();
            want.sort_by_key(|x| x.0);
            let mut got = items.clone();
            sort_by_key(&mut got, |x| x.0);
            assert_eq!(got, want);
            let mut got = items.clone();
            sort_by_u32_key(&mut got, |x| u32::from(x.0));
            assert_eq!(got, want);
            let mut got = items.clone();
            sort_by(&mut got, |a, b| b.0.cmp(&a.0));
            want.sort_by_key(|x| std::cmp::Reverse(x.0));
            assert_eq!(got, want);
        }
    }

    #[test]
    fn sorts_owned_values_and_edge_sizes() {
        let mut empty: Vec<String> = Vec::new();
        sort(&mut empty);
        let mut one = vec!["x".to_string()];
        sort(&mut one);
        assert_eq!(one, ["x"]);
        let mut words: Vec<String> = "pear fig apple fig kiwi date"
            .split(' ')
            .map(String::from)
            .collect();
        sort(&mut words);
        assert_eq!(words, ["apple", "date", "fig", "fig", "kiwi", "pear"]);
        // Keys at the top of the 32-bit range, and a permutation made of one long cycle.
        let mut rotated: Vec<u32> = (1..1000).chain([0]).map(|x| u32::MAX - x).collect();
        sort_by_u32_key(&mut rotated, |&x| x);
        assert!(rotated.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(rotated[0], u32::MAX - 999);
    }
}
