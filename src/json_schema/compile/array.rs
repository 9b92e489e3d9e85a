//! Arrays: items, prefix items, counts, `contains` with its bounds, `uniqueItems`.

use super::*;

/// The body of an array with exactly one `contains` hit required: one alternative per
/// position `j` of the first hit, with `lo` (>= 1) to `max` items in all. Bounded like
/// maxItems: an unbounded minItems here once built alternatives until memory ran out.
pub(super) fn hit_positions(
    before: &Re,
    hit: &Re,
    after: &Re,
    lo: u64,
    max: Option<u64>,
    at: &str,
) -> Result<Re> {
    if lo > MAX_CONTAINS_POSITIONS {
        return Err(unsupported(
            "contains",
            parent(at),
            &format!("together with minItems above {MAX_CONTAINS_POSITIONS}"),
        ));
    }
    let mut alts = Vec::new();
    match max {
        None => {
            for j in 0..lo.saturating_sub(1) {
                alts.push(Re::concat([
                    Re::repeat(before.clone(), clamp32(j), Some(clamp32(j))),
                    hit.clone(),
                    Re::repeat(after.clone(), clamp32(lo - 1 - j), None),
                ]));
            }
            alts.push(Re::concat([
                Re::repeat(before.clone(), clamp32(lo - 1), None),
                hit.clone(),
                Re::star(after.clone()),
            ]));
        }
        Some(mx) => {
            if mx > MAX_CONTAINS_POSITIONS {
                return Err(unsupported(
                    "contains",
                    parent(at),
                    &format!("together with maxItems above {MAX_CONTAINS_POSITIONS}"),
                ));
            }
            for j in 0..mx {
                let k_lo = lo.saturating_sub(1 + j);
                let k_hi = mx - 1 - j;
                alts.push(Re::concat([
                    Re::repeat(before.clone(), clamp32(j), Some(clamp32(j))),
                    hit.clone(),
                    Re::repeat(after.clone(), clamp32(k_lo), Some(clamp32(k_hi))),
                ]));
            }
        }
    }
    Ok(Re::alt(alts))
}

/// `lo` to `hi` more items after `j` elements were written (`j == 0`: nothing yet, so the
/// first item has no separator).
pub(super) fn items_only(item: &Re, sep: &Re, j: u64, lo: u64, hi: Option<u64>) -> Re {
    if j > 0 {
        return Re::repeat(
            Re::concat([sep.clone(), item.clone()]),
            clamp32(lo),
            hi.map(clamp32),
        );
    }
    if hi == Some(0) {
        return Re::empty();
    }
    let rest = Re::repeat(
        Re::concat([sep.clone(), item.clone()]),
        clamp32(lo.saturating_sub(1)),
        hi.map(|h| clamp32(h - 1)),
    );
    let one = Re::concat([item.clone(), rest]);
    if lo == 0 {
        Re::alt([Re::empty(), one])
    } else {
        one
    }
}

impl Compiler<'_> {
    pub(super) fn sep(&self) -> Re {
        Re::concat([self.ws.clone(), Re::lit(","), self.ws.clone()])
    }

    pub(super) fn member(&self, key: Re, value: Re) -> Re {
        Re::concat([key, self.ws.clone(), Re::lit(":"), self.ws.clone(), value])
    }

    /// `open ws (body ws)? close`, or without the `?` when the body cannot be empty.
    pub(super) fn container(&self, open: &str, body: Re, empty_ok: bool, close: &str) -> Re {
        let inner = Re::concat([body, self.ws.clone()]);
        let inner = if empty_ok { Re::opt(inner) } else { inner };
        Re::concat([Re::lit(open), self.ws.clone(), inner, Re::lit(close)])
    }

    #[inline(never)]
    pub(super) fn array(&mut self, s: &Sch) -> Result<Re> {
        let a = &s.array;
        let (min, max) = (a.min_items, a.max_items);
        if max.is_some_and(|m| m < min) {
            return Ok(Re::never());
        }
        if let Some(at) = &a.unique {
            if max.is_none_or(|m| m > 1) {
                return self.unique_items(a, at);
            }
        }
        if let Some((_, at)) = &a.max_contains {
            if !a.contains.is_empty() {
                return Err(unsupported("maxContains", parent(at), ""));
            }
        }
        let min_contains = a.min_contains.as_ref().map_or(1, |x| x.0);
        let items = a
            .items
            .clone()
            .unwrap_or_else(|| std::rc::Rc::new(Node::Any));
        if !a.contains.is_empty() && min_contains > 0 {
            self.array_with_contains(a, &items, min_contains)
        } else {
            self.array_of_items(a, &items)
        }
    }

    /// `uniqueItems` where the items can take only a few values (an `enum`, `const`,
    /// booleans, null): the arrays of distinct values in any order, an interleaving of
    /// one optional member per value (each all the spellings of its value that the item
    /// schema's language holds), so only the sets of values a text writes become states.
    /// Elsewhere uniqueness is not a regular language: an error.
    pub(super) fn unique_items(&mut self, a: &ArrayKeywords, at: &str) -> Result<Re> {
        let refuse = |why: &str| Err(unsupported("uniqueItems", parent(at), why));
        if !a.prefix.is_empty() || !a.contains.is_empty() {
            return refuse("with prefixItems or contains (allowed with items of at most 64 possible values, or maxItems <= 1)");
        }
        let items = a
            .items
            .clone()
            .unwrap_or_else(|| std::rc::Rc::new(Node::Any));
        // Flattening follows references onto the stack: taken off again at once.
        let mark = self.ref_stack.len();
        let flat = self.flatten(&items);
        self.ref_stack.truncate(mark);
        let values = match flat? {
            None => Vec::new(),
            Some(flat) => match enum_values(&flat) {
                Some(values) => values.into_iter().cloned().collect(),
                None => {
                    let types = possible_types(&flat);
                    if types & !(NULL | BOOLEAN) != 0 {
                        return refuse("item uniqueness is not a regular language: allowed where items take at most 64 possible values (enum, const, booleans, null) or maxItems <= 1");
                    }
                    let mut v = Vec::new();
                    if types & BOOLEAN != 0 {
                        v.extend([Json::Bool(false), Json::Bool(true)]);
                    }
                    if types & NULL != 0 {
                        v.push(Json::Null);
                    }
                    v
                }
            },
        };
        if values.len() > MAX_UNIQUE_VALUES {
            return refuse(&format!(
                "items of {} possible values: uniqueness is an automaton state per set of values written (at most {MAX_UNIQUE_VALUES} values)",
                values.len()
            ));
        }
        self.needs_automaton("uniqueItems", at);
        let item = self.compile_node(&items)?;
        let mut groups = Vec::new();
        for v in &values {
            // Values equal as JSON are one member (`1` and `1.0`).
            if values
                .iter()
                .take_while(|w| !std::ptr::eq(*w, v))
                .any(|w| w.equals(v))
            {
                continue;
            }
            self.charge_entries(1 + v.to_compact().len() as u64 / 16)?;
            groups.push(vec![(Re::and([self.literal(v), item.clone()]), false)]);
        }
        let (min, max) = (a.min_items, a.max_items);
        if min > groups.len() as u64 {
            return Ok(Re::never());
        }
        let body = Re::interleave(Interleave {
            groups,
            extra: None,
            extra_last: false,
            sep: self.sep(),
            min: clamp32(min.max(1)),
            max: max.map(clamp32),
        });
        Ok(self.container("[", body, min == 0, "]"))
    }

    /// An array with `contains`: items of `items`, at least `min_contains` of which
    /// (written as `hit`) also hold under `contains`.
    pub(super) fn array_with_contains(
        &mut self,
        a: &ArrayKeywords,
        items: &NodeRef,
        min_contains: u64,
    ) -> Result<Re> {
        let (min, max) = (a.min_items, a.max_items);
        let at = &a.contains[0].1;
        if a.contains.len() > 1 {
            if min_contains != 1 {
                return Err(unsupported(
                    "contains",
                    parent(at),
                    "several contains in allOf, with minContains",
                ));
            }
            // Arrays holding an item of each: the intersection of the arrays holding
            // one of each (one layout, so their texts align).
            self.needs_automaton("contains", at);
            let mut parts = Vec::new();
            for c in &a.contains {
                let one = ArrayKeywords {
                    contains: vec![c.clone()],
                    ..a.clone()
                };
                parts.push(self.array_with_contains(&one, items, 1)?);
            }
            return Ok(Re::and(parts));
        }
        if !a.prefix.is_empty() {
            return Err(unsupported(
                "contains",
                parent(at),
                "together with prefixItems",
            ));
        }
        let item = self.compile_node(items)?;
        let hit = self.compile_node(&both(items, &a.contains[0].0))?;
        if hit.is_never() {
            return Ok(Re::never());
        }
        let sep = self.sep();
        let before = Re::concat([item.clone(), sep.clone()]);
        let after = Re::concat([sep.clone(), item]);
        let body = if min_contains > 1 {
            if max.is_some() || min > min_contains {
                return Err(unsupported(
                    "minContains",
                    parent(at),
                    "together with maxItems or a larger minItems",
                ));
            }
            let again = Re::concat([sep, Re::star(before.clone()), hit.clone()]);
            Re::concat([
                Re::star(before),
                hit,
                Re::repeat(
                    again,
                    clamp32(min_contains - 1),
                    Some(clamp32(min_contains - 1)),
                ),
                Re::star(after),
            ])
        } else {
            hit_positions(&before, &hit, &after, min.max(1), max, at)?
        };
        Ok(self.container("[", body, false, "]"))
    }

    /// An array of `prefixItems` then `items`, counted within `minItems`/`maxItems`.
    pub(super) fn array_of_items(&mut self, a: &ArrayKeywords, items: &NodeRef) -> Result<Re> {
        let (min, max) = (a.min_items, a.max_items);
        let prefix: Vec<Re> = a
            .prefix
            .iter()
            .map(|p| self.compile_node(p))
            .collect::<Result<_>>()?;
        let item = self.compile_node(items)?;
        // R(j): the elements after j of them were written.
        let k = prefix.len() as u64;
        let sep = self.sep();
        let mut tail: Option<Re> = None; // R(j+1), built from the end
        let start_j = k.min(max.unwrap_or(u64::MAX));
        for j in (0..=start_j).rev() {
            let r = if j >= k {
                // Only `items` from here: count in [min - j, max - j].
                items_only(
                    &item,
                    &sep,
                    j,
                    min.saturating_sub(j),
                    max.map(|m| m.saturating_sub(j)),
                )
            } else {
                let next = tail.clone().unwrap_or_else(Re::empty);
                let head = if j == 0 { Re::empty() } else { sep.clone() };
                let present = if max.is_some_and(|m| j >= m) {
                    Re::never()
                } else {
                    Re::concat([head, prefix[j as usize].clone(), next])
                };
                if j >= min {
                    Re::alt([Re::empty(), present])
                } else {
                    present
                }
            };
            tail = Some(r);
        }
        let body = tail.unwrap_or_else(Re::empty);
        if body.is_never() {
            return Ok(Re::never());
        }
        if body.is_empty() {
            return Ok(Re::concat([Re::lit("["), self.ws.clone(), Re::lit("]")]));
        }
        Ok(self.container("[", body, min == 0, "]"))
    }
}
