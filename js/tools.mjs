// `logitmask/tools`: tool calling with structural tags (docs/grammars.md, "Tool calls").
//
//   const spec = structuralTagsFromTools(tools, { format: "hermes", mode: "required" });
//   const index = Index.fromStructuralTags(spec, vocabulary);
//   ... generate ...
//   const { calls, text } = parseToolCalls(output, { format: "hermes" });
//
// `tools` is an OpenAI-style list: `[{ type: "function", function: { name, description?,
// parameters? } }]` (the flat `{ type: "function", name, parameters }` of OpenAI's Responses
// API is taken too). Each tool becomes one tag whose `begin` holds the tool's name and whose
// content is its `parameters` schema, so that after the trigger the model picks a name and
// then writes arguments that match that tool's schema. The formats write what the models'
// own chat templates write for a call (the templates put `tool_call.arguments | tojson`
// between fixed text):
//
// * "hermes" (alias "qwen"): Hermes 2/3 and Qwen2.5/Qwen3 -
//     <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>
// * "llama3": Llama 3.1/3.2/3.3 JSON tool calls (custom tools) -
//     {"name": "get_weather", "parameters": {"city": "Paris"}}
//
// Plain JS, no WebAssembly: usable before the module loads, and in any entry.
import { logitmaskError } from "./error.mjs";

/** The formats: the trigger, the text around a call, the key the arguments are under. */
const FORMATS = Object.freeze({
  hermes: Object.freeze({
    trigger: "<tool_call>",
    begin: (name) => `<tool_call>\n{"name": ${JSON.stringify(name)}, "arguments": `,
    end: "}\n</tool_call>",
    argumentsKey: "arguments",
    close: "</tool_call>",
  }),
  llama3: Object.freeze({
    trigger: '{"name": ',
    begin: (name) => `{"name": ${JSON.stringify(name)}, "parameters": `,
    end: "}",
    argumentsKey: "parameters",
    close: null,
  }),
});
const ALIASES = Object.freeze({ qwen: "hermes" });

/** The format names `structuralTagsFromTools` and `parseToolCalls` take. */
export const TOOL_FORMATS = Object.freeze(["hermes", "qwen", "llama3"]);
/** The modes: "auto" (free text, calls where the model writes them), "required" (one call
 *  or more, free text around them), "only" (calls only, whitespace between them). */
export const TOOL_MODES = Object.freeze(["auto", "required", "only"]);

function formatOf(format = "hermes") {
  const f = FORMATS[ALIASES[format] ?? format];
  if (typeof format !== "string" || !f) {
    throw logitmaskError("InvalidArgument", `unknown tool-call format ${JSON.stringify(format)} (known: ${TOOL_FORMATS.join(", ")})`);
  }
  return f;
}

const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

/** The tools as `[{ name, parameters }]`, checked. */
export function normalizeTools(tools) {
  if (!Array.isArray(tools) || tools.length === 0) {
    throw logitmaskError("InvalidArgument", "tools must be a non-empty array of { type: \"function\", function: { name, parameters } }");
  }
  const seen = new Set();
  return tools.map((tool, i) => {
    if (!isObject(tool)) throw logitmaskError("InvalidArgument", `tools[${i}] is not an object`);
    if (tool.type !== undefined && tool.type !== "function") {
      throw logitmaskError("InvalidArgument", `tools[${i}] has type ${JSON.stringify(tool.type)}: only "function" tools can be called`);
    }
    const fn = tool.function === undefined ? tool : tool.function;
    if (!isObject(fn)) throw logitmaskError("InvalidArgument", `tools[${i}].function is not an object`);
    const { name, parameters } = fn;
    if (typeof name !== "string" || name.length === 0) {
      throw logitmaskError("InvalidArgument", `tools[${i}] has no name (a non-empty string in function.name)`);
    }
    if (seen.has(name)) throw logitmaskError("InvalidArgument", `tools[${i}]: the name ${JSON.stringify(name)} is used twice`);
    seen.add(name);
    if (parameters !== undefined && !isObject(parameters) && typeof parameters !== "boolean") {
      throw logitmaskError("InvalidArgument", `tools[${i}] (${name}): parameters must be a JSON Schema (an object)`);
    }
    // No parameters: the function takes none, `{}` (OpenAI's reading).
    return { name, parameters: parameters ?? { type: "object", properties: {} } };
  });
}

/**
 * `Index.fromStructuralTags`'s specification for calling `tools` in a chat format:
 * `{ format = "hermes", mode = "auto" }`; "auto": free text with calls anywhere (EOS allowed
 * in free text), "required": at least one call (`atLeastOne`), "only": calls only, with
 * whitespace between them (`callsOnly`). A malformed tools list, an unknown format or mode:
 * LogitmaskError "InvalidArgument".
 */
export function structuralTagsFromTools(tools, { format = "hermes", mode = "auto" } = {}) {
  const f = formatOf(format);
  if (!TOOL_MODES.includes(mode)) {
    throw logitmaskError("InvalidArgument", `unknown tool mode ${JSON.stringify(mode)} (known: ${TOOL_MODES.join(", ")})`);
  }
  const spec = {
    triggers: [f.trigger],
    tags: normalizeTools(tools).map(({ name, parameters }) => ({ begin: f.begin(name), schema: parameters, end: f.end })),
  };
  if (mode === "required") spec.atLeastOne = true;
  if (mode === "only") spec.callsOnly = true;
  return spec;
}

/** JSON as Python's `json.dumps` writes it (what chat templates' `tojson` writes): ", " and
 *  ": " between items, non-ASCII as it is. */
export function templateJson(value) {
  if (Array.isArray(value)) return `[${value.map(templateJson).join(", ")}]`;
  if (isObject(value)) return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${templateJson(v)}`).join(", ")}}`;
  return JSON.stringify(value) ?? "null";
}

/**
 * The system-prompt text that tells a model about `tools` in `format`, as the models' chat
 * templates write it: "hermes" that of Qwen2.5 (the tools between `<tools></tools>`, and the
 * `<tool_call>` shape), "llama3" that of Llama 3.1's custom tools. Append it to a system
 * message; a runtime that applies the model's own chat template with `tools` needs none.
 */
export function toolsPrompt(tools, { format = "hermes" } = {}) {
  const f = formatOf(format);
  const list = normalizeTools(tools);
  // The flat form is shown in the templates' nested one.
  const described = tools.map((tool, i) => {
    if (tool.function !== undefined) return tool;
    const { type, ...fn } = tool;
    return { type: "function", function: { ...fn, parameters: list[i].parameters } };
  });
  if (f === FORMATS.llama3) {
    return (
      "Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\n" +
      'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}. Do not use variables.\n\n' +
      described.map((t) => templateJson(t)).join("\n\n")
    );
  }
  return (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
    described.map((t) => templateJson(t)).join("\n") +
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n" +
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
  );
}

/** The end of the JSON object that starts at `i` (braces balanced outside strings), or -1
 *  when the text ends first. */
function jsonObjectEnd(text, i) {
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === '"') {
      for (j++; j < text.length && text[j] !== '"'; j++) if (text[j] === "\\") j++;
      if (j >= text.length) return -1;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return -1;
}

/**
 * The calls in a model's output, and its free text: `{ calls: [{ name, arguments }], text,
 * errors }`. `text` is the output without the calls (trimmed); a call that cannot be read
 * (the output ends inside it, or it is not the format's JSON) is left in `text` and listed in
 * `errors` as `{ at, message }` (`at`: its offset in the output). `format` as
 * structuralTagsFromTools takes it.
 */
export function parseToolCalls(text, { format = "hermes" } = {}) {
  if (typeof text !== "string") throw logitmaskError("InvalidArgument", "parseToolCalls needs the output text (a string)");
  const f = formatOf(format);
  const calls = [];
  const errors = [];
  let free = "";
  let from = 0;
  for (let at = text.indexOf(f.trigger); at >= 0; at = text.indexOf(f.trigger, from)) {
    // The JSON object: after the trigger (hermes) or at it (llama3, whose trigger opens it).
    let start = f.close ? at + f.trigger.length : at;
    while (f.close && /\s/.test(text[start] ?? "")) start++;
    const end = text[start] === "{" ? jsonObjectEnd(text, start) : -1;
    let stop = end;
    let message;
    if (end < 0) message = "the output ends inside the call";
    else if (f.close) {
      const rest = /^\s*/.exec(text.slice(end))[0].length;
      if (text.startsWith(f.close, end + rest)) stop = end + rest + f.close.length;
      else message = `no ${f.close} after the call's JSON`;
    }
    let call;
    if (!message) {
      try {
        const value = JSON.parse(text.slice(start, end));
        if (!isObject(value) || typeof value.name !== "string") message = "the call's JSON has no name";
        else call = { name: value.name, arguments: value[f.argumentsKey] ?? {} };
      } catch (e) {
        message = `the call is not JSON: ${e.message}`;
      }
    }
    if (message) {
      errors.push({ at, message });
      free += text.slice(from, at + f.trigger.length);
      from = at + f.trigger.length;
      continue;
    }
    calls.push(call);
    free += text.slice(from, at);
    from = stop;
  }
  free += text.slice(from);
  return { calls, text: free.trim(), errors };
}
