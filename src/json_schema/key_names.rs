//! Keys other than a set of names: the contents of a JSON string that differ from each
//! name, read in canonical spelling while they could still become one. Objects whose
//! undeclared keys must not take a declared name need this for every set of declared
//! names; as a regex tree it was most of the tree's nodes (about ten per character of
//! every name), so an automaton takes it as one node ([`Re::keys_not_in`]) lowered
//! here straight into expressions, the same ones the tree lowers into.

use std::rc::Rc;

use super::fragments::JSON_CHAR;
use super::json::canonical_char;
use super::re::{LowerMemo, Re};
use crate::automaton::expr::{ByteSet, ExprId, ExprSet};
use crate::error::Result;

/// The longest name (in bytes) whose other keys are made: the trie is as deep as the
/// name, and regex text, its tree and the automaton's expressions nest with it (a
/// 30,000-byte name overflowed the stack). Real schemas' names are far shorter.
pub(crate) const MAX_NAME_BYTES: usize = 512;

/// The regex of JSON string contents (between the quotes) that are none of `names`.
///
/// A trie of the names, walked character by character in canonical spelling (each
/// character has exactly one, see [`canonical_char`]); leaving the trie (a character no
/// name has there, or continuing past a name's end) makes the key differ from every name,
/// and any spelling may follow. Every string is a prefix of one of these (a finite set
/// of names leaves every string an extension outside it).
pub(crate) fn key_body_not_in(names: &[String]) -> Re {
    #[derive(Default)]
    struct Trie {
        end: bool,
        children: Vec<(char, Trie)>,
    }
    let mut root = Trie::default();
    for n in names {
        let mut t = &mut root;
        for c in n.chars() {
            let i = match t.children.iter().position(|(x, _)| *x == c) {
                Some(i) => i,
                None => {
                    t.children.push((c, Trie::default()));
                    t.children.len() - 1
                }
            };
            t = &mut t.children[i].1;
        }
        t.end = true;
    }
    fn walk(t: &Trie) -> Re {
        let mut alts = Vec::new();
        if !t.end {
            alts.push(Re::empty());
        }
        for (c, child) in &t.children {
            let mut s = String::new();
            canonical_char(*c, &mut s);
            alts.push(Re::concat([Re::lit(s), walk(child)]));
        }
        alts.push(Re::concat([
            canonical_other(t.children.iter().map(|(c, _)| *c)),
            KEY_PARTS.with(|k| k.json_chars.clone()),
        ]));
        Re::alt(alts)
    }
    walk(&root)
}

/// The parts of [`key_body_not_in`] that every trie node shares, made once per thread: one
/// node each, so that lowering makes their expressions once per schema, not once per
/// character of every declared name (each character had its own negated Unicode class
/// and 34 escape literals: about half of a typical schema's compile).
struct KeyParts {
    /// `JSON_CHAR*`: any rest of a key.
    json_chars: Re,
    /// A non-ASCII character or a canonical escape (`\"`, `\\`, the 32 control
    /// characters): regex text, so that alternations do not flatten it into each node.
    non_ascii_or_escape: Re,
    /// The unescaped ASCII characters of a JSON string (no `"`, `\`, control characters).
    plain_ascii: u128,
}

thread_local! {
    static KEY_PARTS: KeyParts = {
        let escaped = (0u32..0x20)
            .map(|c| char::from_u32(c).expect("ASCII"))
            .chain(['"', '\\']);
        let alts = escaped
            .map(|c| {
                let mut s = String::new();
                canonical_char(c, &mut s);
                Re::lit(s)
            })
            .chain([Re::class(r"[\x{80}-\x{10FFFF}]")]);
        let plain_ascii = (0x20u8..0x80)
            .filter(|&b| b != b'"' && b != b'\\')
            .fold(0u128, |bits, b| bits | 1 << b);
        KeyParts {
            json_chars: Re::star(Re::raw(JSON_CHAR)),
            non_ascii_or_escape: Re::raw(Re::alt(alts).render()),
            plain_ascii,
        }
    };
}

/// The unescaped ASCII characters of a JSON string but `except`, where every one of
/// `except` is such a character (the common case, names of plain ASCII characters):
/// then any other character is this class or the shared non-ASCII-or-escape part.
fn plain_ascii_except(plain_ascii: u128, except: &[char]) -> Option<u128> {
    let plain = |c: &char| c.is_ascii() && *c as u32 >= 0x20 && *c != '"' && *c != '\\';
    except.iter().all(plain).then(|| {
        except
            .iter()
            .fold(plain_ascii, |bits, &c| bits & !(1 << c as u32))
    })
}

/// One canonically spelled JSON string character other than those of `except`.
fn canonical_other(except: impl Iterator<Item = char>) -> Re {
    let except: Vec<char> = except.collect();
    let shared = KEY_PARTS.with(|k| {
        plain_ascii_except(k.plain_ascii, &except)
            .map(|bits| Re::alt([Re::ascii_class(bits), k.non_ascii_or_escape.clone()]))
    });
    if let Some(other) = shared {
        return other;
    }
    let mut class = String::from(r#"[^"\\\x00-\x1F"#);
    for c in &except {
        class.push_str(&super::re::class_char(*c));
    }
    class.push(']');
    let mut alts = vec![Re::class(class)];
    for c in (0u32..0x20)
        .map(|c| char::from_u32(c).unwrap())
        .chain(['"', '\\'])
    {
        if !except.contains(&c) {
            let mut s = String::new();
            canonical_char(c, &mut s);
            alts.push(Re::lit(s));
        }
    }
    Re::alt(alts)
}

/// [`key_body_not_in`] of `names` (sorted, distinct) lowered into `set`: the same
/// expressions its tree lowers into, made without the tree. The trie's nodes are
/// ranges of the sorted names that share a prefix.
pub(crate) fn lower_key_body_not_in(
    names: &[String],
    set: &mut ExprSet,
    memo: &mut LowerMemo,
) -> Result<ExprId> {
    let (json_chars, non_ascii_or_escape, plain_ascii) = KEY_PARTS.with(|k| {
        (
            k.json_chars.clone(),
            k.non_ascii_or_escape.clone(),
            k.plain_ascii,
        )
    });
    let parts = Shared {
        json_chars: json_chars.to_expr(set, memo)?,
        non_ascii_or_escape: non_ascii_or_escape.to_expr(set, memo)?,
        plain_ascii,
    };
    lower_trie(names, &parts, set, memo)
}

/// The lowered parts every trie node shares.
struct Shared {
    json_chars: ExprId,
    non_ascii_or_escape: ExprId,
    plain_ascii: u128,
}

/// A trie node being lowered: its names (sorted, all sharing their first `at` bytes),
/// where its next child's names start, and its alternatives and children so far.
struct Frame<'n> {
    names: &'n [String],
    at: usize,
    next: usize,
    alts: Vec<ExprId>,
    children: Vec<char>,
}

impl<'n> Frame<'n> {
    fn new(names: &'n [String], at: usize) -> Frame<'n> {
        // A name ending here sorts first.
        let (next, alts) = match names.first() {
            Some(first) if first.len() == at => (1, Vec::new()),
            _ => (0, vec![ExprId::EMPTY]),
        };
        Frame {
            names,
            at,
            next,
            alts,
            children: Vec::new(),
        }
    }
}

/// The trie of `names` (sorted), lowered children first. With a stack of frames, not
/// recursion: a trie is as deep as the longest name, and a schema may declare a name
/// of any length.
fn lower_trie(
    names: &[String],
    parts: &Shared,
    set: &mut ExprSet,
    memo: &mut LowerMemo,
) -> Result<ExprId> {
    let mut stack = vec![Frame::new(names, 0)];
    let mut text = String::new();
    loop {
        let top = stack.last_mut().expect("a frame");
        if let Some(first) = top.names.get(top.next) {
            // The next child: the names that continue with the same character.
            let c = first[top.at..].chars().next().expect("a longer name");
            let rest = &top.names[top.next..];
            let n = rest
                .iter()
                .position(|name| !name[top.at..].starts_with(c))
                .unwrap_or(rest.len());
            top.next += n;
            top.children.push(c);
            let child = Frame::new(&rest[..n], top.at + c.len_utf8());
            stack.push(child);
            continue;
        }
        let done = stack.pop().expect("a frame");
        let node = finish_node(done.alts, &done.children, parts, set, memo)?;
        let Some(parent) = stack.last_mut() else {
            return Ok(node);
        };
        let c = *parent.children.last().expect("the child being lowered");
        text.clear();
        canonical_char(c, &mut text);
        parent.alts.push(set.literal_then(text.as_bytes(), node));
    }
}

/// A trie node from its alternatives so far (the empty key where no name ends there,
/// each child after its character): any character but the children's, then any rest.
fn finish_node(
    mut alts: Vec<ExprId>,
    children: &[char],
    parts: &Shared,
    set: &mut ExprSet,
    memo: &mut LowerMemo,
) -> Result<ExprId> {
    let rest = if let Some(bits) = plain_ascii_except(parts.plain_ascii, children) {
        // As [`canonical_other`] makes it: the ASCII class beside the shared part.
        match memo.key_rests.get(&bits) {
            Some(&rest) => rest,
            None => {
                let class = set.set(ByteSet([bits as u64, (bits >> 64) as u64, 0, 0]));
                let other = set.union(&[class, parts.non_ascii_or_escape]);
                let rest = set.concat2(other, parts.json_chars);
                memo.key_rests.insert(bits, rest);
                rest
            }
        }
    } else {
        // A tree of its own, dropped here: lowered with a memo of its own, since the
        // memo knows nodes by address and a later node may take a freed one's.
        let other =
            canonical_other(children.iter().copied()).to_expr(set, &mut LowerMemo::default())?;
        set.concat2(other, parts.json_chars)
    };
    alts.push(rest);
    Ok(set.union(&alts))
}

/// Names a [`Re::keys_not_in`] node holds: sorted and distinct.
pub(crate) type Names = Rc<[String]>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::automaton::expr::ExprDfa;
    use crate::automaton::primitives::StepOnDemand;
    use crate::automaton::{Dfa, DfaConfig, Walk};
    use crate::test_support::Rng;

    /// Whether the lowered expression `e` matches `text` whole.
    fn lowered_matcher(set: ExprSet, e: ExprId) -> impl FnMut(&[u8]) -> bool {
        let mut dfa = ExprDfa::new(set, e, &DfaConfig::new(), u64::MAX, "keys".into()).unwrap();
        move |text| {
            matches!(
                dfa.walk(ExprDfa::START, text),
                Ok(Walk::Alive { is_match: true, .. })
            )
        }
    }

    /// The node lowered without a tree, the tree lowered, and the tree's regex text agree
    /// on every text tried: names, their prefixes and extensions, other keys, in
    /// canonical and other spellings, over names with quotes, backslashes, control,
    /// non-ASCII and astral characters, prefixes of each other and the empty name.
    #[test]
    fn lowered_without_a_tree_as_the_tree_says() {
        const CHARS: [char; 9] = ['a', 'b', 'é', '"', '\\', '\n', '\u{1}', '😀', '/'];
        // Spellings of a character: canonical first, then others JSON allows.
        let spellings = |c: char| -> Vec<String> {
            let mut canonical = String::new();
            canonical_char(c, &mut canonical);
            let mut out = vec![canonical.clone()];
            for other in [
                format!("\\u{:04x}", c as u32),
                format!("\\u{:04X}", c as u32),
            ] {
                if (c as u32) < 0x10000 && other != canonical {
                    out.push(other);
                }
            }
            if c == '/' {
                out.push("\\/".into());
            }
            out
        };
        let mut rng = Rng::new(11);
        for round in 0..60 {
            let mut names: Vec<String> = (0..1 + rng.below(6))
                .map(|_| {
                    (0..rng.below(4))
                        .map(|_| CHARS[rng.below(CHARS.len())])
                        .collect()
                })
                .collect();
            if round % 7 == 0 {
                names.push(String::new());
            }
            names.sort_unstable();
            names.dedup();
            let tree = key_body_not_in(&names);
            let text = tree.render();
            let node = Re::keys_not_in(names.clone().into());
            assert!(node.size() >= text.len() as u64, "{names:?}");
            assert_eq!(node.render(), text);
            let regex = Dfa::new(&text).unwrap();
            let mut set = ExprSet::new();
            let e = tree.to_expr(&mut set, &mut LowerMemo::default()).unwrap();
            let mut from_tree = lowered_matcher(set, e);
            let mut set = ExprSet::new();
            let e = node.to_expr(&mut set, &mut LowerMemo::default()).unwrap();
            let mut direct = lowered_matcher(set, e);
            let mut texts: Vec<(String, Option<bool>)> = Vec::new();
            for name in &names {
                let canonical: String = name
                    .chars()
                    .flat_map(|c| spellings(c).into_iter().take(1))
                    .collect();
                texts.push((canonical.clone(), Some(false)));
                let longer = names.contains(&format!("{name}a"));
                texts.push((format!("{canonical}a"), Some(!longer)));
                // Another spelling of one character: outside the canonical keys while
                // within the trie, so refused; the tree decides, the test compares.
                for (i, c) in name.chars().enumerate() {
                    for other in spellings(c).into_iter().skip(1) {
                        let spelled: String = name
                            .chars()
                            .enumerate()
                            .map(|(j, d)| {
                                if i == j {
                                    other.clone()
                                } else {
                                    spellings(d).remove(0)
                                }
                            })
                            .collect();
                        texts.push((spelled, None));
                    }
                }
            }
            for _ in 0..40 {
                let key: String = (0..rng.below(5))
                    .map(|_| CHARS[rng.below(CHARS.len())])
                    .collect();
                let spelled: String = key.chars().map(|c| spellings(c).remove(0)).collect();
                texts.push((spelled, Some(!names.contains(&key))));
            }
            for (t, want) in &texts {
                let by_regex = regex.is_match(t.as_bytes());
                if let Some(want) = want {
                    assert_eq!(by_regex, *want, "{t:?} among {names:?}");
                }
                assert_eq!(
                    from_tree(t.as_bytes()),
                    by_regex,
                    "tree lowered, {t:?} among {names:?}"
                );
                assert_eq!(
                    direct(t.as_bytes()),
                    by_regex,
                    "direct, {t:?} among {names:?}"
                );
            }
        }
    }

    /// Name sets lowered one after another with one memo (as a compile lowers every
    /// object's) give the expressions each gives lowered alone: the rests the memo
    /// keeps are keyed by everything they depend on. In one arena, equal expressions
    /// are one id.
    #[test]
    fn a_shared_memo_lowers_each_name_set_as_alone() {
        let sets: [&[&str]; 6] = [
            &["a", "ab", "b"],
            &["b", "ba"],
            &["", "a", "é"],
            &["\"", "x\\y"],
            &["abc", "abd", "b"],
            &["a", "ab", "b"],
        ];
        // The nodes live as long as the memo, as in a compile: it knows them by address.
        let nodes: Vec<Re> = sets
            .iter()
            .map(|names| Re::keys_not_in(names.iter().map(|n| n.to_string()).collect()))
            .collect();
        let mut set = ExprSet::new();
        let mut shared = LowerMemo::default();
        for (names, node) in sets.iter().zip(&nodes) {
            let with_shared = node.to_expr(&mut set, &mut shared).unwrap();
            let alone = node.to_expr(&mut set, &mut LowerMemo::default()).unwrap();
            assert_eq!(with_shared, alone, "{names:?}");
        }
        assert!(!shared.key_rests.is_empty());
    }
}
