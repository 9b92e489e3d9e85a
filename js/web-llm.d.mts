// Types of `logitmask/web-llm` (js/web-llm.mjs). Structurally a `LogitProcessor` of
// @mlc-ai/web-llm (which is not a dependency): assignable to it.
import type { Guide, GuideOptions, Index } from "logitmask";

export class LogitmaskLogitProcessor {
  constructor(index: Index, options?: GuideOptions);
  /** The guide that tracks the generation. */
  readonly guide: Guide;
  /** Sets disallowed logits to -Infinity in place and returns the same array. */
  processLogits(logits: Float32Array): Float32Array;
  /** Advances the guide with the sampled token (a LogitmaskError "TokenNotAllowed" otherwise). */
  processSampledToken(token: number): void;
  /** Back to the start of the pattern. */
  resetState(): void;
  free(): void;
}
export default LogitmaskLogitProcessor;
