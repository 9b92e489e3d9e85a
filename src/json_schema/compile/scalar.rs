//! Scalars: `enum`/`const` values (a trie for many strings), numbers and strings with
//! their formats, patterns, lengths and negated patterns.

use super::*;

/// `(?:x)` -> `x`.
pub(super) fn unwrap_single(p: Pat) -> Pat {
    match p {
        Pat::Concat(mut v) if v.len() == 1 => unwrap_single(v.pop().unwrap()),
        Pat::Alt(mut v) if v.len() == 1 => unwrap_single(v.pop().unwrap()),
        other => other,
    }
}

pub(super) fn value_types(v: &Json) -> u8 {
    match v {
        Json::Null => NULL,
        Json::Bool(_) => BOOLEAN,
        Json::Number(d) => {
            if d.is_integer() {
                INTEGER
            } else {
                NUMBER
            }
        }
        Json::String(_) => STRING,
        Json::Array(_) => ARRAY,
        Json::Object(_) => OBJECT,
    }
}

/// Trims the repetitions at the end of `items` to their minimum count: one of at least
/// one stays as that many copies and stops the trimming; one of none goes, and the item
/// before it is looked at.
pub(super) fn trim_repeats(items: &mut Vec<Pat>) {
    while let Some(last) = items.pop() {
        match last {
            Pat::Repeat(_, 0, _) => continue,
            Pat::Repeat(inner, lo, _) => {
                items.push(Pat::Repeat(inner, lo, Some(lo)));
                return;
            }
            other => {
                items.push(other);
                return;
            }
        }
    }
}

/// Every JSON spelling of the string `text`, quotes included: each character as itself
/// (where JSON allows it unescaped), as a `\u` escape with hex digits in either case (a
/// surrogate pair beyond U+FFFF), or as its short escape. Excluding a value must exclude
/// all of them, since a string pattern may write any.
pub(super) fn every_spelling(text: &str) -> Re {
    let hex = |unit: u32| {
        Re::concat((0..4).rev().map(|k| {
            let d = char::from_digit((unit >> (4 * k)) & 15, 16).expect("a hex digit");
            let bits = (1u128 << d as u8) | (1u128 << d.to_ascii_uppercase() as u8);
            Re::ascii_class(bits)
        }))
    };
    let escape = |unit: u32| Re::concat([Re::lit("\\u"), hex(unit)]);
    let mut parts = vec![Re::lit("\"")];
    for c in text.chars() {
        let mut alts = Vec::new();
        if c >= ' ' && c != '"' && c != '\\' {
            alts.push(Re::lit(c.to_string()));
        }
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '/' => Some("\\/"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            _ => None,
        };
        alts.extend(short.map(Re::lit));
        let mut units = [0u16; 2];
        let units = c.encode_utf16(&mut units);
        alts.push(Re::concat(units.iter().map(|&u| escape(u32::from(u)))));
        parts.push(Re::alt(alts));
    }
    parts.push(Re::lit("\""));
    Re::concat(parts)
}

/// Compact spellings of a value to test against a regex: canonical text, and every key
/// order of small objects.
pub(super) fn spellings(v: &Json) -> Vec<String> {
    match v {
        Json::Array(items) => {
            let mut acc = vec![String::from("[")];
            for (i, x) in items.iter().enumerate() {
                let subs = spellings(x);
                let mut next = Vec::new();
                for a in &acc {
                    for s in &subs {
                        if next.len() >= 64 {
                            break;
                        }
                        next.push(format!("{a}{}{s}", if i > 0 { "," } else { "" }));
                    }
                }
                acc = next;
            }
            acc.into_iter().map(|a| a + "]").collect()
        }
        Json::Object(members) if members.len() <= MAX_PERMUTED_MEMBERS => {
            let mut out = Vec::new();
            for order in permutations(members.len()) {
                let reordered = Json::Object(order.iter().map(|&i| members[i].clone()).collect());
                out.push(reordered.to_compact());
            }
            out
        }
        _ => vec![v.to_compact()],
    }
}

impl Compiler<'_> {
    #[inline(never)]
    pub(super) fn compile_enum(&mut self, s: &Sch) -> Result<Re> {
        let (first, _) = &s.enums[0];
        let values: Vec<&Json> = first
            .iter()
            .filter(|v| {
                s.enums[1..]
                    .iter()
                    .all(|(list, _)| list.iter().any(|w| w.equals(v)))
            })
            .collect();
        let types = s.types.unwrap_or(ALL_TYPES);
        // Everything but the values (an enum may hold 100,000 of them).
        let mut rest = Sch {
            ptr: s.ptr.clone(),
            types: None,
            enums: Vec::new(),
            excluded: s.excluded.clone(),
            number: s.number.clone(),
            string: s.string.clone(),
            array: s.array.clone(),
            object: s.object.clone(),
            apply: s.apply.clone(),
        };
        let unique = rest.array.unique.take().is_some();
        // Whether the other keywords constrain anything beyond the type: then each value
        // is checked against the regex of the rest, compiled compactly. (Every keyword
        // counts: a list of those that do missed `patternProperties`, and values that
        // failed it were written.)
        let excluded = std::mem::take(&mut rest.excluded);
        let needs_check = !rest.is_trivial();
        rest.excluded = excluded;
        // Where the rest calls a recursive definition, whose template is compiled only
        // after the root, no checker of its own can hold it: the values are intersected
        // with the rest (written with whitespace) in the automaton instead.
        let mut intersect_with = None;
        let mut checker = if needs_check {
            // Only the values' types matter to the check: the rest's keywords of other
            // types (an object's properties beside an enum of strings, after a merge) are
            // not compiled into it (`Github_hard---o90971`: 68 checkers, two thirds of
            // its compile). An integral value may be spelled as a number: both kept.
            let mut of_values = values.iter().fold(0, |t, v| t | value_types(v));
            if of_values & INTEGER != 0 {
                of_values |= NUMBER;
            }
            let mut checked = rest.clone();
            checked.types = Some(of_values);
            let re = self.compactly(|c| c.compile_flat(checked))?;
            if re.is_never() {
                return Ok(Re::never());
            }
            if re.has_calls() {
                intersect_with = Some(self.compile_flat(rest)?);
                None
            } else {
                match self.value_checker(&re)? {
                    Some(checker) => Some(checker),
                    None => return Ok(Re::never()),
                }
            }
        } else {
            None
        };
        let mut alts = Vec::new();
        // Values with one spelling (strings, booleans, null): one trie in an automaton.
        let mut literals = StringsBuilder::new();
        for v in values {
            // A string's size without writing it out (an enum may hold 100,000).
            let size = match v {
                Json::String(text) => text.len() + 2,
                _ => v.to_compact().len(),
            };
            self.charge_entries(1 + size as u64 / 16)?;
            if value_types(v) & types == 0 || s.excluded.iter().any(|x| x.equals(v)) {
                continue;
            }
            if unique {
                if let Json::Array(items) = v {
                    if items
                        .iter()
                        .enumerate()
                        .any(|(i, x)| items[..i].iter().any(|y| y.equals(x)))
                    {
                        continue;
                    }
                }
            }
            if let Some(dfa) = &mut checker {
                let mut ok = false;
                for sp in spellings(v) {
                    if self.checks(dfa, sp.as_bytes())? {
                        ok = true;
                        break;
                    }
                }
                if !ok {
                    continue;
                }
            }
            match v {
                Json::Null | Json::Bool(_) | Json::String(_) if self.for_automaton => {
                    literals.push_with(|out| v.write_compact(out))
                }
                _ => alts.push(self.literal(v)),
            }
        }
        if literals.len() >= MIN_TRIE_LITERALS {
            alts.push(Re::strings(literals));
        } else {
            alts.extend(literals.iter().map(Re::lit));
        }
        Ok(match intersect_with {
            Some(rest) => Re::and([Re::alt(alts), rest]),
            None => Re::alt(alts),
        })
    }

    /// An automaton of `re` that enum values are run through (compact, so one spelling
    /// per value is tried), derived lazily: only the states the values reach are built,
    /// and no regex text is written (a sibling free-form value of depth 8 would render to
    /// megabytes). `None` when its language is empty.
    pub(super) fn value_checker(&mut self, re: &Re) -> Result<Option<ExprDfa>> {
        if re.has_calls() {
            // Its templates are compiled after the root: callers intersect instead.
            return Err(Error::new(
                ErrorKind::UnsupportedSchema,
                "a value check (propertyNames, enum) through a recursive $ref",
            ));
        }
        let mut exprs = ExprSet::new();
        let root = re.to_expr(&mut exprs, &mut re::LowerMemo::default())?;
        let budget = self.budget.remaining();
        match ExprDfa::new(exprs, root, &DfaConfig::new(), budget, "JSON Schema".into()) {
            Ok(mut dfa) => {
                self.budget.charge(dfa.work_used())?;
                dfa.begin_call();
                Ok(Some(dfa))
            }
            Err(e) if e.kind() == ErrorKind::InvalidRegex => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether `dfa` matches `bytes` whole, its work charged to the compiler.
    pub(super) fn checks(&mut self, dfa: &mut ExprDfa, bytes: &[u8]) -> Result<bool> {
        let walk = dfa.walk(ExprDfa::START, bytes);
        self.budget.charge(dfa.work_used())?;
        dfa.begin_call();
        match walk {
            Ok(Walk::Alive { is_match, .. }) => Ok(is_match),
            Ok(_) => Ok(false),
            Err(e) => Err(dfa.too_large(e)),
        }
    }

    /// The spellings of a value: numbers with optional trailing fraction zeros (and the
    /// exponent form `JSON.stringify` uses), strings canonically escaped, small objects
    /// in every key order; whitespace as configured between tokens.
    pub(super) fn literal(&self, v: &Json) -> Re {
        match v {
            Json::Null | Json::Bool(_) | Json::String(_) => Re::lit(v.to_compact()),
            Json::Number(d) => number::literal_number_re(d),
            Json::Array(items) => {
                if items.is_empty() {
                    return Re::concat([Re::lit("["), self.ws.clone(), Re::lit("]")]);
                }
                let mut parts = vec![Re::lit("["), self.ws.clone()];
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        parts.push(self.sep());
                    }
                    parts.push(self.literal(x));
                }
                parts.extend([self.ws.clone(), Re::lit("]")]);
                Re::concat(parts)
            }
            Json::Object(members) => {
                if members.is_empty() {
                    return Re::concat([Re::lit("{"), self.ws.clone(), Re::lit("}")]);
                }
                let rendered: Vec<Re> = members
                    .iter()
                    .map(|(k, x)| self.member(Re::lit(key_text(k)), self.literal(x)))
                    .collect();
                let orders = if members.len() <= MAX_PERMUTED_MEMBERS {
                    permutations(members.len())
                } else {
                    vec![(0..members.len()).collect()]
                };
                let alts = orders.into_iter().map(|order| {
                    let mut parts = vec![Re::lit("{"), self.ws.clone()];
                    for (i, &j) in order.iter().enumerate() {
                        if i > 0 {
                            parts.push(self.sep());
                        }
                        parts.push(rendered[j].clone());
                    }
                    parts.extend([self.ws.clone(), Re::lit("}")]);
                    Re::concat(parts)
                });
                Re::alt(alts)
            }
        }
    }

    #[inline(never)]
    pub(super) fn number(&mut self, s: &Sch, integer: bool) -> Result<Re> {
        let (lo, hi) = (s.number.lo.as_ref(), s.number.hi.as_ref());
        match s.number.multiple_of.len() {
            0 => Ok(if integer {
                number::integer_re(lo, hi)
            } else {
                number::number_re(lo, hi, None)
            }),
            1 => {
                let (m, at) = &s.number.multiple_of[0];
                if let Some(re) = number::multiple_of_re(m, lo, hi, integer) {
                    return Ok(re);
                }
                // Any integer divisor in an automaton: the integers of the range whose
                // digits leave remainder 0 (one state per remainder reached); for numbers
                // too, whose multiples are integers (written without a fraction).
                let divisor = if m.is_integer() { m.to_i128() } else { None };
                if let (true, Some(k)) = (self.for_automaton, divisor) {
                    if (1..=i128::from(MAX_RESIDUE_DIVISOR)).contains(&k) {
                        self.needs_automaton("multipleOf", at);
                        let digits = Re::concat([Re::opt(Re::lit("-")), Re::multiples(k as u32)]);
                        return Ok(Re::and([number::integer_re(lo, hi), digits]));
                    }
                }
                Err(unsupported(
                    "multipleOf",
                    parent(at),
                    &format!(
                        "multipleOf {} is expressible only as 10^-k for numbers, for integer divisors (up to {} in an index; in regex text 2^a*5^b without bounds that cut a sign), or for bounded ranges with at most {} multiples",
                        m.to_plain_string(),
                        MAX_RESIDUE_DIVISOR,
                        number::MAX_ENUMERATED_MULTIPLES
                    ),
                ))
            }
            _ => Err(unsupported(
                "multipleOf",
                parent(&s.number.multiple_of[1].1),
                "several different multipleOf",
            )),
        }
    }

    #[inline(never)]
    pub(super) fn string(&mut self, s: &Sch) -> Result<Re> {
        let (min, max) = (s.string.min_len, s.string.max_len);
        if max.is_some_and(|m| m < min) {
            return Ok(Re::never());
        }
        let length = || {
            let max = max.map(|m| u32::try_from(m).unwrap_or(u32::MAX));
            let min = u32::try_from(min).unwrap_or(u32::MAX);
            Re::repeat(Re::raw(JSON_CHAR), min, max)
        };
        // Every pattern and known format; an unknown format is an annotation (JSON
        // Schema 2020-12) unless the configuration makes it an error.
        // (the pattern's or format's name, its pattern, keyword, path)
        let mut constraints: Vec<(&String, Pat, &'static str, &String)> = Vec::new();
        let unlimited = min == 0 && max.is_none();
        if let ([(p, at)], [], true) = (&s.string.patterns[..], &s.string.formats[..], unlimited) {
            // One pattern, nothing else: found in the cache without parsing it again.
            let body = self.pattern_content(p, "pattern", at)?;
            return self.string_excluding(s, body);
        }
        for (p, at) in &s.string.patterns {
            let pat = pattern::parse(p)
                .map_err(|e| unsupported("pattern", parent(at), &format!("{p:?}: {e}")))?;
            constraints.push((p, pat, "pattern", at));
        }
        for (f, at) in &s.string.formats {
            match fragments::format_pattern(f) {
                Some(src) => {
                    let pat =
                        pattern::parse(&format!("^(?:{src})$")).expect("format patterns parse");
                    constraints.push((f, pat, "format", at));
                }
                None if self.config.get_unknown_formats_are_errors() => {
                    return Err(unsupported(
                        "format",
                        parent(at),
                        &format!(
                            "format \"{f}\" is not supported (supported: {})",
                            fragments::FORMATS.join(", ")
                        ),
                    ));
                }
                None => {}
            }
        }
        let body = match constraints.len() {
            0 => length(),
            1 => {
                let (name, pat, keyword, at) = constraints.pop().expect("one constraint");
                match unlimited {
                    // Once per schema: a definition referred to from many places (an ABI's
                    // type pattern of 600 alternatives, 20 times) is compiled once.
                    true => match self.string_cache.get(&(keyword, name.clone())) {
                        Some(re) => re.clone(),
                        None => {
                            let re = self.constrained(pat, 0, None, keyword, at)?;
                            self.string_cache
                                .insert((keyword, name.clone()), re.clone());
                            re
                        }
                    },
                    // A length the pattern's regex cannot carry becomes an intersection.
                    false => match self.constrained(pat.clone(), min, max, keyword, at) {
                        Ok(re) => re,
                        Err(_) => {
                            self.needs_automaton(keyword, at);
                            Re::and([self.constrained(pat, 0, None, keyword, at)?, length()])
                        }
                    },
                }
            }
            _ => {
                // Several patterns/formats on one string: their intersection (an
                // automaton; a regex cannot say it).
                let mut parts = Vec::new();
                self.needs_automaton(constraints[1].2, constraints[1].3);
                for (_, pat, keyword, at) in constraints {
                    parts.push(self.constrained(pat, 0, None, keyword, at)?);
                }
                if !unlimited {
                    parts.push(length());
                }
                Re::and(parts)
            }
        };
        self.string_excluding(s, body)
    }

    /// A string of content `body` that matches none of the schema's `not: {pattern}`s,
    /// quoted.
    fn string_excluding(&mut self, s: &Sch, body: Re) -> Result<Re> {
        let body = if s.string.excluded_patterns.is_empty() {
            body
        } else {
            // `not: {pattern}`: a complement at the byte level is the complement of
            // decoded strings only where each string has one spelling, so the strings
            // are kept to their canonical one (`CANONICAL_STRING_CHAR`).
            let mut excluded = Vec::new();
            for (p, at) in &s.string.excluded_patterns {
                excluded.push(self.pattern_content(p, "not", at)?);
            }
            self.needs_automaton("not", parent(&s.string.excluded_patterns[0].1));
            Re::and([
                body,
                Re::star(Re::raw(CANONICAL_STRING_CHAR)),
                Re::not(Re::alt(excluded)),
            ])
        };
        Ok(Re::concat([Re::lit("\""), body, Re::lit("\"")]))
    }

    /// The content of the strings that pattern `p` matches (no length), made once per
    /// schema: a `oneOf` of patterns takes each branch with the others' patterns excluded,
    /// in every context its definition is compiled in (an ABI's type `oneOf` of eight
    /// patterns, one of 800 alternatives, parsed and compiled 56 times per context).
    fn pattern_content(&mut self, p: &str, keyword: &'static str, at: &str) -> Result<Re> {
        if let Some(re) = self.string_cache.get(&("pattern", p.to_string())) {
            return Ok(re.clone());
        }
        let pat = pattern::parse(p)
            .map_err(|e| unsupported(keyword, parent(at), &format!("{p:?}: {e}")))?;
        let re = self.constrained(pat, 0, None, keyword, at)?;
        self.string_cache
            .insert(("pattern", p.to_string()), re.clone());
        Ok(re)
    }

    /// A pattern's strings (as JSON string content), with a length range applied.
    pub(super) fn constrained(
        &mut self,
        pat: Pat,
        min: u64,
        max: Option<u64>,
        keyword: &str,
        at: &str,
    ) -> Result<Re> {
        let err = |why: &str| unsupported(keyword, parent(at), why);
        let branches = pattern::branches(pat).map_err(|e| err(&e))?;
        let mut alts = Vec::new();
        for b in branches {
            let mut pats: Vec<Pat> = b.items.into_iter().map(unwrap_single).collect();
            // Beside an unanchored end, a repetition matters only up to its minimum (any
            // more is within the free run): `[a-z]{1,255}` unanchored is `[a-z]`. Exact,
            // and it spares the automaton counting to 255 in every key.
            if !b.anchored_end {
                trim_repeats(&mut pats);
            }
            if !b.anchored_start {
                pats.reverse();
                trim_repeats(&mut pats);
                pats.reverse();
            }
            // Items, with unanchored ends as free runs of characters (None).
            let mut items: Vec<Option<Pat>> = pats.into_iter().map(Some).collect();
            if !b.anchored_start {
                items.insert(0, None);
            }
            if !b.anchored_end {
                items.push(None);
            }
            let range = |it: &Option<Pat>| it.as_ref().map_or((0, None), |p| p.len_range());
            let (lo, hi) = items.iter().fold((0u64, Some(0u64)), |(a, b), it| {
                let (x, y) = range(it);
                (
                    a.saturating_add(x),
                    b.and_then(|b| y.map(|y| b.saturating_add(y))),
                )
            });
            let implied = min <= lo && max.is_none_or(|m| hi.is_some_and(|h| h <= m));
            let mut adjust: Option<(usize, u64, Option<u64>)> = None;
            if !implied {
                // Exactly one variable-length item, a repeated single class (or a free
                // run), takes the length constraint.
                let variable: Vec<usize> = (0..items.len())
                    .filter(|&i| {
                        let (x, y) = range(&items[i]);
                        Some(x) != y
                    })
                    .collect();
                let ok = variable.len() == 1
                    && match &items[variable[0]] {
                        None => true,
                        Some(Pat::Repeat(inner, _, _)) => matches!(**inner, Pat::Class(_)),
                        _ => false,
                    };
                if !ok {
                    return Err(err("a length limit (minLength/maxLength) that the pattern does not imply, on a pattern whose length is not one repeated class"));
                }
                let v = variable[0];
                let fixed: u64 = (0..items.len())
                    .filter(|&i| i != v)
                    .map(|i| range(&items[i]).0)
                    .sum();
                let (rmin, rmax) = match &items[v] {
                    Some(Pat::Repeat(_, a, b)) => (*a as u64, b.map(|b| b as u64)),
                    _ => (0, None),
                };
                let nmin = rmin.max(min.saturating_sub(fixed));
                let nmax = match (rmax, max) {
                    (Some(a), Some(m)) => {
                        if m < fixed {
                            alts.push(Re::never());
                            continue;
                        }
                        Some(a.min(m - fixed))
                    }
                    (a, None) => a,
                    (None, Some(m)) => {
                        if m < fixed {
                            alts.push(Re::never());
                            continue;
                        }
                        Some(m - fixed)
                    }
                };
                adjust = Some((v, nmin, nmax));
            }
            let mut parts = Vec::new();
            for (i, it) in items.into_iter().enumerate() {
                let (rmin, rmax) = match adjust {
                    Some((v, a, b)) if v == i => (Some(a), Some(b)),
                    _ => (None, None),
                };
                let re = match it {
                    None => {
                        let (a, b) = (rmin.unwrap_or(0), rmax.flatten());
                        Re::repeat(Re::raw(JSON_CHAR), clamp32(a), b.map(clamp32))
                    }
                    Some(p) => match (rmin, p) {
                        (Some(a), Pat::Repeat(inner, _, _)) => {
                            let inner = inner.to_json_re(&mut self.props).map_err(|e| err(&e))?;
                            Re::repeat(inner, clamp32(a), rmax.flatten().map(clamp32))
                        }
                        (_, p) => p.to_json_re(&mut self.props).map_err(|e| err(&e))?,
                    },
                };
                parts.push(re);
            }
            alts.push(Re::concat(parts));
        }
        Ok(Re::alt(alts))
    }
}
