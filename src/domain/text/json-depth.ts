// How deep catherd keeps what an agent prints (specs/backends.md, "Depth"). JSON.parse builds a value of
// any depth without recursion, but every later walk recurses — JSON.stringify when a question, activity or
// record is written, zod, rendering — and overflows the stack from about 4,000 levels. So a parsed line is
// cut to a fixed depth where it is parsed, once, and no later walk meets a deeper value.

/**
 * The deepest a parsed event line is kept. Well above an answer's own limit (MAX_ANSWER_DEPTH, 64), so
 * that a deep structured answer is still judged by the answer's check; far below the stack's ~4,000.
 */
export const MAX_LINE_DEPTH = 256;

/**
 * The deepest a JSON file of a dispatch folder is read: a question file holds a line's tool input under a
 * few levels of its own, so this is above MAX_LINE_DEPTH; a deeper file was not written by catherd.
 */
export const MAX_FILE_DEPTH = 2 * MAX_LINE_DEPTH;

/** What stands where a line nested deeper than MAX_LINE_DEPTH: a short string, never the subtree. */
export const DEEP_MARKER = `[nested deeper than ${MAX_LINE_DEPTH} levels]`;

/**
 * Cuts a freshly parsed value, in place, to `limit` levels of arrays and objects (the value itself is
 * level 1): each array or object that would be level `limit + 1` is replaced by `marker`. A walk with its
 * own stack, no recursion, linear in the value's nodes. Returns whether anything was cut.
 */
export function cutDeeperThan(value: unknown, limit: number, marker: string): boolean {
  if (!isContainer(value)) return false;
  let cut = false;
  const stack: [Record<string, unknown>, number][] = [[value, 1]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, depth] = next;
    // for…in, not Object.entries: no array of pairs per object (a line can hold 100,000s of them); a
    // value of JSON.parse has no enumerable inherited keys.
    for (const key in item) {
      const child = item[key];
      if (!isContainer(child)) continue;
      if (depth < limit) stack.push([child, depth + 1]);
      else {
        // defineProperty, not assignment: a key named "__proto__" (JSON.parse makes it an own property)
        // would otherwise call the prototype's setter and keep the deep value.
        Object.defineProperty(item, key, {
          value: marker,
          writable: true,
          enumerable: true,
          configurable: true,
        });
        cut = true;
      }
    }
  }
  return cut;
}

/** Whether a parsed value nests arrays and objects deeper than `limit`: a walk with its own stack, no recursion. */
export function valueDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== "object") continue;
    if (depth + 1 > limit) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

function isContainer(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
