//! URIs: resolving `$id` and `$ref` against their base.

pub(super) fn strip_fragment(uri: &str) -> &str {
    uri.split_once('#').map_or(uri, |(b, _)| b)
}

pub(super) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16).map(|v| v as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// RFC 3986 section 5.2 reference resolution (enough for `$id` and `$ref`).
pub(crate) fn resolve_uri(base: &str, reference: &str) -> String {
    let has_scheme = |s: &str| {
        let mut chars = s.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && s.find(':').is_some_and(|i| {
                s[..i]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            })
    };
    if has_scheme(reference) {
        return reference.to_string();
    }
    let base_nf = strip_fragment(base);
    if reference.is_empty() {
        return base_nf.to_string();
    }
    if let Some(frag) = reference.strip_prefix('#') {
        return format!("{base_nf}#{frag}");
    }
    let scheme_end = base_nf.find(':').map_or(0, |i| i + 1);
    let scheme = &base_nf[..scheme_end];
    let rest = &base_nf[scheme_end..];
    if let Some(r) = reference.strip_prefix("//") {
        return format!("{scheme}//{r}");
    }
    let (authority, path) = if let Some(r) = rest.strip_prefix("//") {
        match r.find('/') {
            Some(i) => (format!("//{}", &r[..i]), r[i..].to_string()),
            None => (format!("//{r}"), String::new()),
        }
    } else {
        (String::new(), rest.to_string())
    };
    let path = path.split(['?']).next().unwrap_or("").to_string();
    let (ref_path, ref_tail) = match reference.find(['?', '#']) {
        Some(i) => (&reference[..i], &reference[i..]),
        None => (reference, ""),
    };
    let merged = if ref_path.starts_with('/') {
        ref_path.to_string()
    } else if ref_path.is_empty() {
        path.clone()
    } else {
        match path.rfind('/') {
            Some(i) => format!("{}{}", &path[..=i], ref_path),
            None if !authority.is_empty() => format!("/{ref_path}"),
            None => ref_path.to_string(),
        }
    };
    format!(
        "{scheme}{authority}{}{ref_tail}",
        remove_dot_segments(&merged)
    )
}

fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." => {
                if i == segments.len() - 1 {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if i == segments.len() - 1 {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_resolution() {
        assert_eq!(
            resolve_uri("http://x.y/a/b.json", "c.json"),
            "http://x.y/a/c.json"
        );
        assert_eq!(
            resolve_uri("http://x.y/a/b.json", "#/defs"),
            "http://x.y/a/b.json#/defs"
        );
        assert_eq!(resolve_uri("http://x.y/a/b.json", "/z"), "http://x.y/z");
        assert_eq!(resolve_uri("http://x.y/a/b.json", "../c"), "http://x.y/c");
        assert_eq!(resolve_uri("http://x.y/a/b.json", "urn:q"), "urn:q");
        assert_eq!(percent_decode("a%25b"), "a%b");
    }
}
