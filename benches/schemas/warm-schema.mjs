// The synthetic schema a fresh schema worker compiles, untimed, before its first timed
// schema (benches/schemas/child.mjs): made here, not taken from the corpus, so the warm-up
// tunes nothing to the schemas it measures. Rings of four definitions that refer to each
// other (recursion through anyOf), each with the keywords that send the compiler down its
// heavier paths: oneOf of closed objects (complements and disjointness), allOf over
// anyOf (intersected branches), not, if/then/else, patternProperties, dependencies,
// enums of mixed types, formats, patterns and numeric bounds.

export function warmSchema(definitions = 4) {
  const defs = {};
  for (let i = 0; i < definitions; i++) {
    const next = `#/$defs/d${i - (i % 4) + ((i + 1) % 4)}`;
    defs[`d${i}`] = {
      type: "object",
      properties: {
        [`id${i}`]: { type: "string", pattern: `^[a-z]{1,${8 + (i % 5)}}-[0-9]+$` },
        kind: { enum: [`k${i}`, `k${i + 1}`, `k${i + 2}`, null, i] },
        when: { type: "string", format: ["date-time", "email", "uri", "uuid", "date"][i % 5] },
        count: { type: "integer", minimum: i, maximum: 1000 + i, multipleOf: 1 + (i % 3) },
        ratio: { type: "number", exclusiveMinimum: 0, maximum: 1 },
        tags: { type: "array", items: { type: "string", maxLength: 20 }, minItems: 1, maxItems: 5 },
        child: { anyOf: [{ $ref: next }, { type: "null" }] },
        either: {
          oneOf: [
            { type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false },
            { type: "object", properties: { b: { type: "integer" } }, required: ["b"], additionalProperties: false },
          ],
        },
        both: {
          allOf: [
            { type: "object", properties: { x: { type: "string" } } },
            { anyOf: [{ required: ["x"] }, { properties: { y: { type: "boolean" } }, required: ["y"] }] },
          ],
        },
        notThis: { type: "string", not: { enum: ["no", "none"] } },
        cond: {
          type: "object",
          properties: { t: { enum: ["p", "q"] }, v: {} },
          if: { properties: { t: { const: "p" } } },
          then: { properties: { v: { type: "string" } } },
          else: { properties: { v: { type: "number" } } },
        },
        map: { type: "object", patternProperties: { "^x-": { type: "string" } }, additionalProperties: { type: "integer" }, maxProperties: 4 },
        dep: { type: "object", properties: { c: { type: "string" }, d: { type: "string" } }, dependencies: { c: ["d"] } },
      },
      required: [`id${i}`, "kind"],
      additionalProperties: i % 3 !== 0,
    };
  }
  return JSON.stringify({
    $defs: defs,
    type: "object",
    properties: Object.fromEntries(Object.keys(defs).map((k) => [k, { $ref: `#/$defs/${k}` }])),
    required: ["d0"],
  });
}
