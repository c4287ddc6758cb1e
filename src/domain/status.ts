import type { StreamSummary } from "./summary.js";
import type { ExitReason, Status } from "./vocab.js";

/** How the supervised process ended, as the record's precedence needs it. */
export interface ExitFacts {
  reason: ExitReason;
  code: number | null;
  signal: string | null;
}

/**
 * The record's status, by the written precedence (specs/record.md): the exit reason first, then the CLI's
 * own limit signals, then its terminal event (error flag over subtype), then the exit code.
 */
export function statusByPrecedence(exit: ExitFacts, summary: StreamSummary): Status {
  switch (exit.reason) {
    case "cancelled":
      return "cancelled";
    case "idle-timeout":
    case "wall-timeout":
      return "timeout";
    case "provider-unavailable":
      return "limit";
    case "spawn-failed":
    case "supervisor-error":
      return "failed";
    case "lost":
      return "lost";
    case "exited":
    case "after-final":
      break;
  }
  if (summary.limitSeen && summary.final?.isError !== false) return "limit";
  if (summary.final !== null) return summary.final.isError ? "failed" : "ok";
  if (exit.reason === "after-final") return "ok";
  return exit.code === 0 && exit.signal === null ? "ok" : "failed";
}
