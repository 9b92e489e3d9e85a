//! Numbers: exact decimals, and regexes for the JSON spellings of the numbers in a range.
//!
//! Ranges are written digit by digit (the classic "numeric range to regex"
//! construction), so they are exact for integers of any size and for decimal bounds:
//! `minimum: 1.5` accepts `1.5`, `1.50`, `1.51`, `2`, and rejects `1.49999`. A number
//! whose value must lie in a range is written in plain decimal form
//! (`-?(0|[1-9][0-9]*)(\.[0-9]+)?`, no `-0`); the exponent forms `JSON.stringify` uses for
//! very small (`1e-7`) and very large (`1e+21`) magnitudes are accepted where every such
//! number lies in the range. Deciding "mantissa x 10^exponent is in range" for unbounded
//! exponents is not a regular language, so other exponent spellings are left out there.

use std::cmp::Ordering;

use super::re::Re;

/// An exact decimal number: sign, integer digits (no leading zeros, `"0"` for none),
/// fraction digits (no trailing zeros). Zero is never negative.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Decimal {
    neg: bool,
    int: String,
    frac: String,
}

impl Decimal {
    pub(crate) fn zero() -> Decimal {
        Decimal {
            neg: false,
            int: "0".into(),
            frac: String::new(),
        }
    }

    pub(crate) fn from_u128(v: u128, neg: bool) -> Decimal {
        Decimal::from_parts(neg, &v.to_string(), "")
    }

    /// Parses JSON-number-like text: `-?digits(.digits)?([eE][+-]?digits)?`.
    pub(crate) fn parse(s: &str) -> Option<Decimal> {
        let (neg, rest) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s),
        };
        let (mant, exp) = match rest.find(['e', 'E']) {
            Some(i) => (&rest[..i], rest[i + 1..].parse::<i64>().ok()?),
            None => (rest, 0),
        };
        let (int, frac) = match mant.split_once('.') {
            Some((i, f)) => (i, f),
            None => (mant, ""),
        };
        if int.is_empty()
            || !int.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        if exp.unsigned_abs() > 100_000 {
            return None;
        }
        let digits = format!("{int}{frac}");
        // Position of the decimal point within `digits`.
        let point = int.len() as i64 + exp;
        let (i, f) = if point <= 0 {
            (
                String::new(),
                format!("{}{}", "0".repeat((-point) as usize), digits),
            )
        } else if point as usize >= digits.len() {
            (
                format!("{}{}", digits, "0".repeat(point as usize - digits.len())),
                String::new(),
            )
        } else {
            (
                digits[..point as usize].to_string(),
                digits[point as usize..].to_string(),
            )
        };
        Some(Decimal::from_parts(neg, &i, &f))
    }

    fn from_parts(neg: bool, int: &str, frac: &str) -> Decimal {
        let int = int.trim_start_matches('0');
        let frac = frac.trim_end_matches('0');
        let int = if int.is_empty() {
            "0".to_string()
        } else {
            int.to_string()
        };
        let zero = int == "0" && frac.is_empty();
        Decimal {
            neg: neg && !zero,
            int,
            frac: frac.to_string(),
        }
    }

    pub(crate) fn is_neg(&self) -> bool {
        self.neg
    }
    pub(crate) fn is_zero(&self) -> bool {
        self.int == "0" && self.frac.is_empty()
    }
    pub(crate) fn is_integer(&self) -> bool {
        self.frac.is_empty()
    }
    pub(crate) fn int_digits(&self) -> &str {
        &self.int
    }
    pub(crate) fn frac_digits(&self) -> &str {
        &self.frac
    }
    pub(crate) fn abs(&self) -> Decimal {
        Decimal {
            neg: false,
            ..self.clone()
        }
    }
    pub(crate) fn negated(&self) -> Decimal {
        Decimal {
            neg: !self.neg && !self.is_zero(),
            ..self.clone()
        }
    }

    /// The largest integer `<= self`.
    pub(crate) fn floor(&self) -> Decimal {
        if self.frac.is_empty() {
            return self.clone();
        }
        if self.neg {
            Decimal::from_parts(true, &inc(&self.int), "")
        } else {
            Decimal::from_parts(false, &self.int, "")
        }
    }

    /// The smallest integer `>= self`.
    pub(crate) fn ceil(&self) -> Decimal {
        self.negated().floor().negated()
    }

    /// `self + 1` for an integer.
    pub(crate) fn succ(&self) -> Decimal {
        debug_assert!(self.is_integer());
        if self.neg {
            Decimal::from_parts(true, &dec(&self.int), "")
        } else {
            Decimal::from_parts(false, &inc(&self.int), "")
        }
    }

    /// `self - 1` for an integer.
    pub(crate) fn pred(&self) -> Decimal {
        self.negated().succ().negated()
    }

    /// `self * 10^k`.
    pub(crate) fn shift(&self, k: i64) -> Decimal {
        let digits = format!("{}{}", self.int, self.frac);
        let point = self.int.len() as i64 + k;
        let (i, f) = if point <= 0 {
            (
                String::new(),
                format!("{}{}", "0".repeat((-point) as usize), digits),
            )
        } else if point as usize >= digits.len() {
            (
                format!("{}{}", digits, "0".repeat(point as usize - digits.len())),
                String::new(),
            )
        } else {
            (
                digits[..point as usize].to_string(),
                digits[point as usize..].to_string(),
            )
        };
        Decimal::from_parts(self.neg, &i, &f)
    }

    /// The value as an `i128` if it is an integer that fits.
    pub(crate) fn to_i128(&self) -> Option<i128> {
        if !self.frac.is_empty() || self.int.len() > 37 {
            return None;
        }
        let v: i128 = self.int.parse().ok()?;
        Some(if self.neg { -v } else { v })
    }

    /// Plain decimal text (`-12.5`, never an exponent).
    pub(crate) fn to_plain_string(&self) -> String {
        let mut s = String::new();
        if self.neg {
            s.push('-');
        }
        s.push_str(&self.int);
        if !self.frac.is_empty() {
            s.push('.');
            s.push_str(&self.frac);
        }
        s
    }

    /// The text JavaScript's `Number.prototype.toString` writes for this value (which is
    /// what `JSON.stringify` writes), assuming the digits are already the shortest
    /// round-trip ones: plain below 1e21 and from 1e-6 up, exponent form elsewhere.
    pub(crate) fn to_js_string(&self) -> String {
        if self.is_zero() {
            return "0".into();
        }
        // value = 0.s * 10^n with s the significant digits.
        let all = format!("{}{}", self.int, self.frac);
        let lead = all.len() - all.trim_start_matches('0').len();
        let s = all.trim_matches('0');
        let k = s.len() as i64;
        let n = self.int.len() as i64 - lead as i64;
        let sign = if self.neg { "-" } else { "" };
        if k <= n && n <= 21 {
            format!("{sign}{s}{}", "0".repeat((n - k) as usize))
        } else if 0 < n && n <= 21 {
            format!("{sign}{}.{}", &s[..n as usize], &s[n as usize..])
        } else if -6 < n && n <= 0 {
            format!("{sign}0.{}{s}", "0".repeat((-n) as usize))
        } else {
            let e = n - 1;
            let esign = if e < 0 { '-' } else { '+' };
            if k == 1 {
                format!("{sign}{s}e{esign}{}", e.abs())
            } else {
                format!("{sign}{}.{}e{esign}{}", &s[..1], &s[1..], e.abs())
            }
        }
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Decimal) -> Ordering {
        match (self.neg, other.neg) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => cmp_magnitude(self, other),
            (true, true) => cmp_magnitude(other, self),
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

fn cmp_magnitude(a: &Decimal, b: &Decimal) -> Ordering {
    a.int
        .len()
        .cmp(&b.int.len())
        .then_with(|| a.int.cmp(&b.int))
        .then_with(|| a.frac.cmp(&b.frac))
}

/// Digit string + 1.
fn inc(s: &str) -> String {
    let mut d: Vec<u8> = s.bytes().collect();
    let mut i = d.len();
    loop {
        if i == 0 {
            d.insert(0, b'1');
            break;
        }
        i -= 1;
        if d[i] == b'9' {
            d[i] = b'0';
        } else {
            d[i] += 1;
            break;
        }
    }
    String::from_utf8(d).unwrap()
}

/// Digit string - 1 (of a positive number).
fn dec(s: &str) -> String {
    let mut d: Vec<u8> = s.bytes().collect();
    let mut i = d.len();
    while i > 0 {
        i -= 1;
        if d[i] == b'0' {
            d[i] = b'9';
        } else {
            d[i] -= 1;
            break;
        }
    }
    let t = String::from_utf8(d).unwrap();
    let t = t.trim_start_matches('0');
    if t.is_empty() {
        "0".into()
    } else {
        t.to_string()
    }
}

/// A bound of a range: the value and whether it is included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Bound {
    pub(crate) value: Decimal,
    pub(crate) inclusive: bool,
}

impl Bound {
    pub(crate) fn new(value: Decimal, inclusive: bool) -> Bound {
        Bound { value, inclusive }
    }
}

/// The tighter of two lower bounds.
pub(crate) fn tighter_lower(a: Option<Bound>, b: Option<Bound>) -> Option<Bound> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => Some(match a.value.cmp(&b.value) {
            Ordering::Greater => a,
            Ordering::Less => b,
            Ordering::Equal => Bound::new(a.value, a.inclusive && b.inclusive),
        }),
    }
}

/// The tighter of two upper bounds.
pub(crate) fn tighter_upper(a: Option<Bound>, b: Option<Bound>) -> Option<Bound> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => Some(match a.value.cmp(&b.value) {
            Ordering::Less => a,
            Ordering::Greater => b,
            Ordering::Equal => Bound::new(a.value, a.inclusive && b.inclusive),
        }),
    }
}

/// Whether the range `[lo, hi]` holds no number at all.
pub(crate) fn range_is_empty(lo: Option<&Bound>, hi: Option<&Bound>) -> bool {
    match (lo, hi) {
        (Some(l), Some(h)) => match l.value.cmp(&h.value) {
            Ordering::Greater => true,
            Ordering::Equal => !(l.inclusive && h.inclusive),
            Ordering::Less => false,
        },
        _ => false,
    }
}

/// Whether `v` lies in `[lo, hi]`.
pub(crate) fn in_range(v: &Decimal, lo: Option<&Bound>, hi: Option<&Bound>) -> bool {
    let lo_ok = lo.is_none_or(|l| match v.cmp(&l.value) {
        Ordering::Greater => true,
        Ordering::Equal => l.inclusive,
        Ordering::Less => false,
    });
    let hi_ok = hi.is_none_or(|h| match v.cmp(&h.value) {
        Ordering::Less => true,
        Ordering::Equal => h.inclusive,
        Ordering::Greater => false,
    });
    lo_ok && hi_ok
}

// ---------------------------------------------------------------------------------------
// Regex construction.

fn digit_class(lo: u8, hi: u8) -> Re {
    debug_assert!(lo <= hi);
    if lo == hi {
        Re::lit((b'0' + lo) as char)
    } else if lo == 0 && hi == 9 {
        Re::class("[0-9]")
    } else {
        Re::class(format!("[{}-{}]", lo, hi))
    }
}

fn any_digits(n: usize) -> Re {
    Re::repeat(Re::class("[0-9]"), n as u32, Some(n as u32))
}

fn digit(s: &str, i: usize) -> u8 {
    s.as_bytes()[i] - b'0'
}

/// Digit strings of `lo.len()` digits between `lo` and `hi` (same length, `lo <= hi`).
fn same_len_range(lo: &str, hi: &str) -> Re {
    if lo.is_empty() {
        return Re::empty();
    }
    if lo == hi {
        return Re::lit(lo);
    }
    let (l0, h0) = (digit(lo, 0), digit(hi, 0));
    if l0 == h0 {
        return Re::concat([Re::lit(&lo[..1]), same_len_range(&lo[1..], &hi[1..])]);
    }
    let rest = lo.len() - 1;
    let lo_tail_min = lo[1..].bytes().all(|b| b == b'0');
    let hi_tail_max = hi[1..].bytes().all(|b| b == b'9');
    let mid_lo = if lo_tail_min { l0 } else { l0 + 1 };
    let mid_hi = if hi_tail_max { h0 } else { h0 - 1 };
    let mut alts = Vec::new();
    if !lo_tail_min {
        alts.push(Re::concat([
            Re::lit(&lo[..1]),
            same_len_range(&lo[1..], &"9".repeat(rest)),
        ]));
    }
    if mid_lo <= mid_hi {
        alts.push(Re::concat([digit_class(mid_lo, mid_hi), any_digits(rest)]));
    }
    if !hi_tail_max {
        alts.push(Re::concat([
            Re::lit(&hi[..1]),
            same_len_range(&"0".repeat(rest), &hi[1..]),
        ]));
    }
    Re::alt(alts)
}

/// Canonical digit strings (no leading zeros) of the integers in `[a, b]` (`b` `None`:
/// unbounded), `0 <= a <= b`.
pub(crate) fn uint_range(a: &str, b: Option<&str>) -> Re {
    let la = a.len();
    match b {
        None => Re::alt([
            same_len_range(a, &"9".repeat(la)),
            Re::concat([
                Re::class("[1-9]"),
                Re::repeat(Re::class("[0-9]"), la as u32, None),
            ]),
        ]),
        Some(b) => {
            let lb = b.len();
            if la == lb {
                return same_len_range(a, b);
            }
            let mut alts = vec![same_len_range(a, &"9".repeat(la))];
            if lb - la >= 2 {
                alts.push(Re::concat([
                    Re::class("[1-9]"),
                    Re::repeat(Re::class("[0-9]"), la as u32, Some((lb - 2) as u32)),
                ]));
            }
            alts.push(same_len_range(&format!("1{}", "0".repeat(lb - 1)), b));
            Re::alt(alts)
        }
    }
}

/// The JSON number grammar (RFC 8259 section 6).
pub(crate) const NUMBER: &str = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?";
/// Plain decimals with a non-zero fraction digit (numbers that are not integers).
pub(crate) const NON_INTEGER: &str = r"-?(?:0|[1-9][0-9]*)\.[0-9]*[1-9][0-9]*";
/// Integers as `JSON.stringify` writes them: no fraction, no exponent.
pub(crate) const INTEGER: &str = r"-?(?:0|[1-9][0-9]*)";
/// Positive numbers below 1e-6 in exponent form (`JSON.stringify(1e-7)` is `"1e-7"`).
const TINY_EXP: &str = r"[1-9](?:\.[0-9]+)?e-(?:[7-9]|[1-9][0-9]+)";
/// Numbers of 1e21 and above in exponent form (`JSON.stringify(1e21)` is `"1e+21"`).
const HUGE_EXP: &str = r"[1-9](?:\.[0-9]+)?e\+(?:2[1-9]|[3-9][0-9]|[1-9][0-9]{2,})";

/// The integers in `[lo, hi]`, as `JSON.stringify` writes them.
pub(crate) fn integer_re(lo: Option<&Bound>, hi: Option<&Bound>) -> Re {
    if lo.is_none() && hi.is_none() {
        return Re::raw(INTEGER);
    }
    let lo_i = lo.map(|b| {
        if b.inclusive || !b.value.is_integer() {
            b.value.ceil()
        } else {
            b.value.succ()
        }
    });
    let hi_i = hi.map(|b| {
        if b.inclusive || !b.value.is_integer() {
            b.value.floor()
        } else {
            b.value.pred()
        }
    });
    if let (Some(l), Some(h)) = (&lo_i, &hi_i) {
        if l > h {
            return Re::never();
        }
    }
    let mut alts = Vec::new();
    // Non-negative side: [max(lo, 0), hi].
    if hi_i.as_ref().is_none_or(|h| !h.is_neg()) {
        let a = match &lo_i {
            Some(l) if !l.is_neg() => l.int_digits().to_string(),
            _ => "0".into(),
        };
        alts.push(uint_range(&a, hi_i.as_ref().map(|h| h.int_digits())));
    }
    // Negative side: magnitudes [max(-hi, 1), -lo].
    if lo_i.as_ref().is_none_or(|l| l.is_neg()) {
        let a = match &hi_i {
            Some(h) if h.is_neg() => h.int_digits().to_string(),
            _ => "1".into(),
        };
        alts.push(Re::concat([
            Re::lit("-"),
            uint_range(&a, lo_i.as_ref().map(|l| l.int_digits())),
        ]));
    }
    Re::alt(alts)
}

/// The numbers in `[lo, hi]` with at most `max_frac` significant fraction digits.
///
/// Plain decimals exactly; exponent forms only for classes wholly inside the range.
pub(crate) fn number_re(lo: Option<&Bound>, hi: Option<&Bound>, max_frac: Option<usize>) -> Re {
    if lo.is_none() && hi.is_none() && max_frac.is_none() {
        return Re::raw(NUMBER);
    }
    if range_is_empty(lo, hi) {
        return Re::never();
    }
    let zero_incl = Bound::new(Decimal::zero(), true);
    let zero_excl = Bound::new(Decimal::zero(), false);
    let mut alts = Vec::new();
    // Magnitudes written without a sign: values >= 0.
    let pos_lo = match lo {
        Some(l) if !l.value.is_neg() => l.clone(),
        _ => zero_incl.clone(),
    };
    let pos_hi = match hi {
        Some(h) if h.value.is_neg() => None,
        Some(h) => Some(Some(h.clone())),
        None => Some(None),
    };
    if let Some(pos_hi) = pos_hi {
        if !range_is_empty(Some(&pos_lo), pos_hi.as_ref()) {
            alts.push(udec_range(&pos_lo, pos_hi.as_ref(), max_frac));
        }
    }
    // Written with '-': magnitudes > 0 whose negation is in range.
    let neg_lo = match hi {
        Some(h) if h.value.is_neg() => Bound::new(h.value.abs(), h.inclusive),
        _ => zero_excl,
    };
    let neg_hi = match lo {
        Some(l) if l.value.is_neg() => Some(Some(Bound::new(l.value.abs(), l.inclusive))),
        Some(_) => None,
        None => Some(None),
    };
    if let Some(neg_hi) = neg_hi {
        if !range_is_empty(Some(&neg_lo), neg_hi.as_ref()) {
            alts.push(Re::concat([
                Re::lit("-"),
                udec_range(&neg_lo, neg_hi.as_ref(), max_frac),
            ]));
        }
    }
    if max_frac.is_none() {
        let zero = Decimal::zero();
        let tiny = Decimal::parse("1e-6").unwrap();
        let huge = Decimal::parse("1e21").unwrap();
        let le = |b: Option<&Bound>, v: &Decimal| b.is_none_or(|b| b.value <= *v);
        let ge = |b: Option<&Bound>, v: &Decimal| b.is_none_or(|b| b.value >= *v);
        if le(lo, &zero) && ge(hi, &tiny) {
            alts.push(Re::raw(TINY_EXP));
        }
        if ge(hi, &zero) && le(lo, &tiny.negated()) {
            alts.push(Re::concat([Re::lit("-"), Re::raw(TINY_EXP)]));
        }
        if hi.is_none() && le(lo, &huge) {
            alts.push(Re::raw(HUGE_EXP));
        }
        if lo.is_none() && ge(hi, &huge.negated()) {
            alts.push(Re::concat([Re::lit("-"), Re::raw(HUGE_EXP)]));
        }
    }
    Re::alt(alts)
}

/// Plain decimal spellings of the non-negative values in `[a, b]`.
fn udec_range(a: &Bound, b: Option<&Bound>, max_frac: Option<usize>) -> Re {
    let ia = a.value.int_digits();
    let fa = a.value.frac_digits();
    let frac_any = || {
        Fraction {
            lo: None,
            hi: None,
            max_frac,
        }
        .re()
    };
    match b {
        None => Re::alt([
            Re::concat([
                Re::lit(ia),
                Fraction {
                    lo: Some((fa, a.inclusive)),
                    hi: None,
                    max_frac,
                }
                .re(),
            ]),
            Re::concat([uint_range(&inc(ia), None), frac_any()]),
        ]),
        Some(b) => {
            let ib = b.value.int_digits();
            let fb = b.value.frac_digits();
            if ia == ib {
                return Re::concat([
                    Re::lit(ia),
                    Fraction {
                        lo: Some((fa, a.inclusive)),
                        hi: Some((fb, b.inclusive)),
                        max_frac,
                    }
                    .re(),
                ]);
            }
            let mut alts = vec![Re::concat([
                Re::lit(ia),
                Fraction {
                    lo: Some((fa, a.inclusive)),
                    hi: None,
                    max_frac,
                }
                .re(),
            ])];
            let next = inc(ia);
            let last = dec(ib);
            let next_d = Decimal::from_parts(false, &next, "");
            let last_d = Decimal::from_parts(false, &last, "");
            if next_d <= last_d {
                alts.push(Re::concat([uint_range(&next, Some(&last)), frac_any()]));
            }
            alts.push(Re::concat([
                Re::lit(ib),
                Fraction {
                    lo: None,
                    hi: Some((fb, b.inclusive)),
                    max_frac,
                }
                .re(),
            ]));
            Re::alt(alts)
        }
    }
}

/// The optional fraction `(\.[0-9]+)?` of a number whose integer part is fixed, its value
/// `0.d1d2...` limited to `[0.lo, 0.hi]` (each bound: fraction digits without trailing
/// zeros, inclusive or not) and to `max_frac` significant digits. An absent fraction is
/// the value 0.
struct Fraction<'a> {
    lo: Option<(&'a str, bool)>,
    hi: Option<(&'a str, bool)>,
    max_frac: Option<usize>,
}

impl Fraction<'_> {
    fn re(&self) -> Re {
        let absent = if self.end_ok(0, self.lo.is_none(), self.hi.is_none()) {
            Re::empty()
        } else {
            Re::never()
        };
        let digits = self.gen(0, self.lo.is_none(), self.hi.is_none(), true);
        Re::alt([absent, Re::concat([Re::lit("."), digits])])
    }

    fn lo_len(&self) -> usize {
        self.lo.map_or(0, |(s, _)| s.len())
    }
    fn hi_len(&self) -> usize {
        self.hi.map_or(0, |(s, _)| s.len())
    }

    /// May the digits stop after `p` of them? `above`: already > lo's prefix; `below`:
    /// already < hi's prefix.
    fn end_ok(&self, p: usize, above: bool, below: bool) -> bool {
        let lower_ok = above || (p >= self.lo_len() && self.lo.is_none_or(|(_, incl)| incl));
        let upper_ok = below || p < self.hi_len() || self.hi.is_none_or(|(_, incl)| incl);
        lower_ok && upper_ok
    }

    /// Any digits from position `p` on, within `max_frac`.
    fn free(&self, p: usize, nonempty: bool) -> Re {
        let d = Re::class("[0-9]");
        match self.max_frac {
            None => Re::repeat(d, nonempty as u32, None),
            Some(m) => {
                let k = m.saturating_sub(p) as u32;
                let zeros = Re::star(Re::lit("0"));
                if k == 0 {
                    Re::repeat(Re::lit("0"), nonempty as u32, None)
                } else if nonempty {
                    Re::alt([
                        Re::concat([Re::repeat(d, 1, Some(k)), zeros]),
                        Re::repeat(Re::lit("0"), 1, None),
                    ])
                } else {
                    Re::concat([Re::repeat(d, 0, Some(k)), zeros])
                }
            }
        }
    }

    fn gen(&self, p: usize, above: bool, below: bool, first: bool) -> Re {
        if above && below {
            return self.free(p, first);
        }
        let horizon = self
            .lo_len()
            .max(self.hi_len())
            .max(self.max_frac.unwrap_or(0));
        if p >= horizon {
            // Past every bound digit: the lower bound contributes zeros, the upper bound
            // (if still equal) allows only zeros, max_frac allows only zeros.
            let zeros = Re::repeat(Re::lit("0"), first as u32, None);
            return match (above, below) {
                (false, true) => {
                    let lo_incl = self.lo.is_none_or(|(_, incl)| incl);
                    if self.max_frac.is_some() {
                        if lo_incl {
                            zeros
                        } else {
                            Re::never()
                        }
                    } else if lo_incl {
                        Re::repeat(Re::class("[0-9]"), first as u32, None)
                    } else {
                        Re::concat([
                            Re::star(Re::lit("0")),
                            Re::class("[1-9]"),
                            Re::star(Re::class("[0-9]")),
                        ])
                    }
                }
                (true, false) => {
                    if self.hi.is_none_or(|(_, incl)| incl) {
                        zeros
                    } else {
                        Re::never()
                    }
                }
                _ => {
                    if self.lo.is_none_or(|(_, i)| i) && self.hi.is_none_or(|(_, i)| i) {
                        zeros
                    } else {
                        Re::never()
                    }
                }
            };
        }
        let mut alts = Vec::new();
        if !first && self.end_ok(p, above, below) {
            alts.push(Re::empty());
        }
        let lo_d = self
            .lo
            .and_then(|(s, _)| s.as_bytes().get(p))
            .map_or(0, |b| b - b'0');
        let hi_d = self
            .hi
            .and_then(|(s, _)| s.as_bytes().get(p))
            .map_or(0, |b| b - b'0');
        // Group digits by the state they lead to.
        let mut groups: Vec<((bool, bool), Vec<u8>)> = Vec::new();
        for d in 0..=9u8 {
            if !above && d < lo_d {
                continue;
            }
            if !below && d > hi_d {
                continue;
            }
            if self.max_frac.is_some_and(|m| p >= m) && d != 0 {
                continue;
            }
            let key = (above || d > lo_d, below || d < hi_d);
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(d),
                None => groups.push((key, vec![d])),
            }
        }
        for ((na, nb), digits) in groups {
            let class = digits_class(&digits);
            alts.push(Re::concat([class, self.gen(p + 1, na, nb, false)]));
        }
        Re::alt(alts)
    }
}

/// A class for a set of digits (contiguous runs become ranges).
fn digits_class(digits: &[u8]) -> Re {
    if digits.len() == 1 {
        return Re::lit((b'0' + digits[0]) as char);
    }
    let mut s = String::from("[");
    let mut i = 0;
    while i < digits.len() {
        let mut j = i;
        while j + 1 < digits.len() && digits[j + 1] == digits[j] + 1 {
            j += 1;
        }
        if j > i {
            s.push_str(&format!("{}-{}", digits[i], digits[j]));
        } else {
            s.push((b'0' + digits[i]) as char);
        }
        i = j + 1;
    }
    s.push(']');
    if s == "[0-9]" {
        return Re::class("[0-9]");
    }
    Re::class(s)
}

/// Spellings of one number value: its plain decimal with optional trailing fraction
/// zeros (`1`, `1.0`, `1.00`; `2.5`, `2.50`), plus the exponent form `JSON.stringify`
/// writes where it uses one. `-0` is not written.
pub(crate) fn literal_number_re(v: &Decimal) -> Re {
    let mut alts = Vec::new();
    let sign = if v.is_neg() { "-" } else { "" };
    let plain = if v.frac_digits().is_empty() {
        Re::concat([
            Re::lit(format!("{sign}{}", v.int_digits())),
            Re::opt(Re::raw(r"\.0+")),
        ])
    } else {
        Re::concat([
            Re::lit(format!("{sign}{}.{}", v.int_digits(), v.frac_digits())),
            Re::star(Re::lit("0")),
        ])
    };
    alts.push(plain);
    let js = v.to_js_string();
    if js.contains('e') {
        alts.push(Re::lit(js));
    }
    Re::alt(alts)
}

/// Where a `multipleOf` can be expressed: the regex for the numbers (or integers) in
/// `[lo, hi]` that are multiples of `m`, or `None` when it cannot be.
///
/// Handled: every multiple when the range is bounded and holds at most
/// [`MAX_ENUMERATED_MULTIPLES`]; `m = 10^-k` for numbers (at most k fraction digits, any
/// range); an integer `m` that every integer in the type satisfies; integer divisors
/// `2^a 5^b` (decided by the last digits) when the range cuts no side.
pub(crate) fn multiple_of_re(
    m: &Decimal,
    lo: Option<&Bound>,
    hi: Option<&Bound>,
    integer: bool,
) -> Option<Re> {
    if m.is_neg() || m.is_zero() {
        return None;
    }
    if let Some(re) = enumerate_multiples(m, lo, hi, integer) {
        return Some(re);
    }
    // m = c * 10^e with c not divisible by 10.
    let all = format!("{}{}", m.int_digits(), m.frac_digits());
    let trailing = all.len() - all.trim_end_matches('0').len();
    let e = trailing as i64 - m.frac_digits().len() as i64;
    let c = Decimal::parse(all.trim_matches('0'))?;
    let c_val = c.to_i128()?;
    if e < 0 {
        let d = (-e) as u32;
        if c_val == 1 && !integer {
            return Some(number_re(lo, hi, Some(d as usize)));
        }
        // Every integer is a multiple of c * 10^-d iff c divides 10^d.
        if integer && d <= 30 && 10i128.pow(d) % c_val == 0 {
            return Some(integer_re(lo, hi));
        }
        return None;
    }
    // An integer divisor D = c * 10^e.
    if e > 30 {
        return None;
    }
    let big_d = c_val.checked_mul(10i128.checked_pow(e as u32)?)?;
    // 1 divides every integer, in any range (suffix_multiples needs a divisor above 1).
    let re = if big_d == 1 {
        integer_re(lo, hi)
    } else {
        suffix_multiples(big_d, lo, hi)?
    };
    // For numbers, the integer-valued ones.
    Some(if integer {
        re
    } else {
        Re::concat([re, Re::opt(Re::raw(r"\.0+"))])
    })
}

/// At most this many multiples are written out one by one.
pub(crate) const MAX_ENUMERATED_MULTIPLES: i128 = 1000;

fn enumerate_multiples(
    m: &Decimal,
    lo: Option<&Bound>,
    hi: Option<&Bound>,
    integer: bool,
) -> Option<Re> {
    let (lo, hi) = (lo?, hi?);
    // Scale everything by 10^s so that m, lo and hi are integers.
    let s = m
        .frac_digits()
        .len()
        .max(lo.value.frac_digits().len())
        .max(hi.value.frac_digits().len()) as i64;
    let ms = m.shift(s).to_i128()?;
    let los = lo.value.shift(s).to_i128()?;
    let his = hi.value.shift(s).to_i128()?;
    // Smallest k with k*ms in range.
    let mut k0 = los.div_euclid(ms);
    while k0 * ms < los || (k0 * ms == los && !lo.inclusive) {
        k0 += 1;
    }
    let mut k1 = his.div_euclid(ms);
    while k1 * ms > his || (k1 * ms == his && !hi.inclusive) {
        k1 -= 1;
    }
    if k1 < k0 {
        return Some(Re::never());
    }
    if k1 - k0 + 1 > MAX_ENUMERATED_MULTIPLES {
        return None;
    }
    let mut alts = Vec::new();
    for k in k0..=k1 {
        let v = Decimal::from_u128((k * ms).unsigned_abs(), k * ms < 0).shift(-s);
        if integer {
            if v.is_integer() {
                alts.push(Re::lit(v.to_plain_string()));
            }
        } else {
            alts.push(literal_number_re(&v));
        }
    }
    Some(Re::alt(alts))
}

/// Integer multiples of `d = 2^a 5^b`: decided by the last `t` digits (`d | 10^t`), when
/// at most [`MAX_ENUMERATED_MULTIPLES`] endings qualify and the range either admits or
/// excludes each sign side whole.
fn suffix_multiples(d: i128, lo: Option<&Bound>, hi: Option<&Bound>) -> Option<Re> {
    let mut t = 0u32;
    let mut p: i128 = 1;
    while p % d != 0 {
        t += 1;
        p = p.checked_mul(10)?;
        if t > 12 {
            return None;
        }
    }
    if p / d > MAX_ENUMERATED_MULTIPLES {
        return None;
    }
    let dd = Decimal::from_u128(d as u128, false);
    // Each sign side must be admitted whole or excluded whole.
    let pos = if hi.is_none() && lo.is_none_or(|b| in_range(&dd, Some(b), None)) {
        true
    } else if hi.is_some_and(|b| !in_range(&dd, None, Some(b))) {
        false
    } else {
        return None;
    };
    let negd = dd.negated();
    let neg = if lo.is_none() && hi.is_none_or(|b| in_range(&negd, None, Some(b))) {
        true
    } else if lo.is_some_and(|b| !in_range(&negd, Some(b), None)) {
        false
    } else {
        return None;
    };
    let zero = in_range(&Decimal::zero(), lo, hi);
    // Magnitudes >= 1 that are multiples: longer than t digits with a qualifying ending,
    // or at most t digits and themselves a multiple.
    let mut endings = Vec::new();
    let mut short = Vec::new();
    let mut k = 0i128;
    while k < p {
        let s = format!("{:0width$}", k, width = t as usize);
        endings.push(Re::lit(s));
        if k > 0 {
            short.push(Re::lit(k.to_string()));
        }
        k += d;
    }
    let magnitude = Re::alt([
        Re::concat([
            Re::class("[1-9]"),
            Re::star(Re::class("[0-9]")),
            Re::alt(endings),
        ]),
        Re::alt(short),
    ]);
    let mut alts = Vec::new();
    if zero {
        alts.push(Re::lit("0"));
    }
    if pos {
        alts.push(magnitude.clone());
    }
    if neg {
        alts.push(Re::concat([Re::lit("-"), magnitude]));
    }
    Some(Re::alt(alts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    /// `multipleOf: 1` is every integer (it used to give the multiples of 10), with or
    /// without bounds, and for numbers also their `.0` spellings.
    #[test]
    fn multiple_of_one() {
        let check =
            |lo: Option<Bound>, hi: Option<Bound>, integer: bool, yes: &[&str], no: &[&str]| {
                let re = multiple_of_re(&d("1"), lo.as_ref(), hi.as_ref(), integer)
                    .expect("expressible");
                let dfa = crate::automaton::Dfa::new(&re.render()).unwrap();
                for t in yes {
                    assert!(
                        dfa.is_match(t.as_bytes()),
                        "{t} should match {}",
                        re.render()
                    );
                }
                for t in no {
                    assert!(
                        !dfa.is_match(t.as_bytes()),
                        "{t} should not match {}",
                        re.render()
                    );
                }
            };
        check(
            None,
            None,
            true,
            &["0", "1", "7", "10", "-3", "123"],
            &["1.0", "1.5", "01", "1e"],
        );
        check(
            None,
            None,
            false,
            &["0", "1", "7", "1.0", "-3.00"],
            &["1.5", "0.1"],
        );
        let b = |v: &str, inclusive| Some(Bound::new(d(v), inclusive));
        check(
            b("1", true),
            b("65535", true),
            true,
            &["1", "2", "9", "65535"],
            &["0", "65536", "-1"],
        );
        check(
            b("-2.5", false),
            b("3", false),
            false,
            &["-2", "0", "2", "2.0"],
            &["3", "-3", "2.5"],
        );
        assert_eq!(
            multiple_of_re(&d("1.0"), None, None, true)
                .unwrap()
                .render(),
            multiple_of_re(&d("1"), None, None, true).unwrap().render()
        );
    }

    #[test]
    fn decimals() {
        assert_eq!(d("1.50").to_plain_string(), "1.5");
        assert_eq!(d("-0.0").to_plain_string(), "0");
        assert_eq!(d("1e21").to_js_string(), "1e+21");
        assert_eq!(d("1.5e-7").to_js_string(), "1.5e-7");
        assert_eq!(d("123e-2").to_js_string(), "1.23");
        assert_eq!(d("0.000001").to_js_string(), "0.000001");
        assert_eq!(d("-2.5").floor(), d("-3"));
        assert_eq!(d("-2.5").ceil(), d("-2"));
        assert_eq!(d("2.5").ceil(), d("3"));
        assert_eq!(d("-1").succ(), d("0"));
        assert_eq!(d("0").pred(), d("-1"));
        assert!(d("-1.5") < d("-1.25"));
        assert!(d("0.5") < d("1"));
        assert_eq!(d("1e300").int_digits().len(), 301);
    }
}
