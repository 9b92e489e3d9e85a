//! `allOf`: merging two schemas into one that holds exactly when both do.

use std::rc::Rc;

use super::super::number::{tighter_lower, tighter_upper};
use super::{is_any, unsupported, Node, NodeRef, Sch};
use crate::automaton::expr::{FastMap, FastSet};
use crate::error::Result;

/// Both rules where both sides have one (`None`: no rule).
fn all_of(a: &Option<NodeRef>, b: &Option<NodeRef>) -> Option<NodeRef> {
    match (a, b) {
        (None, x) | (x, None) => x.clone(),
        (Some(a), Some(b)) => Some(both(a, b)),
    }
}

/// A node requiring both.
pub(crate) fn both(a: &NodeRef, b: &NodeRef) -> NodeRef {
    // A node with itself is that node (branches merged side by side often give a
    // property the same schema): kept whole, a `$ref` alone stays a call into its
    // target rather than a merge expanded in place.
    let holds = |all: &NodeRef, x: &NodeRef| match &**all {
        Node::AllOf(parts) => parts.iter().any(|p| Rc::ptr_eq(p, x)),
        _ => Rc::ptr_eq(all, x),
    };
    if holds(a, b) {
        return a.clone();
    }
    if holds(b, a) {
        return b.clone();
    }
    match (&**a, &**b) {
        (Node::Any, _) => b.clone(),
        (_, Node::Any) => a.clone(),
        (Node::Nothing, _) => a.clone(),
        (_, Node::Nothing) => b.clone(),
        _ => Rc::new(Node::AllOf(vec![a.clone(), b.clone()])),
    }
}

/// Merges `b` into `a` (both already free of `$ref` and `allOf`). Errors where the
/// conjunction cannot be written as one schema.
pub(crate) fn merge(a: &Sch, b: &Sch) -> Result<Sch> {
    let mut m = a.clone();
    m.types = match (a.types, b.types) {
        (Some(x), Some(y)) => Some(x & y),
        (x, y) => x.or(y),
    };
    m.enums.extend(b.enums.iter().cloned());
    m.excluded.extend(b.excluded.iter().cloned());
    merge_numbers(&mut m, a, b);
    merge_strings(&mut m, a, b);
    merge_arrays(&mut m, a, b)?;
    merge_objects(&mut m, a, b)?;
    m.apply.all_of.extend(b.apply.all_of.iter().cloned());
    m.apply.any_of.extend(b.apply.any_of.iter().cloned());
    m.apply.one_of.extend(b.apply.one_of.iter().cloned());
    m.apply.refs.extend(b.apply.refs.iter().cloned());
    Ok(m)
}

/// Bounds: the tighter of each; `multipleOf`: every one (once).
fn merge_numbers(m: &mut Sch, a: &Sch, b: &Sch) {
    m.number.lo = tighter_lower(a.number.lo.clone(), b.number.lo.clone());
    m.number.hi = tighter_upper(a.number.hi.clone(), b.number.hi.clone());
    for mo in &b.number.multiple_of {
        if !m.number.multiple_of.iter().any(|(x, _)| x == &mo.0) {
            m.number.multiple_of.push(mo.clone());
        }
    }
}

/// Lengths: the tighter of each; patterns and formats: every one (once).
fn merge_strings(m: &mut Sch, a: &Sch, b: &Sch) {
    m.string.min_len = a.string.min_len.max(b.string.min_len);
    m.string.max_len = min_opt(a.string.max_len, b.string.max_len);
    for p in &b.string.patterns {
        if !m.string.patterns.iter().any(|(x, _)| *x == p.0) {
            m.string.patterns.push(p.clone());
        }
    }
    m.string
        .excluded_patterns
        .extend(b.string.excluded_patterns.iter().cloned());
    for f in &b.string.formats {
        if !m.string.formats.iter().any(|(x, _)| *x == f.0) {
            m.string.formats.push(f.clone());
        }
    }
}

/// Arrays: position i holds under both schemas' rule for position i.
fn merge_arrays(m: &mut Sch, a: &Sch, b: &Sch) -> Result<()> {
    let n = a.array.prefix.len().max(b.array.prefix.len());
    let eff = |s: &Sch, i: usize| -> Option<NodeRef> {
        s.array
            .prefix
            .get(i)
            .cloned()
            .or_else(|| s.array.items.clone())
    };
    m.array.prefix = (0..n)
        .map(|i| all_of(&eff(a, i), &eff(b, i)).unwrap_or_else(|| Rc::new(Node::Any)))
        .collect();
    m.array.items = all_of(&a.array.items, &b.array.items);
    m.array.min_items = a.array.min_items.max(b.array.min_items);
    m.array.max_items = min_opt(a.array.max_items, b.array.max_items);
    // One pair of counts holds for every `contains` of the merged schema: where both
    // sides have a `contains`, their counts (1 and none by default) must agree, else a
    // side's counts would apply to the other's `contains` (`minContains: 0` beside a
    // `$ref` whose `contains` it does not govern made that `contains` vacuous).
    let counts = |s: &Sch| {
        (
            s.array.min_contains.as_ref().map_or(1, |x| x.0),
            s.array.max_contains.as_ref().map(|x| x.0),
        )
    };
    if !a.array.contains.is_empty() && !b.array.contains.is_empty() && counts(a) != counts(b) {
        return Err(unsupported(
            "minContains",
            &b.ptr,
            "two contains with different minContains/maxContains in allOf or beside $ref",
        ));
    }
    m.array.contains.extend(b.array.contains.iter().cloned());
    m.array.min_contains = a
        .array
        .min_contains
        .clone()
        .or_else(|| b.array.min_contains.clone());
    m.array.max_contains = a
        .array
        .max_contains
        .clone()
        .or_else(|| b.array.max_contains.clone());
    m.array.unique = a.array.unique.clone().or_else(|| b.array.unique.clone());
    Ok(())
}

/// Objects: a property holds under both schemas' rule for that name. Each side's
/// pattern rules apply to every name, so their union is exact; a side's
/// `additionalProperties` stays exact where the other side adds no pattern and no name
/// it does not declare (else the names only the other side's patterns match would
/// need this side's rule for undeclared names, which no pattern can say).
fn merge_objects(m: &mut Sch, a: &Sch, b: &Sch) -> Result<()> {
    if !a.object.patterns.is_empty() || !b.object.patterns.is_empty() {
        merge_pattern_properties(m, a, b)?;
    }
    // `m` starts as `a`: where `b` adds no name and no rule for undeclared ones, its
    // names, rules and orders are `a`'s, kept as they are (most merges add `required`,
    // a type or a branch's few keywords to an object of many properties, and rebuilding
    // every name, two maps of them and their orders was over a quarter of the merges'
    // work in the slowest compiles).
    let adds_nothing = |s: &Sch| {
        s.object.props.is_empty() && s.object.orders.is_empty() && s.object.additional.is_none()
    };
    if adds_nothing(b) {
    } else if adds_nothing(a) {
        m.object.props = b.object.props.clone();
        m.object.orders = b.object.orders.clone();
    } else {
        merge_properties(m, a, b);
        let mut orders = a.object.place_orders();
        for o in b.object.place_orders() {
            if !orders.contains(&o) {
                orders.push(o);
            }
        }
        m.object.orders = if orders.len() > 1 { orders } else { Vec::new() };
    }
    for r in &b.object.required {
        if !m.object.required.contains(r) {
            m.object.required.push(r.clone());
        }
    }
    if a.object.patterns.is_empty() && b.object.patterns.is_empty() {
        m.object.additional = all_of(&a.object.additional, &b.object.additional);
    }
    m.object.names = all_of(&a.object.names, &b.object.names);
    m.object.some_key_not_in = a.object.some_key_not_in.clone();
    m.object
        .some_key_not_in
        .extend(b.object.some_key_not_in.iter().cloned());
    m.object.min_props = a.object.min_props.max(b.object.min_props);
    m.object.max_props = min_opt(a.object.max_props, b.object.max_props);
    Ok(())
}

/// `patternProperties` of either side (the union, exact while each side's
/// `additionalProperties` is, else an error) and `additionalProperties`.
fn merge_pattern_properties(m: &mut Sch, a: &Sch, b: &Sch) -> Result<()> {
    let names_within = |o: &Sch, s: &Sch| {
        o.object
            .props
            .iter()
            .all(|(k, _)| s.object.props.iter().any(|(n, _)| n == k))
    };
    let exact = |s: &Sch, o: &Sch| {
        is_any(&s.object.additional) || (o.object.patterns.is_empty() && names_within(o, s))
    };
    if !exact(a, b) || !exact(b, a) {
        return Err(unsupported(
            "patternProperties",
            &b.ptr,
            "in allOf beside another schema's patternProperties or properties, next to additionalProperties",
        ));
    }
    let mut patterns = a.object.patterns.clone();
    for (pat, node, at) in &b.object.patterns {
        match patterns.iter_mut().find(|(p, _, _)| p == pat) {
            Some(same) => same.1 = both(&same.1, node),
            None => patterns.push((pat.clone(), node.clone(), at.clone())),
        }
    }
    m.object.patterns = patterns;
    m.object.additional = all_of(&a.object.additional, &b.object.additional);
    Ok(())
}

/// `properties`: a's names then b's others, each under both sides' rule for it.
fn merge_properties(m: &mut Sch, a: &Sch, b: &Sch) {
    // By name, not by a scan per name: an object of 50,000 properties merged with
    // another was quadratic (seconds before any budget saw it).
    fn props_of(s: &Sch) -> FastMap<&str, &NodeRef> {
        let mut props = FastMap::default();
        for (k, v) in s.object.props.iter() {
            // The first of a repeated name, as a scan finds it.
            props.entry(&**k).or_insert(v);
        }
        props
    }
    let (props_a, props_b) = (props_of(a), props_of(b));
    let eff_prop = |s: &Sch, props: &FastMap<&str, &NodeRef>, k: &str| -> Option<NodeRef> {
        props
            .get(k)
            .map(|&v| v.clone())
            .or_else(|| s.object.additional.clone())
    };
    let mut names: Vec<Rc<str>> = a.object.props.iter().map(|(k, _)| k.clone()).collect();
    let mut added: FastSet<&str> = FastSet::default();
    for (k, _) in b.object.props.iter() {
        if !props_a.contains_key(&**k) && added.insert(&**k) {
            names.push(k.clone());
        }
    }
    m.object.props = names
        .into_iter()
        .map(|k| {
            let node = all_of(&eff_prop(a, &props_a, &k), &eff_prop(b, &props_b, &k))
                .unwrap_or_else(|| Rc::new(Node::Any));
            (k, node)
        })
        .collect();
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node merged with itself, or with a merge that holds it, is that node: the
    /// branches of a recursive `oneOf` merged side by side give a property the same
    /// `$ref`, which alone is a call into its target, and merged anew it was expanded
    /// in place until the recursion limit cut it (and the merge was refused).
    #[test]
    fn a_node_with_itself_is_itself() {
        let a: NodeRef = Rc::new(Node::Schema(Box::default()));
        let b: NodeRef = Rc::new(Node::Schema(Box::default()));
        assert!(Rc::ptr_eq(&both(&a, &a), &a));
        let ab = both(&a, &b);
        assert!(matches!(&*ab, Node::AllOf(parts) if parts.len() == 2));
        assert!(Rc::ptr_eq(&both(&ab, &a), &ab));
        assert!(Rc::ptr_eq(&both(&b, &ab), &ab));
    }

    /// Properties after a merge: each side's rule for each name, `a`'s names first, and
    /// where one side adds no name, no order and no rule for undeclared names, the
    /// other's very list (shared, not rebuilt).
    #[test]
    fn merged_properties() {
        let node = || -> NodeRef { Rc::new(Node::Schema(Box::default())) };
        let (x, y, extra) = (node(), node(), node());
        let mut object = Sch::default();
        object.object.props = vec![("x".into(), x.clone()), ("y".into(), y.clone())].into();
        let mut required = Sch::default();
        required.object.required = vec!["y".into()];
        for m in [
            merge(&object, &required).unwrap(),
            merge(&required, &object).unwrap(),
        ] {
            assert!(Rc::ptr_eq(&m.object.props, &object.object.props));
            assert!(m.object.orders.is_empty());
            assert_eq!(m.object.required, vec![Rc::<str>::from("y")]);
        }
        // A rule for undeclared names applies to the other side's names.
        let mut closed = Sch::default();
        closed.object.additional = Some(extra.clone());
        let m = merge(&object, &closed).unwrap();
        let names: Vec<&str> = m.object.props.iter().map(|(k, _)| &**k).collect();
        assert_eq!(names, ["x", "y"]);
        assert!(m
            .object
            .props
            .iter()
            .all(|(_, v)| matches!(&**v, Node::AllOf(p) if Rc::ptr_eq(&p[1], &extra))));
        // Names of both: `a`'s then `b`'s others, and both places' orders kept.
        let mut other = Sch::default();
        other.object.props = vec![("z".into(), node()), ("x".into(), node())].into();
        let m = merge(&object, &other).unwrap();
        let names: Vec<&str> = m.object.props.iter().map(|(k, _)| &**k).collect();
        assert_eq!(names, ["x", "y", "z"]);
        assert_eq!(m.object.orders.len(), 2);
        assert!(matches!(&*m.object.props[0].1, Node::AllOf(p) if Rc::ptr_eq(&p[0], &x)));
        assert!(Rc::ptr_eq(&m.object.props[1].1, &y));
    }
}
