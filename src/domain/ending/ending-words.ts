import { compactDuration } from "../text/duration.js";
import type { ErrorKind } from "../vocab.js";
import type { ExitFacts } from "./ending.js";
import type { StreamSummary } from "./summary.js";

// The words of an ending (specs/record.md, `error.message`): the most specific a kind has, and how a
// dispatch ended when nothing else explains it. src/domain/ending/ending.ts decides which kind they are for.

/**
 * The most specific words for a kind: the provider's own, as the CLI surfaced them; else the CLI's
 * terminal error, its last error of that kind, its last retry or its last error line. Null for the kinds
 * catherd gave (timeout, cancelled…): the CLI's words do not explain those.
 */
export function messageFor(kind: ErrorKind, summary: StreamSummary): string | null {
  if (KIND_OF_CATHERD.has(kind)) return null;
  const deciding = summary.finalError ?? summary.lastKnownError;
  if (deciding !== null && deciding.kind === kind && deciding.words === "provider") return deciding.message;
  const provider = summary.providerWords[kind];
  if (provider !== undefined) return provider;
  if (deciding !== null && deciding.kind === kind) return deciding.message;
  if (summary.lastRetry !== null && summary.lastRetry.kind === kind) return summary.lastRetry.message;
  if (summary.final?.isError === true && summary.final.message !== null) return summary.final.message;
  return summary.lastError?.message ?? null;
}

const KIND_OF_CATHERD: ReadonlySet<ErrorKind> = new Set([
  "timeout",
  "cancelled",
  "spawn",
  "supervisor",
  "lost",
  "oom",
  "disk",
]);

/**
 * How a dispatch ended, in words, for one that nothing else explains — what catherd did and the limit it
 * acted on ("no output for 2s (--idle 2s)"), else how the agent's process ended ("exit code 2", "ended by
 * SIGSEGV"). Said next to the kind ("timeout — no output for 2s (--idle 2s)"), so it never repeats it.
 */
export function describeExit(exit: Pick<ExitFacts, "reason" | "code" | "signal" | "limits">): string {
  const idle = exit.limits?.idleMs;
  const wall = exit.limits?.wallMs;
  switch (exit.reason) {
    case "idle-timeout":
      return idle === undefined
        ? "no output for longer than --idle"
        : `no output for ${compactDuration(idle)} (--idle ${compactDuration(idle)})`;
    case "wall-timeout":
      return wall === undefined
        ? "still running past --wall"
        : `still running after ${compactDuration(wall)} (--wall ${compactDuration(wall)})`;
    case "cancelled":
      return "stopped on request (catherd cancel)";
    case "lost":
      return "its supervisor is gone and left no account of the end";
    default:
      break;
  }
  if (exit.signal !== null) return `ended by ${exit.signal}`;
  if (exit.code !== null) return `exit code ${exit.code}`;
  return exit.reason;
}
