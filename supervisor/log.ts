import { appendLine } from "../src/infra/atomic.js";

/** supervisor.log: one JSON line per notable event, best effort (a full disk never stops supervision). */
export type SupervisorLog = (event: string, fields?: Record<string, unknown>) => void;

export function fileLog(file: string, wallNow: () => Date): SupervisorLog {
  return (event, fields = {}) =>
    appendLine(file, JSON.stringify({ at: wallNow().toISOString(), event, ...fields }));
}
