// `logitmask/web-llm`: WebLLM's `LogitProcessor` (processLogits / processSampledToken /
// resetState) backed by a logitmask Guide, for `logitProcessorRegistry`:
//
//   const processor = new LogitmaskLogitProcessor(index);
//   const engine = await CreateMLCEngine(modelId, { logitProcessorRegistry: new Map([[modelId, processor]]) });
//
// WebLLM calls processLogits with each step's logits on the CPU (before sampling) and
// processSampledToken with the token it sampled; resetChat() calls resetState(). The index
// must be built over the model's vocabulary (e.g. Vocabulary.fromTokenizerJson of the model's
// tokenizer.json), so that ids match. WebLLM does not depend on logitmask, nor this on it.
// From a grammar (GBNF), the processor builds and owns its index:
//
//   const processor = LogitmaskLogitProcessor.fromGrammar(gbnfText, vocabulary);
import { Guide, Index } from "logitmask";
import { logitmaskError } from "./error.mjs";
import { grammarSource } from "./grammar-source.mjs";

export class LogitmaskLogitProcessor {
  /** `index`: a logitmask Index; `options`: as `new Guide(index, options)` takes them. */
  constructor(index, options) {
    if (!index || typeof index.nextState !== "function") {
      throw logitmaskError("InvalidArgument", "LogitmaskLogitProcessor needs a logitmask Index");
    }
    this.guide = new Guide(index, options);
    this._ownIndex = null;
  }

  /**
   * A processor for a grammar: `grammar` is its text (GBNF by default) or `{ grammar, syntax }`;
   * `options` as Index.fromGrammar takes them (`syntax`, `maxRecursionDepth` and the index
   * options; the index is lazy unless `lazy: false`); `guideOptions` as `new Guide` takes them.
   * The processor owns the index (`free()` frees it). A bad grammar throws the library's
   * LogitmaskError (InvalidGrammar, with its line and column).
   */
  static fromGrammar(grammar, vocabulary, options, guideOptions) {
    const { text, options: o } = grammarSource(grammar, undefined, options);
    return owning(Index.fromGrammar(text, vocabulary, { lazy: true, ...o }), guideOptions);
  }

  /**
   * A processor for structural tags (Index.fromStructuralTags' specification; for a tools
   * list: `structuralTagsFromTools(tools, { format, mode })` of logitmask/tools): `options` as
   * Index.fromStructuralTags takes them (the index options and the schema options; lazy unless
   * `lazy: false`); `guideOptions` as `new Guide` takes them. The processor owns the index.
   */
  static fromStructuralTags(spec, vocabulary, options, guideOptions) {
    return owning(Index.fromStructuralTags(spec, vocabulary, { lazy: true, ...options }), guideOptions);
  }

  /** Sets the logits of every token the guide does not allow to -Infinity, in place. A guide
   *  that already took EOS starts over first (a new generation without resetState). */
  processLogits(logits) {
    if (this.guide.isFinished()) this.guide.reset();
    this.guide.maskLogits(logits);
    return logits;
  }

  /** Advances the guide; throws a LogitmaskError ("TokenNotAllowed") for a token it does not
   *  allow (a sampler that did not use processLogits' output). */
  processSampledToken(token) {
    this.guide.advance(token);
  }

  /** Back to the start of the pattern. */
  resetState() {
    this.guide.reset();
  }

  /** Frees the guide, and the index if the processor built it (it is unusable afterwards). */
  free() {
    this.guide.free();
    this._ownIndex?.free();
    this._ownIndex = null;
  }
}

/** A processor that owns `index` (freed with it, or now if the processor cannot be made). */
function owning(index, guideOptions) {
  let processor;
  try {
    processor = new LogitmaskLogitProcessor(index, guideOptions);
  } catch (e) {
    index.free();
    throw e;
  }
  processor._ownIndex = index;
  return processor;
}

export default LogitmaskLogitProcessor;
