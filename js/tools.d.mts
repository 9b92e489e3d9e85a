// Types of `logitmask/tools` (js/tools.mjs): tool calls as structural tags.
import type { StructuralTags } from "logitmask";

/** An OpenAI-style tool: `{ type: "function", function: { name, description?, parameters? } }`
 *  (or the flat `{ type: "function", name, parameters }` of OpenAI's Responses API). */
export type Tool =
  | { type?: "function"; function: ToolFunction }
  | ({ type?: "function"; function?: undefined } & ToolFunction);
export interface ToolFunction {
  name: string;
  description?: string;
  /** The arguments' JSON Schema (default: no arguments, `{}`). */
  parameters?: object | boolean;
  [key: string]: unknown;
}

/** "hermes" (= "qwen"): `<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>`;
 *  "llama3": `{"name": ..., "parameters": ...}`. */
export type ToolFormat = "hermes" | "qwen" | "llama3";
/** "auto": free text, calls where the model writes them; "required": one call or more
 *  (`atLeastOne`); "only": calls only (`callsOnly`). */
export type ToolMode = "auto" | "required" | "only";

export const TOOL_FORMATS: readonly ToolFormat[];
export const TOOL_MODES: readonly ToolMode[];

/** The tools as `[{ name, parameters }]`; a malformed list throws InvalidArgument. */
export function normalizeTools(tools: readonly Tool[]): Array<{ name: string; parameters: object | boolean }>;

/** `Index.fromStructuralTags`'s specification for calling `tools` in a chat format. */
export function structuralTagsFromTools(tools: readonly Tool[], options?: { format?: ToolFormat; mode?: ToolMode }): StructuralTags;

export interface ToolCall {
  name: string;
  arguments: unknown;
}

/** The calls in an output and its free text (without the calls, trimmed); calls that could
 *  not be read stay in `text` and are listed in `errors`. */
export function parseToolCalls(
  text: string,
  options?: { format?: ToolFormat },
): { calls: ToolCall[]; text: string; errors: Array<{ at: number; message: string }> };

/** JSON as Python's `json.dumps` writes it (chat templates' `tojson`): ", " and ": " separators. */
export function templateJson(value: unknown): string;

/** The system-prompt text that describes `tools` to a model in `format`, as its chat template does. */
export function toolsPrompt(tools: readonly Tool[], options?: { format?: ToolFormat }): string;
