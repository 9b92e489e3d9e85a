//! A growable table in fixed pages: what the on-demand DFA's transition table grows in.
//!
//! Why not a `Vec`: a lazy index adds states while a mask waits, and a `Vec` that doubles
//! copies all of itself. Natively `realloc` remaps the pages; in wasm it copies them, and
//! a 20 MiB transition table (90k states) made single masks of word-count schemas take
//! 3-5 ms more (`Github_hard---o21075`: 9.6 -> 5.0 ms with the table reserved up front,
//! which would cost every small index the whole limit). Pages are never moved.

/// Entries per page (64 KiB of `u32`).
const PAGE_SHIFT: u32 = 14;
const PAGE: usize = 1 << PAGE_SHIFT;

/// Entries `0..len`, read and written one at a time.
#[derive(Debug, Clone)]
pub(crate) struct Paged<T> {
    /// `None`: a page dropped by [`clear`](Paged::clear), every entry `fill` until set.
    pages: Vec<Option<Box<[T; PAGE]>>>,
    len: usize,
    fill: T,
}

impl<T: Copy + PartialEq> Paged<T> {
    /// An empty table whose new entries are `fill`.
    pub(crate) fn new(fill: T) -> Paged<T> {
        Paged {
            pages: Vec::new(),
            len: 0,
            fill,
        }
    }

    #[inline]
    pub(crate) fn get(&self, i: usize) -> T {
        debug_assert!(i < self.len);
        match &self.pages[i >> PAGE_SHIFT] {
            Some(page) => page[i & (PAGE - 1)],
            None => self.fill,
        }
    }

    #[inline]
    pub(crate) fn set(&mut self, i: usize, value: T) {
        debug_assert!(i < self.len);
        let fill = self.fill;
        let page = self.pages[i >> PAGE_SHIFT].get_or_insert_with(|| new_page(fill));
        page[i & (PAGE - 1)] = value;
    }

    /// Sets every entry back to `fill` and frees the pages (a cleared cache).
    pub(crate) fn clear(&mut self) {
        for page in &mut self.pages {
            *page = None;
        }
    }

    /// Appends `n` entries of the fill value.
    pub(crate) fn grow(&mut self, n: usize) {
        self.len += n;
        while self.pages.len() * PAGE < self.len {
            self.pages.push(Some(new_page(self.fill)));
        }
    }

    /// Writes `values` from entry `at` on.
    pub(crate) fn write(&mut self, at: usize, values: &[T]) {
        for (k, &v) in values.iter().enumerate() {
            self.set(at + k, v);
        }
    }

    /// Whether some entry is `value`.
    pub(crate) fn contains(&self, value: T) -> bool {
        (0..self.len).any(|i| self.get(i) == value)
    }

    /// Entries `0..len` in one vector.
    pub(crate) fn to_vec(&self) -> Vec<T> {
        (0..self.len).map(|i| self.get(i)).collect()
    }

    /// Bytes held.
    pub(crate) fn memory_usage(&self) -> usize {
        self.pages.iter().flatten().count() * PAGE * std::mem::size_of::<T>()
            + self.pages.capacity() * std::mem::size_of::<Option<Box<[T; PAGE]>>>()
    }
}

fn new_page<T: Copy>(fill: T) -> Box<[T; PAGE]> {
    let page: Box<[T]> = vec![fill; PAGE].into_boxed_slice();
    page.try_into()
        .unwrap_or_else(|_| unreachable!("PAGE entries"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_cross_pages_and_keep_their_values() {
        let mut t = Paged::new(7u32);
        t.grow(3);
        assert_eq!(t.to_vec(), [7, 7, 7]);
        t.grow(PAGE * 2);
        let n = 3 + PAGE * 2;
        t.set(PAGE - 1, 1);
        t.set(PAGE, 2);
        t.write(n - 2, &[3, 4]);
        assert_eq!((t.get(PAGE - 1), t.get(PAGE), t.get(n - 1)), (1, 2, 4));
        assert!(t.contains(3) && !t.contains(5));
        assert_eq!(t.to_vec().len(), n);
        assert_eq!(t.memory_usage() / 4 / PAGE, 3);
        // Cleared: every entry the fill again, no page held until one is set.
        t.clear();
        assert_eq!(t.memory_usage() / 4 / PAGE, 0);
        assert!(t.to_vec().iter().all(|&v| v == 7));
        t.set(PAGE, 9);
        assert_eq!((t.get(PAGE), t.get(PAGE + 1), t.get(0)), (9, 7, 7));
        assert_eq!(t.memory_usage() / 4 / PAGE, 1);
    }
}
