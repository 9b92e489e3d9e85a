//! The versioned binary form of an [`Index`](super::Index): the wire format only.
//!
//! ```text
//! "LOGITMSK"  magic                     u32  format version (1)
//! u64  vocabulary fingerprint           u32  vocabulary size
//! u32  pattern length, pattern bytes
//! u32  class count (stride)  u32 state count  u32 start state
//! [u8; 256] byte classes
//! per state: LEB128 count of non-dead transitions, then (u8 class, LEB128 target) pairs
//! bitset of final states          u8 has-pruning flag (+ bitset of accepted end states)
//! u32  distinct rows; each: u8 form (0 ids, 1 bitset), u32 length,
//!      ids as LEB128 deltas | bitset words as u32
//! u32  states with rows; each: u32 state, u32 row
//! u64  FNV-1a checksum of everything before it
//! ```
//!
//! The compact DFA itself is stored (not the pattern recompiled), so loading does not
//! determinize and does not depend on regex-automata's numbering. Everything read is
//! checked: sizes against the bytes left and the caller's limits before allocating, ids
//! against the vocabulary, transitions against the state count; any failure is a
//! [`ErrorKind::CorruptIndex`] error, never a panic. The checksum only catches accidents
//! (it is unkeyed): the stored rows are a claim that [`check_rows`] verifies against rows
//! recomputed from the stored automaton (docs/reliability.md).

use crate::automaton::expr::FastMap;
use std::sync::Arc;

use super::rows::StateRows;
use super::token_set::{Stored, TokenSet};
use crate::automaton::Dfa;
use crate::bits::mask_words;
use crate::error::{Error, ErrorKind, Result};
use crate::vocabulary::{Fnv64, Vocabulary};

const MAGIC: &[u8; 8] = b"LOGITMSK";
const VERSION: u32 = 1;

/// The bytes of an index: its vocabulary's fingerprint, `pattern`, the complete `dfa`,
/// the pruning (`end_ok`), and every `(state, row)`.
pub(super) fn encode(
    vocab: &Vocabulary,
    pattern: &str,
    dfa: &Dfa,
    end_ok: Option<&[bool]>,
    states: &mut dyn Iterator<Item = (u32, &Arc<TokenSet>)>,
) -> Vec<u8> {
    let mut w = Writer(Vec::new());
    w.0.extend_from_slice(MAGIC);
    w.u32(VERSION);
    w.u64(vocab.fingerprint());
    w.u32(vocab.size() as u32);
    w.u32(pattern.len() as u32);
    w.0.extend_from_slice(pattern.as_bytes());
    write_dfa(&mut w, dfa, end_ok);
    write_rows(&mut w, states);
    let mut h = Fnv64::new();
    h.write(&w.0);
    w.u64(h.finish());
    w.0
}

fn write_dfa(w: &mut Writer, dfa: &Dfa, end_ok: Option<&[bool]>) {
    w.u32(dfa.class_count() as u32);
    w.u32(dfa.state_count() as u32);
    w.u32(dfa.start());
    w.0.extend_from_slice(dfa.classes());
    // Transitions row by row, sparse: most classes lead to the dead state.
    for row in dfa.transitions().chunks(dfa.class_count()) {
        w.leb(row.iter().filter(|&&t| t != 0).count() as u32);
        for (class, &t) in row.iter().enumerate().filter(|(_, &t)| t != 0) {
            w.u8(class as u8);
            w.leb(t);
        }
    }
    w.bits(dfa.finals());
    match end_ok {
        Some(ok) => {
            w.u8(1);
            w.bits(ok);
        }
        None => w.u8(0),
    }
}

/// Distinct rows in first-use order, then (state, row) pairs.
fn write_rows(w: &mut Writer, states: &mut dyn Iterator<Item = (u32, &Arc<TokenSet>)>) {
    let mut row_ids: FastMap<*const TokenSet, u32> = FastMap::default();
    let mut rows: Vec<&Arc<TokenSet>> = Vec::new();
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for (s, row) in states {
        let id = *row_ids.entry(Arc::as_ptr(row)).or_insert_with(|| {
            rows.push(row);
            rows.len() as u32 - 1
        });
        pairs.push((s, id));
    }
    w.u32(rows.len() as u32);
    for row in rows {
        match row.bits() {
            None => {
                w.u8(0);
                w.u32(row.len() as u32);
                let mut prev = 0u32;
                for id in row.iter() {
                    w.leb(id - prev);
                    prev = id;
                }
            }
            Some(bits) => {
                w.u8(1);
                w.u32(bits.len() as u32);
                for &word in bits.iter() {
                    w.u32(word);
                }
            }
        }
    }
    w.u32(pairs.len() as u32);
    for (s, r) in pairs {
        w.u32(s);
        w.u32(r);
    }
}

/// What [`decode`] reads: everything an eager index is made of.
pub(super) struct Decoded {
    pub(super) pattern: String,
    pub(super) dfa: Dfa,
    pub(super) end_ok: Option<Vec<bool>>,
    pub(super) rows: StateRows,
}

/// Reads bytes written by [`encode`] for `vocab`, checking everything; the transition
/// table may take at most `max_table_bytes` (the DFA size limit the index was built with).
pub(super) fn decode(
    bytes: &[u8],
    vocab: &Vocabulary,
    max_table_bytes: Option<usize>,
) -> Result<Decoded> {
    if bytes.len() < MAGIC.len() + 4 + 8 || &bytes[..8] != MAGIC {
        return Err(corrupt(
            "not a logitmask index (missing the LOGITMSK header)",
        ));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
    if version != VERSION {
        return Err(corrupt(&format!(
            "index format version {version} is not supported (this build reads {VERSION})"
        )));
    }
    let (body, tail) = bytes.split_at(bytes.len() - 8);
    let mut h = Fnv64::new();
    h.write(body);
    if h.finish() != u64::from_le_bytes(tail.try_into().unwrap()) {
        return Err(corrupt(
            "checksum mismatch: the index bytes are corrupt or truncated",
        ));
    }
    let mut r = Reader {
        bytes: body,
        pos: 12,
    };
    let fingerprint = r.u64()?;
    let vocab_size = r.u32()? as usize;
    if fingerprint != vocab.fingerprint() || vocab_size != vocab.size() {
        return Err(Error::new(
            ErrorKind::VocabularyMismatch,
            format!(
                "the index was built for another vocabulary (size {vocab_size}, fingerprint {fingerprint:016x}); this one has size {} and fingerprint {:016x}",
                vocab.size(),
                vocab.fingerprint()
            ),
        ));
    }
    let pattern_len = r.u32()? as usize;
    let pattern = String::from_utf8(r.take(pattern_len)?.to_vec())
        .map_err(|_| corrupt("the pattern is not UTF-8"))?;
    let (dfa, end_ok) = read_dfa(&mut r, max_table_bytes)?;
    let distinct = read_rows(&mut r, vocab_size)?;
    let n = dfa.state_count();
    let rows = StateRows::new(n);
    let pair_count = r.u32()? as usize;
    r.ensure(pair_count.saturating_mul(8))?;
    for _ in 0..pair_count {
        let s = r.u32()? as usize;
        let row = r.u32()? as usize;
        if s == 0 || s >= n || row >= distinct.len() {
            return Err(corrupt("state or row number out of range"));
        }
        if !rows.set(s as u32, distinct[row].clone()) {
            return Err(corrupt("a state has two rows"));
        }
    }
    if r.pos != body.len() {
        return Err(corrupt("trailing bytes after the index"));
    }
    if rows.get(dfa.start()).is_none() {
        return Err(corrupt("the start state has no row"));
    }
    Ok(Decoded {
        pattern,
        dfa,
        end_ok,
        rows,
    })
}

fn read_dfa(r: &mut Reader, max_table_bytes: Option<usize>) -> Result<(Dfa, Option<Vec<bool>>)> {
    let stride = r.u32()? as usize;
    let n = r.u32()? as usize;
    let start = r.u32()?;
    let classes: [u8; 256] = r.take(256)?.try_into().unwrap();
    if stride == 0 || stride > 256 {
        return Err(corrupt("byte class count out of range"));
    }
    // At least one byte (the live-transition count) per state.
    r.ensure(n)?;
    // A few bytes of input can claim a table of gigabytes (n x stride x 4): bounded by the
    // DFA size limit before anything is allocated, and the allocation itself may fail.
    let table_bytes = n.saturating_mul(stride).saturating_mul(4);
    if table_bytes > max_table_bytes.unwrap_or(usize::MAX) {
        return Err(Error::new(
            ErrorKind::DfaTooLarge,
            format!(
                "cannot load index: its transition table takes {table_bytes} bytes, over dfa_size_limit / dfaSizeLimit {}",
                crate::error::limit(max_table_bytes)
            ),
        ));
    }
    let mut trans = Vec::new();
    trans
        .try_reserve_exact(n * stride)
        .map_err(|_| corrupt(&format!("cannot allocate {table_bytes} bytes")))?;
    trans.resize(n * stride, 0u32);
    for row in trans.chunks_mut(stride) {
        let live = r.leb()? as usize;
        if live > stride {
            return Err(corrupt("more transitions than byte classes"));
        }
        for _ in 0..live {
            let class = r.u8()? as usize;
            if class >= stride {
                return Err(corrupt("transition on an unknown byte class"));
            }
            row[class] = r.leb()?;
        }
    }
    let finals = r.bits(n)?;
    let dfa = Dfa::from_parts(classes, stride, trans, finals, start).map_err(|e| corrupt(&e))?;
    let end_ok = match r.u8()? {
        0 => None,
        1 => Some(r.bits(n)?),
        _ => return Err(corrupt("bad pruning flag")),
    };
    Ok((dfa, end_ok))
}

fn read_rows(r: &mut Reader, vocab_size: usize) -> Result<Vec<Arc<TokenSet>>> {
    let row_count = r.u32()? as usize;
    r.ensure(row_count.saturating_mul(5))?;
    let words = mask_words(vocab_size);
    let mut rows = Vec::with_capacity(row_count);
    for _ in 0..row_count {
        let form = r.u8()?;
        let len = r.u32()? as usize;
        let stored = match form {
            0 => {
                r.ensure(len)?; // at least one byte per id
                let mut ids = Vec::with_capacity(len);
                let mut prev = 0u32;
                for k in 0..len {
                    let delta = r.leb()?;
                    if k > 0 && delta == 0 {
                        return Err(corrupt("repeated id in a row"));
                    }
                    prev = prev
                        .checked_add(delta)
                        .ok_or_else(|| corrupt("id overflow in a row"))?;
                    ids.push(prev);
                }
                Stored::Ids(ids)
            }
            1 => {
                if len != words {
                    return Err(corrupt("bitset row has the wrong length"));
                }
                let raw = r.take(len.checked_mul(4).ok_or_else(|| corrupt("row too large"))?)?;
                Stored::Bits(
                    raw.chunks_exact(4)
                        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                        .collect(),
                )
            }
            _ => return Err(corrupt("bad row form")),
        };
        rows.push(Arc::new(
            TokenSet::from_stored(stored, vocab_size).map_err(|e| corrupt(&e))?,
        ));
    }
    Ok(rows)
}

/// Refuses loaded rows that disagree with the rows `rebuilt` from the loaded automaton
/// (and the same for the pruning flags): a forged index is refused, never one whose masks
/// allow a token that `advance` then refuses.
pub(super) fn check_rows(
    loaded: &StateRows,
    loaded_end_ok: Option<&[bool]>,
    rebuilt: &StateRows,
    rebuilt_end_ok: Option<&[bool]>,
) -> Result<()> {
    if loaded_end_ok != rebuilt_end_ok {
        return Err(corrupt("the pruned end states disagree with the automaton"));
    }
    for s in 0..loaded.len() as u32 {
        let same = match (loaded.get(s), rebuilt.get(s)) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
            _ => false,
        };
        if !same {
            return Err(corrupt(&format!(
                "the row of state {s} disagrees with the automaton"
            )));
        }
    }
    Ok(())
}

fn corrupt(what: &str) -> Error {
    Error::new(
        ErrorKind::CorruptIndex,
        format!("cannot load index: {what}"),
    )
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn leb(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn bits(&mut self, flags: &[bool]) {
        for chunk in flags.chunks(8) {
            self.0.push(
                chunk
                    .iter()
                    .enumerate()
                    .fold(0u8, |b, (i, &f)| b | (u8::from(f) << i)),
            );
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn ensure(&self, n: usize) -> Result<()> {
        if self.bytes.len() - self.pos < n {
            Err(corrupt(&format!(
                "truncated: {n} more bytes needed at offset {}",
                self.pos
            )))
        } else {
            Ok(())
        }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        self.ensure(n)?;
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn leb(&mut self) -> Result<u32> {
        let mut v = 0u32;
        for shift in (0..35).step_by(7) {
            let b = self.u8()?;
            let part = u32::from(b & 0x7f);
            if shift == 28 && part > 0x0f {
                return Err(corrupt("varint overflow"));
            }
            v |= part << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(corrupt("varint too long"))
    }
    fn bits(&mut self, n: usize) -> Result<Vec<bool>> {
        let raw = self.take(n.div_ceil(8))?;
        Ok((0..n).map(|i| raw[i / 8] >> (i % 8) & 1 == 1).collect())
    }
}
