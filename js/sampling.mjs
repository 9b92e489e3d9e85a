// Sampling from masked logits, as llama.cpp's sampler chain does it: shared by
// logitmask/node-llama-cpp (its full path) and logitmask/transformers (generateWithForcedText).
// No runtime is imported here.

export const DEFAULT_SAMPLING = Object.freeze({ temperature: 0.7, topK: 40, topP: 0.95, minP: 0 });

/**
 * Samples a token id from logits where disallowed ids are -Infinity, as llama.cpp's chain does:
 * top-k, then top-p and min-p on the untempered softmax, then temperature; temperature <= 0 is
 * greedy (the lowest id among equal maxima). Returns -1 when no logit is finite.
 */
export function sampleLogits(logits, length, random, { temperature, topK, topP, minP }) {
  let best = -1;
  let bestLogit = -Infinity;
  let count = 0;
  for (let i = 0; i < length; i++) {
    const v = logits[i];
    if (v > -Infinity) {
      count++;
      if (v > bestLogit) {
        bestLogit = v;
        best = i;
      }
    }
  }
  if (best < 0) return -1;
  if (!(temperature > 0) || count === 1) return best;
  let kept; // candidate ids; sorted by logit (descending) when a cut-off needs the order
  if (topK > 0 && topK < count) kept = topKIds(logits, length, topK);
  else {
    kept = [];
    for (let i = 0; i < length; i++) if (logits[i] > -Infinity) kept.push(i);
    if (topP < 1) kept.sort((a, b) => logits[b] - logits[a] || a - b);
  }
  if (topP < 1) {
    let z = 0;
    for (const id of kept) z += Math.exp(logits[id] - bestLogit);
    let cum = 0;
    let n = 0;
    while (n < kept.length) {
      cum += Math.exp(logits[kept[n]] - bestLogit) / z;
      n++;
      if (cum >= topP) break;
    }
    kept.length = n;
  }
  if (minP > 0) {
    const cut = bestLogit + Math.log(minP); // p_i >= minP * p_max  <=>  l_i >= l_max + ln(minP)
    kept = kept.filter((id) => logits[id] >= cut);
  }
  const weights = new Float64Array(kept.length);
  let sum = 0;
  for (let j = 0; j < kept.length; j++) {
    sum += Math.exp((logits[kept[j]] - bestLogit) / temperature);
    weights[j] = sum;
  }
  const u = random() * sum;
  for (let j = 0; j < kept.length; j++) if (u < weights[j]) return kept[j];
  return kept[kept.length - 1];
}

/** The k ids with the largest finite logits, largest first (the lower id first among equals),
 *  in one pass with a small sorted buffer: no sort of a whole vocabulary. */
function topKIds(logits, length, k) {
  const ids = new Int32Array(k);
  const vals = new Float64Array(k);
  let n = 0;
  for (let i = 0; i < length; i++) {
    const v = logits[i];
    if (!(v > -Infinity) || (n === k && v <= vals[k - 1])) continue;
    let j = n < k ? n++ : k - 1;
    while (j > 0 && vals[j - 1] < v) {
      ids[j] = ids[j - 1];
      vals[j] = vals[j - 1];
      j--;
    }
    ids[j] = i;
    vals[j] = v;
  }
  return Array.from(ids.subarray(0, n));
}
