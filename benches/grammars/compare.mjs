// The mask comparison's summary, the same for every anchor (benches/grammars/xgrammar.cjs
// here; benches/anchors/llguidance_grammars.py writes the same fields in Python).

/// diffs: [{walk, step, tokens (the walk's ids before this step), d: diffMasks(...)}];
/// refusals: [{walk, step, token}] (a token of logitmask's walk the anchor refused);
/// bytesOf: id -> Buffer of the token's bytes.
export function summarizeDiffs(diffs, refusals, bytesOf) {
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  // A token's text, or its bytes in hex when they are not UTF-8 on their own.
  const show = (id) => {
    const b = bytesOf[id];
    if (!b) return `#${id}`;
    try {
      return JSON.stringify(utf8.decode(b));
    } catch {
      return `${id}:<${b.toString("hex")}>`;
    }
  };
  const text = (ids) => Buffer.concat(ids.map((id) => bytesOf[id] ?? Buffer.alloc(0))).toString("utf8");
  const out = {
    steps_compared: diffs.length,
    steps_differing_text: 0,
    steps_differing_eos: 0,
    steps_differing_special: 0,
    text_ids_ours_only: 0,
    text_ids_theirs_only: 0,
    examples: [],
    refusals: refusals.map((r) => ({ ...r, token_text: show(r.token) })),
  };
  for (const { walk, step, tokens, d } of diffs) {
    const t = d.oursOnly.text.length + d.theirsOnly.text.length;
    if (t) out.steps_differing_text++;
    if (d.oursOnly.eos.length + d.theirsOnly.eos.length) out.steps_differing_eos++;
    if (d.oursOnly.special.length + d.theirsOnly.special.length) out.steps_differing_special++;
    out.text_ids_ours_only += d.oursOnly.text.length;
    out.text_ids_theirs_only += d.theirsOnly.text.length;
    if ((t || d.oursOnly.eos.length + d.theirsOnly.eos.length) && out.examples.length < 6) {
      out.examples.push({
        walk,
        step,
        text_before: text(tokens).slice(-60),
        ours_only: d.oursOnly.text.slice(0, 6).map(show),
        ours_only_n: d.oursOnly.text.length,
        theirs_only: d.theirsOnly.text.slice(0, 6).map(show),
        theirs_only_n: d.theirsOnly.text.length,
        eos_ours_only: d.oursOnly.eos,
        eos_theirs_only: d.theirsOnly.eos,
      });
    }
  }
  return out;
}
