import type { Backend } from "../backends/types.js";

/**
 * An event line as people read it (status, show, logs, the demo): the backend's one-line description
 * ("$ npm test", "edit src/a.ts", "retrying 2/5"), or null for a line it has nothing to tell people about
 * (bookkeeping events). A line that makes the backend throw is shown as it is.
 */
export function humanLine(backend: Backend, line: string): string | null {
  try {
    return backend.parse(line).describe ?? null;
  } catch {
    return line;
  }
}
