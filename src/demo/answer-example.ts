// The simulated agent's answer under `--output-schema`: the plainest value a JSON Schema accepts, so that
// `--answer-schema` can be tried with it. It reads the common keywords (const, enum, type, required
// properties, items with minItems, minimum, minLength, anyOf/oneOf/allOf) and nothing more; a schema it
// cannot satisfy this way gets a value that does not fit, and catherd's check says so.

/** How deep a schema is followed: more than an answer needs, few enough to stop a cycle. */
const MAX_DEPTH = 16;

export function exampleOf(schema: unknown, depth = 0): unknown {
  if (typeof schema !== "object" || schema === null || depth > MAX_DEPTH) return null;
  const s = schema as Record<string, unknown>;
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0] ?? null;
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const first = Array.isArray(s[key]) ? (s[key] as unknown[])[0] : undefined;
    if (first !== undefined && s.type === undefined) return exampleOf(first, depth + 1);
  }
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case "object":
      return objectExample(s, depth);
    case "array": {
      const count = typeof s.minItems === "number" ? Math.min(s.minItems, 100) : 0;
      return Array.from({ length: count }, () => exampleOf(s.items, depth + 1));
    }
    case "string":
      return "x".repeat(typeof s.minLength === "number" ? Math.min(s.minLength, 1000) : 0);
    case "integer":
    case "number":
      return typeof s.minimum === "number" ? Math.ceil(s.minimum) : 0;
    case "boolean":
      return false;
    default:
      return s.properties === undefined ? null : objectExample(s, depth);
  }
}

/** Its required properties, each with its own example. */
function objectExample(s: Record<string, unknown>, depth: number): Record<string, unknown> {
  const properties = (
    typeof s.properties === "object" && s.properties !== null ? s.properties : {}
  ) as Record<string, unknown>;
  const required = Array.isArray(s.required) ? s.required.filter((k) => typeof k === "string") : [];
  return Object.fromEntries(required.map((k: string) => [k, exampleOf(properties[k], depth + 1)]));
}
