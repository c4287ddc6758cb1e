import * as fs from "node:fs";
import * as path from "node:path";
import { type CliResult, runCli } from "./cli.js";

// The queue's real-process tests share these: every agent is `sh`, appending "start <name>" and
// "end <name>" to one log, so that what ran, how often and how many at once is read from what the agents
// themselves did.

export interface Queued {
  dispatchId: string;
  dir: string;
  name: string;
  supervisorPid: number | null;
  queued: boolean;
  position: number | null;
  blockedBy: string | null;
}

/** The dispatch a `--json` dispatch printed; its id goes into `dispatched` (for the reaping). */
export function parsed(result: CliResult, dispatched: string[]): Queued {
  if (result.code !== 0)
    throw new Error(`dispatch failed (${result.code}): ${result.stdout}${result.stderr}`);
  const d = (JSON.parse(result.stdout) as { dispatched: Queued }).dispatched;
  dispatched.push(d.dispatchId);
  return d;
}

/** An agent that logs its start, runs `body`, and logs its end. */
export function agent(log: string, name: string, body = "sleep 0.3"): string[] {
  return ["--", "/bin/sh", "-c", `echo "start ${name}" >> '${log}'; ${body}; echo "end ${name}" >> '${log}'`];
}

export function dispatch(env: NodeJS.ProcessEnv, name: string, command: string[], extra: string[] = []) {
  return runCli(
    [
      "dispatch",
      "--backend",
      "exec",
      "--name",
      name,
      "--json",
      "--kill-grace",
      "300ms",
      ...extra,
      ...command,
    ],
    {
      env,
      timeoutMs: 60_000,
    },
  );
}

export function logLines(log: string): string[] {
  return fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n").filter(Boolean) : [];
}

/** The most agents that ran at once, read from the log's order of starts and ends. */
export function mostAtOnce(lines: string[]): number {
  let now = 0;
  let most = 0;
  for (const line of lines) {
    now += line.startsWith("start ") ? 1 : -1;
    most = Math.max(most, now);
  }
  return most;
}

export function recordOf(dir: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(dir, "record.json"), "utf8")) as Record<string, unknown>;
}
