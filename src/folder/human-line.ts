import type { Backend } from "../backends/types.js";

/** The mark before a line that reports a failure or a provider retry ("! retrying 2/5"). */
export const ERROR_MARK = "! ";

/**
 * An event line as people read it (status, show, logs, the demo): the backend's one-line description
 * ("$ npm test", "edit src/a.ts", "! retrying 2/5"), marked when the line reports a failure or a provider
 * retry, or null for a line it has nothing to tell people about (bookkeeping events). A line that makes
 * the backend throw is shown as it is.
 */
export function humanLine(backend: Backend, line: string): string | null {
  try {
    const facts = backend.parse(line);
    if (facts.describe === undefined) return null;
    const marked = facts.error !== undefined || facts.retry !== undefined;
    return marked ? `${ERROR_MARK}${facts.describe}` : facts.describe;
  } catch {
    return line;
  }
}
