import type { SteerSession } from "./types.js";

/** A session for a protocol whose lines never depend on where the CLI stands (Claude's stream-json). */
export function linesSession(lines: {
  userLine(text: string, uuid: string): string;
  interruptLine(requestId: string): string;
}): SteerSession {
  return {
    observe: () => undefined,
    due: () => [],
    userLines: (text, uuid) => [lines.userLine(text, uuid)],
    interruptLines: (requestId) => [lines.interruptLine(requestId)],
  };
}
