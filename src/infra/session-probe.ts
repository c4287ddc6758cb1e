import { spawn } from "node:child_process";
import * as readline from "node:readline";

/** What a session protocol's probe asks (a backend's `SteerProtocol.probe`, in plain terms). */
export interface SessionProbeAsk {
  args: readonly string[];
  lines: readonly string[];
  /** What one line of stdout says of the probe: null for nothing, else whether it answered and how. */
  judge(line: string): { ok: boolean; detail: string } | null;
}

/** What the probe found: answered (ok or refused, in the CLI's words), silent, or unstartable. */
export interface SessionProbeAnswer {
  ok: boolean;
  detail: string;
}

/** A line longer than this is not read as an answer (a probe's answer is a few hundred bytes). */
const MAX_LINE_CHARS = 64 * 1024;

/**
 * Starts `bin args` in a process group of its own with stdin a pipe, writes the probe's lines, and reads
 * its stdout until a line answers or `timeoutMs` passes; then ends the input (which ends a CLI that
 * serves its stdin) and kills the group — still ours: its leader is not reaped before the kill.
 */
export function probeSession(
  bin: string,
  ask: SessionProbeAsk,
  timeoutMs: number,
): Promise<SessionProbeAnswer> {
  return new Promise((resolve) => {
    const child = spawn(bin, [...ask.args], {
      stdio: ["pipe", "pipe", "ignore"],
      detached: true,
      env: { ...process.env, NO_COLOR: "1" },
    });
    let settled = false;
    const finish = (answer: SessionProbeAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdin.end();
      killGroup(child.pid, child.exitCode === null && child.signalCode === null);
      resolve(answer);
    };
    const timer = setTimeout(
      () => finish({ ok: false, detail: `no answer within ${Math.round(timeoutMs / 1000)} s` }),
      timeoutMs,
    );
    child.on("error", (error) => finish({ ok: false, detail: `cannot be started: ${error.message}` }));
    child.stdin.on("error", () => undefined);
    child.on("close", (code, signal) =>
      finish({ ok: false, detail: `exited (${signal ?? `exit code ${code}`}) before it answered` }),
    );
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      const judged = line.length > MAX_LINE_CHARS ? null : ask.judge(line);
      if (judged !== null) finish(judged);
    });
    for (const line of ask.lines) child.stdin.write(`${line}\n`);
  });
}

function killGroup(pid: number | undefined, running: boolean): void {
  if (pid === undefined || !running) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}
