//! GPT-2's byte-level alphabet: every byte has a printable stand-in character.
//!
//! Byte-level BPE tokenizers (GPT-2, Llama 3, Qwen, SmolLM2, and Hugging Face's
//! `ByteLevel` pre-tokenizer/decoder) spell each token with one character per byte, so
//! that no token contains spaces, control bytes or partial UTF-8. Bytes that are
//! printable Latin-1 (`!`..=`~`, `¡`..=`¬`, `®`..=`ÿ`) stand for themselves; the other 68
//! bytes map, in increasing order, to U+0100, U+0101, ... U+0143. So space (0x20) is
//! `Ġ` (U+0120), newline (0x0A) is `Ċ` (U+010A), tab is `ĉ`, and `"ĠO"` is the two bytes
//! `[0x20, 0x4F]`:
//!
//! ```
//! use logitmask::tokenizer::byte_level;
//! assert_eq!(byte_level::decode("ĠO"), Some(vec![0x20, 0x4F]));
//! assert_eq!(byte_level::decode("ĊĊ"), Some(b"\n\n".to_vec()));
//! // "é" (0xC3 0xA9 in UTF-8) as a byte-level token: one character per byte.
//! assert_eq!(byte_level::decode("Ã©"), Some("é".as_bytes().to_vec()));
//! assert_eq!(byte_level::encode(" O"), "ĠO");
//! assert_eq!(byte_level::decode("a b"), None); // ' ' is not in the alphabet
//! ```

/// `BYTE_TO_CHAR[b]` is the code point standing for byte `b`.
const BYTE_TO_CHAR: [u16; 256] = byte_to_char_table();

/// `CHAR_TO_BYTE[c]` is the byte code point `c` stands for, or `NONE`. Every stand-in
/// is below U+0144.
const CHAR_TO_BYTE: [u16; 0x144] = char_to_byte_table();

const NONE: u16 = u16::MAX;

const fn printable(b: u8) -> bool {
    matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF)
}

const fn byte_to_char_table() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut next = 256u16;
    let mut b = 0usize;
    while b < 256 {
        if printable(b as u8) {
            table[b] = b as u16;
        } else {
            table[b] = next;
            next += 1;
        }
        b += 1;
    }
    table
}

const fn char_to_byte_table() -> [u16; 0x144] {
    let mut table = [NONE; 0x144];
    let mut b = 0usize;
    while b < 256 {
        table[BYTE_TO_CHAR[b] as usize] = b as u16;
        b += 1;
    }
    table
}

/// The character that stands for byte `b` (`b' '` -> `'Ġ'`).
pub fn byte_to_char(b: u8) -> char {
    // Every table entry is below U+0144: a valid char.
    char::from_u32(u32::from(BYTE_TO_CHAR[b as usize])).unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The byte that character `c` stands for (`'Ġ'` -> `0x20`), or `None` when `c` is not
/// in the alphabet.
#[inline]
pub fn char_to_byte(c: char) -> Option<u8> {
    match CHAR_TO_BYTE.get(c as usize) {
        Some(&b) if b != NONE => Some(b as u8),
        _ => None,
    }
}

/// Decodes a byte-level token to its bytes, or `None` when a character is not in the
/// alphabet.
pub fn decode(token: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(token.len());
    decode_into(token, &mut out).then_some(out)
}

/// Appends the bytes of a byte-level token to `out`; on a character outside the
/// alphabet, leaves `out` as it was and returns false.
pub(crate) fn decode_into(token: &str, out: &mut Vec<u8>) -> bool {
    let start = out.len();
    for c in token.chars() {
        match char_to_byte(c) {
            Some(b) => out.push(b),
            None => {
                out.truncate(start);
                return false;
            }
        }
    }
    true
}

/// Spells bytes in the byte-level alphabet (the inverse of [`decode`]).
pub fn encode(bytes: impl AsRef<[u8]>) -> String {
    bytes.as_ref().iter().map(|&b| byte_to_char(b)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let spelled = encode(&all);
        assert_eq!(spelled.chars().count(), 256);
        assert_eq!(decode(&spelled), Some(all));
        assert_eq!(byte_to_char(b' '), 'Ġ');
        assert_eq!(byte_to_char(b'\n'), 'Ċ');
        assert_eq!(byte_to_char(0xAD), 'Ń'); // the soft hyphen is not printable
        assert_eq!(byte_to_char(0xFF), 'ÿ');
        assert_eq!(char_to_byte('\u{143}'), Some(0xAD));
        assert_eq!(char_to_byte('\u{144}'), None);
        assert_eq!(char_to_byte(' '), None);
        assert_eq!(char_to_byte('中'), None);
    }

    #[test]
    fn failed_decode_leaves_buffer_alone() {
        let mut out = b"x".to_vec();
        assert!(!decode_into("Ġa b", &mut out));
        assert_eq!(out, b"x");
        assert!(decode_into("Ġa", &mut out));
        assert_eq!(out, b"x a");
    }
}
