import * as fs from "node:fs";
import {
  netRuleText,
  refusedWriteIn,
  type SandboxAccount,
  type SandboxedMode,
} from "../domain/sandbox/sandbox.js";
import { tailLines } from "../infra/tail.js";
import { FILES, fileIn } from "./layout.js";

// sandbox.log (specs/sandbox.md, "What it refused"): a `fence` line when the supervisor raised the sandbox,
// then a line per refusal. Read by the record, `show` and `logs`; written only by the supervisor (the
// agent cannot: the folder is read-only inside its sandbox).

/**
 * The event of sandbox.log's first line, the sandbox as raised: a spelling of the folder that stays `fence`
 * (specs/architecture.md, "One name per thing").
 */
export const RAISED_EVENT = "fence";

/** One line of sandbox.log, as far as readers need it. */
export interface SandboxLine {
  at: string;
  event: string;
  host?: string;
  port?: number;
  method?: string;
  why?: string;
  /** The `fence` line's places kept read-only whatever writable place holds them. */
  readOnly?: unknown;
}

/** The lines of sandbox.log that parse; none when it is missing. */
export function readSandboxLog(dir: string): SandboxLine[] {
  let text: string;
  try {
    text = fs.readFileSync(fileIn(dir, FILES.sandboxLog), "utf8");
  } catch {
    return [];
  }
  const lines: SandboxLine[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const value = JSON.parse(line) as SandboxLine;
      if (typeof value.at === "string" && typeof value.event === "string") lines.push(value);
    } catch {
      // a torn last line: skipped
    }
  }
  return lines;
}

const STDERR_SCAN_LINES = 400;
const STDERR_SCAN_BYTES = 128 * 1024;

/** What sandbox.log says the sandbox refused: how many connections, and the first as `HOST:PORT`. */
export function refusalsIn(dir: string): Pick<SandboxAccount, "denied" | "firstDenied"> {
  const denied = readSandboxLog(dir).filter((line) => line.event === "denied");
  const first = denied.find((line) => line.host !== undefined && line.port !== undefined);
  return {
    denied: denied.length,
    firstDenied:
      first === undefined ? null : netRuleText({ host: first.host as string, port: first.port as number }),
  };
}

/** The places the sandbox kept read-only (its `fence` line's `readOnly`): none when it says none. */
export function keptReadOnly(dir: string): string[] {
  const kept = readSandboxLog(dir).find((line) => line.event === RAISED_EVENT)?.readOnly;
  return Array.isArray(kept) ? kept.filter((place): place is string => typeof place === "string") : [];
}

/** The sandbox's account of a sandboxed dispatch, for its record. */
export function sandboxAccount(dir: string, mode: SandboxedMode): SandboxAccount {
  const stderr = tailLines(fileIn(dir, FILES.stderr), STDERR_SCAN_LINES, STDERR_SCAN_BYTES);
  return { mode, ...refusalsIn(dir), refusedWrite: refusedWriteIn(stderr) };
}
