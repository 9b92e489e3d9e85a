//! Named regex fragments, each with its source.
//!
//! The JSON grammar pieces are regex-automata syntax over the bytes of the JSON text.
//! The `format` definitions are written as ECMA-262 patterns over the *decoded* string
//! (the same dialect as `pattern`), and go through the same translation
//! ([`super::pattern`]), which writes `"` and `\` in their JSON-escaped form; so an email
//! with a quoted local part comes out as `\"joe bloggs\"@example.com` inside the JSON
//! string, as it must.
//!
//! Where a format's full definition is not a small regular language, the fragment is a
//! strict subset of it (it never accepts an invalid string): see each one.

/// One character of a JSON string (RFC 8259 section 7): any Unicode scalar but `"`, `\`
/// and U+0000-U+001F, or an escape. `\u` escapes of UTF-16 surrogates (`\uD800`-`\uDFFF`)
/// are left out, so that every escape is one character (a character beyond the BMP is
/// written as itself): `minLength`/`maxLength` then count exactly.
pub(crate) const JSON_CHAR: &str = r#"(?:[^"\\\x00-\x1F]|\\["\\/bfnrt]|\\u(?:[0-9A-Ca-c][0-9A-Fa-f]{3}|[Dd][0-7][0-9A-Fa-f]{2}|[EFef][0-9A-Fa-f]{3}))"#;

/// `null`, `true`, `false` (RFC 8259 section 3).
pub(crate) const NULL: &str = "null";
/// The two booleans.
pub(crate) const BOOLEAN: &str = "true|false";

// ---------------------------------------------------------------------------------------
// Formats (ECMA-262 patterns over the decoded string).

/// RFC 3339 `date-fullyear`s that are leap years in the Gregorian calendar: divisible
/// by 4, and by 400 when divisible by 100.
const LEAP_YEAR: &str =
    "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)";

/// RFC 3339 section 5.6 `full-date`, the day checked against its month (section 5.7):
/// 29 February only in leap years.
pub(crate) fn date() -> String {
    format!(
        "(?:[0-9]{{4}}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))|{LEAP_YEAR}-02-29)"
    )
}

/// RFC 3339 section 5.6 `full-time` (`Z` or a numeric offset required; `T`/`Z` in either
/// case, section 5.6 note). A leap second (`:60`, section 5.7) is accepted at 23:59 UTC
/// written with `Z` or a zero offset; a leap second written in another offset (valid at
/// the equivalent local time) is left out, since checking it needs the offset arithmetic.
pub(crate) const TIME: &str = r"(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:[Zz]|[+\-](?:[01][0-9]|2[0-3]):[0-5][0-9])|23:59:60(?:\.[0-9]+)?(?:[Zz]|[+\-]00:00))";

/// RFC 3339 section 5.6 `date-time`.
pub(crate) fn date_time() -> String {
    format!("{}[Tt]{}", date(), TIME)
}

/// RFC 3339 appendix A `duration` (ISO 8601): `P` then date elements (years, months,
/// days in order, contiguous), an optional `T` with hours, minutes, seconds (contiguous),
/// or weeks alone.
pub(crate) const DURATION: &str = "P(?:(?:[0-9]+D|[0-9]+M(?:[0-9]+D)?|[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?)(?:T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S))?|T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)|[0-9]+W)";

/// RFC 4122 section 3 string form (any version and variant), hex digits in either case.
pub(crate) const UUID: &str =
    "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}";

/// RFC 3986 section 3.2.2 `dec-octet`: 0-255 without leading zeros.
const DEC_OCTET: &str = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";

/// RFC 2673 section 3.2 dotted-quad / RFC 3986 `IPv4address`.
pub(crate) fn ipv4() -> String {
    format!(r"{DEC_OCTET}(?:\.{DEC_OCTET}){{3}}")
}

/// RFC 4291 section 2.2 text form, as RFC 3986 section 3.2.2 `IPv6address` writes it
/// (all nine ABNF alternatives, an embedded IPv4 in the last 32 bits; no zone id).
pub(crate) fn ipv6() -> String {
    let h16 = "[0-9A-Fa-f]{1,4}";
    let ls32 = format!("(?:{h16}:{h16}|{})", ipv4());
    // [ *k( h16 ":" ) h16 ]
    let head = |k: usize| {
        if k == 0 {
            format!("(?:{h16})?")
        } else {
            format!("(?:(?:{h16}:){{0,{k}}}{h16})?")
        }
    };
    let alts = [
        format!("(?:{h16}:){{6}}{ls32}"),
        format!("::(?:{h16}:){{5}}{ls32}"),
        format!("{}::(?:{h16}:){{4}}{ls32}", head(0)),
        format!("{}::(?:{h16}:){{3}}{ls32}", head(1)),
        format!("{}::(?:{h16}:){{2}}{ls32}", head(2)),
        format!("{}::{h16}:{ls32}", head(3)),
        format!("{}::{ls32}", head(4)),
        format!("{}::{h16}", head(5)),
        format!("{}::", head(6)),
    ];
    format!("(?:{})", alts.join("|"))
}

/// An RFC 1123 host name label of at most `max` characters: letters, digits, hyphens,
/// not starting or ending with a hyphen. Labels with `--` in the third and fourth
/// positions are left out: RFC 5891 section 4.2.3.1 reserves them for A-labels
/// (`xn--...`), whose Punycode validity is no regular language.
fn label(max: usize) -> String {
    let a = "[A-Za-z0-9]";
    let h = "[A-Za-z0-9\\-]";
    format!(
        "{a}(?:{a}|{h}{a}|{h}{h}{a}|{h}(?:{a}{h}|-{a}){h}{{0,{}}}{a})?",
        max - 5
    )
}

/// Dot-separated labels: for each shape `(max label length, min labels, max labels)`.
fn labels(shapes: &[(usize, usize, usize)]) -> String {
    let alts: Vec<String> = shapes
        .iter()
        .map(|&(len, lo, hi)| {
            let l = label(len);
            format!(r"{l}(?:\.{l}){{{},{}}}", lo - 1, hi - 1)
        })
        .collect();
    format!("(?:{})", alts.join("|"))
}

/// RFC 1123 section 2.1 host names: dot-separated labels of at most 63 characters, at
/// most 253 characters in all. The total is not counted directly (that would multiply
/// the automaton's states); instead two shapes whose totals cannot exceed 253 are
/// accepted: up to 3 labels of up to 63 characters, or 4 to 8 labels of up to 30.
pub(crate) fn hostname() -> String {
    labels(&[(63, 1, 3), (30, 4, 8)])
}

/// RFC 5322 section 3.2.3 `atext`.
const ATEXT: &str = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-]";

/// RFC 5321 section 4.1.2 `Mailbox`: a dot-string or quoted-string local part, `@`, and
/// a domain or an IPv4 / IPv6 address literal (section 4.1.3). Section 4.5.3.1 limits
/// the local part to 64 characters and the path to 256 (so the mailbox to 254): local
/// parts are one atom of up to 64 characters, two of up to 31 and 32, or three or four
/// of up to 15, or a quoted string of up to 31 characters or pairs; domains are shaped
/// like [`hostname`]s of at most 185 characters (up to 3 labels of 61, or 4 to 6 of 30).
pub(crate) fn email() -> String {
    let a = ATEXT;
    let dot_string =
        format!(r"{a}{{1,64}}|{a}{{1,31}}\.{a}{{1,32}}|{a}{{1,15}}(?:\.{a}{{1,15}}){{2,3}}");
    let quoted = r#""(?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\[\x20-\x7E]){0,31}""#;
    let domain = labels(&[(61, 1, 3), (30, 4, 6)]);
    format!(
        r"(?:{dot_string}|{quoted})@(?:{domain}|\[{}\]|\[IPv6:{}\])",
        ipv4(),
        ipv6()
    )
}

/// RFC 3986 section 2.3 `unreserved`.
const UNRESERVED: &str = "A-Za-z0-9\\-._~";
/// RFC 3986 section 2.2 `sub-delims`.
const SUB_DELIMS: &str = "!$&'()*+,;=";
/// RFC 3986 section 2.1 `pct-encoded`.
const PCT_ENCODED: &str = "%[0-9A-Fa-f]{2}";

/// RFC 3987 section 2.2 `iunreserved`: [`UNRESERVED`] and the `ucschar`s of the Basic
/// Multilingual Plane (the planes above are left out: a strict subset, written without
/// surrogate pairs).
const IUNRESERVED: &str = "A-Za-z0-9\\-._~\\u00A0-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFEF";

/// RFC 3986 section 3.3 `pchar`, or RFC 3987 `ipchar` with `unreserved` = [`IUNRESERVED`].
fn pchar_with(unreserved: &str) -> String {
    format!("(?:[{unreserved}{SUB_DELIMS}:@]|{PCT_ENCODED})")
}

/// RFC 3986 section 3.2 `authority` (userinfo, host with IP literals, port), with
/// `unreserved` = [`UNRESERVED`], or RFC 3987 `iauthority` with [`IUNRESERVED`].
fn authority(unreserved: &str) -> String {
    let userinfo = format!("(?:[{unreserved}{SUB_DELIMS}:]|{PCT_ENCODED})*");
    let reg_name = format!("(?:[{unreserved}{SUB_DELIMS}]|{PCT_ENCODED})*");
    let ip_future = format!("[Vv][0-9A-Fa-f]+\\.[{UNRESERVED}{SUB_DELIMS}:]+");
    let ip_literal = format!(r"\[(?:{}|{ip_future})\]", ipv6());
    let host = format!("(?:{ip_literal}|{}|{reg_name})", ipv4());
    format!("(?:{userinfo}@)?{host}(?::[0-9]*)?")
}

/// RFC 3986 section 3 `URI` (absolute, with a scheme), or RFC 3987 `IRI` with
/// `unreserved` = [`IUNRESERVED`] (`iprivate` characters in queries left out).
fn absolute(unreserved: &str) -> String {
    let pchar = pchar_with(unreserved);
    let segment = format!("{pchar}*");
    let segment_nz = format!("{pchar}+");
    let path_abempty = format!("(?:/{segment})*");
    let path_absolute = format!("/(?:{segment_nz}(?:/{segment})*)?");
    let path_rootless = format!("{segment_nz}(?:/{segment})*");
    let hier_part = format!(
        "(?://{}{path_abempty}|{path_absolute}|{path_rootless}|)",
        authority(unreserved)
    );
    let query = format!(r"(?:{pchar}|[/?])*");
    format!(r"[A-Za-z][A-Za-z0-9+\-.]*:{hier_part}(?:\?{query})?(?:#{query})?")
}

/// RFC 3986 section 4.1 `URI-reference` (an absolute URI or a relative reference, 4.2),
/// or RFC 3987 `IRI-reference` with `unreserved` = [`IUNRESERVED`].
fn reference(unreserved: &str) -> String {
    let pchar = pchar_with(unreserved);
    let segment = format!("{pchar}*");
    let segment_nz = format!("{pchar}+");
    let segment_nz_nc = format!("(?:[{unreserved}{SUB_DELIMS}@]|{PCT_ENCODED})+");
    let path_abempty = format!("(?:/{segment})*");
    let path_absolute = format!("/(?:{segment_nz}(?:/{segment})*)?");
    let path_noscheme = format!("{segment_nz_nc}(?:/{segment})*");
    let relative_part = format!(
        "(?://{}{path_abempty}|{path_absolute}|{path_noscheme}|)",
        authority(unreserved)
    );
    let query = format!(r"(?:{pchar}|[/?])*");
    format!(
        r"(?:{}|{relative_part}(?:\?{query})?(?:#{query})?)",
        absolute(unreserved)
    )
}

/// RFC 3986 section 3 `URI` (absolute, with a scheme; ASCII only).
pub(crate) fn uri() -> String {
    absolute(UNRESERVED)
}

/// RFC 3986 section 4.1 `URI-reference`.
pub(crate) fn uri_reference() -> String {
    reference(UNRESERVED)
}

/// RFC 3987 section 2.2 `IRI`: a [`uri`] whose unreserved characters include the BMP's
/// `ucschar`s.
pub(crate) fn iri() -> String {
    absolute(IUNRESERVED)
}

/// RFC 3987 section 2.2 `IRI-reference`.
pub(crate) fn iri_reference() -> String {
    reference(IUNRESERVED)
}

/// RFC 6570 section 2 URI Template (level 4): literals (section 2.1, BMP `ucschar`s, no
/// `iprivate`) and expressions `{op? varspec (, varspec)*}` with prefix (`:1`-`:9999`)
/// and explode (`*`) modifiers. Exact otherwise.
pub(crate) fn uri_template() -> String {
    let literal = format!(
        "(?:[\\x21\\x23\\x24\\x26\\x28-\\x3B\\x3D\\x41-\\x5B\\x5D\\x5F\\x61-\\x7A\\x7E\\u00A0-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFEF]|{PCT_ENCODED})"
    );
    let varchar = format!("(?:[A-Za-z0-9_]|{PCT_ENCODED})");
    let varname = format!("{varchar}(?:\\.?{varchar})*");
    let varspec = format!("{varname}(?::[1-9][0-9]{{0,3}}|\\*)?");
    let expression = format!("\\{{[+#./;?&=,!@|]?{varspec}(?:,{varspec})*\\}}");
    format!("(?:{literal}|{expression})*")
}

/// OpenAPI `byte`: RFC 4648 section 4 base64, padded.
pub(crate) const BASE64: &str = "(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?";

/// JSON Schema `regex` (an ECMA-262 regular expression): a strict subset that ECMA-262
/// (with or without the `u` flag) and Python's `re`, the two dialects validators use,
/// both accept. Whether a text is a regular expression is no regular language (groups
/// nest), so groups nest at most 3 deep; printable ASCII literals; classes of literals
/// (`-` first or last), ordered ranges between digits or letters of one case, and class escapes; quantifiers
/// `*`, `+`, `?`, `{n}`, `{n,}` and `{n,m}` with `n <= m` (digit counts kept small),
/// lazy or not, after anything but an assertion (`^`, `$`, `\b`, `\B`); no
/// backreferences, look-around or named groups.
pub(crate) fn regex_syntax() -> String {
    // Printable ASCII but the syntax characters `$()*+.?[\]^{|}`.
    let literal = r"[\x20-\x23\x25-\x27\x2C\x2D\x2F-\x3E\x40-\x5A\x5F-\x7A\x7E]";
    let escape = r"\\[dDwWsSnrtfv^$\\.*+?()\[\]{}|/]";
    let assertion = r"\\[bB]|\^|\$";
    let mut ranges = Vec::new();
    for (lo, hi) in [('0', '9'), ('A', 'Z'), ('a', 'z')] {
        for c in lo..=hi {
            ranges.push(format!("{c}-[{c}-{hi}]"));
        }
    }
    let class_item = format!(
        r"{}|\\[dDwWsSnrtfvb\\\]\[^\-]|[\x20-\x2C\x2E-\x5A\x5F-\x7E]",
        ranges.join("|")
    );
    // A `-` is a literal first or last.
    let class = format!(r"\[\^?-?(?:{class_item})+-?\]");
    let mut ordered = Vec::new();
    for n in 0..=9 {
        ordered.push(format!("{n},[{n}-9]"));
    }
    let quantifier = format!(
        r"(?:[*+?]|\{{[0-9]{{1,4}},?\}}|\{{(?:{}|[0-9],[1-9][0-9]{{1,3}})\}})\??",
        ordered.join("|")
    );
    let mut alternation = String::new(); // depth 0: no groups inside
    for depth in 0..=3 {
        let group = if depth == 0 {
            String::new()
        } else {
            format!(r"|\((?:\?:)?{alternation}\)")
        };
        let atom = format!(r"(?:{literal}|\.|{escape}|{class}{group})");
        let piece = format!("(?:{atom}(?:{quantifier})?|{assertion})");
        // `piece* (| piece*)*`, written once: pieces and bars in any order.
        alternation = format!(r"(?:{piece}|\|)*");
    }
    alternation
}

/// RFC 6901 section 3 JSON Pointer (string form).
pub(crate) const JSON_POINTER: &str = "(?:/(?:[^~/]|~[01])*)*";

/// draft-handrews-relative-json-pointer-01 section 3: a non-negative integer, then `#`
/// or a JSON Pointer.
pub(crate) const RELATIVE_JSON_POINTER: &str = "(?:0|[1-9][0-9]*)(?:#|(?:/(?:[^~/]|~[01])*)*)";

/// The formats supported, their ECMA pattern (anchored whole).
pub(crate) fn format_pattern(name: &str) -> Option<String> {
    Some(match name {
        "date-time" => date_time(),
        "date" => date(),
        "time" => TIME.to_string(),
        "duration" => DURATION.to_string(),
        "uuid" => UUID.to_string(),
        "email" => email(),
        "uri" => uri(),
        "ipv4" => ipv4(),
        "ipv6" => ipv6(),
        "hostname" => hostname(),
        "uri-reference" => uri_reference(),
        "iri" => iri(),
        "iri-reference" => iri_reference(),
        "uri-template" => uri_template(),
        "idn-hostname" => hostname(),
        "idn-email" => email(),
        "regex" => regex_syntax(),
        "byte" => BASE64.to_string(),
        "json-pointer" => JSON_POINTER.to_string(),
        "relative-json-pointer" => RELATIVE_JSON_POINTER.to_string(),
        _ => return None,
    })
}

/// The names [`format_pattern`] knows, for messages and docs.
pub(crate) const FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "uuid",
    "email",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
    "ipv4",
    "ipv6",
    "hostname",
    "idn-hostname",
    "idn-email",
    "json-pointer",
    "relative-json-pointer",
    "regex",
    "byte",
];
