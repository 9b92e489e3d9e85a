// Types of `logitmask/web-llm` (js/web-llm.mjs). Structurally a `LogitProcessor` of
// @mlc-ai/web-llm (which is not a dependency): assignable to it.
import type { GrammarOptions, Guide, GuideOptions, Index, IndexOptions, JsonSchemaOptions, StructuralTags, Vocabulary } from "logitmask";

export class LogitmaskLogitProcessor {
  constructor(index: Index, options?: GuideOptions);
  /** A processor for a grammar (GBNF text by default, or `{ grammar, syntax? }`), whose lazy
   *  index it builds with Index.fromGrammar's options and owns (`free()` frees it). */
  static fromGrammar(
    grammar: string | { grammar: string; syntax?: GrammarOptions["syntax"] },
    vocabulary: Vocabulary,
    options?: IndexOptions & GrammarOptions,
    guideOptions?: GuideOptions,
  ): LogitmaskLogitProcessor;
  /** A processor for structural tags (e.g. `structuralTagsFromTools(tools)` of logitmask/tools),
   *  whose lazy index it builds with Index.fromStructuralTags' options and owns. */
  static fromStructuralTags(
    spec: StructuralTags,
    vocabulary: Vocabulary,
    options?: IndexOptions & JsonSchemaOptions,
    guideOptions?: GuideOptions,
  ): LogitmaskLogitProcessor;
  /** The guide that tracks the generation. */
  readonly guide: Guide;
  /** Sets disallowed logits to -Infinity in place and returns the same array. */
  processLogits(logits: Float32Array): Float32Array;
  /** Advances the guide with the sampled token (a LogitmaskError "TokenNotAllowed" otherwise). */
  processSampledToken(token: number): void;
  /** Back to the start of the pattern. */
  resetState(): void;
  /** Frees the guide, and the index if fromGrammar or fromStructuralTags built it. */
  free(): void;
}
export default LogitmaskLogitProcessor;
