import { LogitsProcessor } from "@huggingface/transformers";
import type { Tensor } from "@huggingface/transformers";
import type { Guide, Index } from "logitmask";

/**
 * A transformers.js logits processor that masks each step's logits to the tokens a logitmask
 * Guide allows: `model.generate({ ...inputs, logits_processor: [new LogitmaskLogitsProcessor(index)] })`.
 *
 * From an `Index`: one Guide per batch row, made at the first step of every generation. From a
 * `Guide` or an array of Guides: one per row (the batch size is their number), used as they
 * stand for the first generation and reset at every later one.
 *
 * A new generation starts when `input_ids` is another array than at the previous step and is
 * not that step's rows grown by at most one token; `reset()` forces one. Errors are `Error`s
 * with `name` "LogitmaskError" and a `code` (e.g. "TokenNotAllowed" when a row holds a token
 * its Guide does not allow).
 */
export class LogitmaskLogitsProcessor extends LogitsProcessor {
  constructor(source: Index | Guide | readonly Guide[]);
  /** The Guide of each batch row (empty before the first step when built from an Index). */
  readonly guides: Guide[];
  /** Tokens of prompt in every row of the current generation (null before its first step). */
  readonly promptLength: number | null;
  /** Generated tokens each row's Guide has consumed in the current generation. */
  readonly generatedLengths: number[];
  /** The next call starts a new generation. */
  reset(): void;
  /** Frees the Guides this processor made (not the ones given to it). */
  free(): void;
  /** Advances each row's Guide to the end of its row, then masks that row's logits in place. */
  _call(input_ids: bigint[][] | number[][], logits: Tensor): Tensor;
}
export default LogitmaskLogitsProcessor;
