// A grammar as the builder and the adapters take it: its text, or an object that holds the
// text in `grammar` (node-llama-cpp's LlamaGrammar has that getter, so one made for
// node-llama-cpp's own sampler can be passed as it is; or `{ grammar, syntax }`), with an
// optional `syntax` beside it. The syntax is Index.fromGrammar's option of that name, passed on
// unchanged: the library knows which syntaxes exist and refuses others (InvalidArgument).
import { logitmaskError } from "./error.mjs";

/**
 * `{ text, options }`: the grammar's text, and `options` with the syntax joined to them (from
 * the grammar object, `syntax`, or `options.syntax`: the same one if more than one says it).
 */
export function grammarSource(grammar, syntax, options) {
  let text = grammar;
  const syntaxes = [];
  if (grammar !== null && typeof grammar === "object" && typeof grammar.grammar === "string") {
    text = grammar.grammar;
    if (grammar.rootRuleName !== undefined && grammar.rootRuleName !== "root") {
      throw logitmaskError("InvalidArgument", `the grammar's start rule is ${JSON.stringify(grammar.rootRuleName)}: logitmask starts at "root"`);
    }
    if (typeof grammar.syntax === "string") syntaxes.push(grammar.syntax);
  }
  if (typeof text !== "string") {
    throw logitmaskError("InvalidArgument", "a grammar is its text (a string), or an object with the text in `grammar` (e.g. node-llama-cpp's LlamaGrammar)");
  }
  for (const s of [syntax, options?.syntax]) if (s !== undefined) syntaxes.push(s);
  if (new Set(syntaxes).size > 1) {
    throw logitmaskError("InvalidArgument", `more than one syntax for one grammar: ${[...new Set(syntaxes)].map((s) => JSON.stringify(s)).join(", ")}`);
  }
  return { text, options: syntaxes.length > 0 ? { ...options, syntax: syntaxes[0] } : options };
}
