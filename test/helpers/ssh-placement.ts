import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { type CliResult, isolatedHome, runCli } from "./cli.js";
import { FAKE_AGENT, tempDir } from "./folders.js";
import { type Sshd, sshdUnavailable, startSshd } from "./sshd.js";

// What the tests of `--placement ssh:HOST` on the rig (test/helpers/sshd.ts) share: catherd runs ssh as
// the user would, so each test's home gets an `ssh` first on PATH that adds the rig's `-F <config>` and
// notes each call; a fake agent on `exec`; the dispatch placed on the rig; its row in `status`.

/** Why the ssh suite cannot run here, or null; under CI it must run, and this throws instead. */
export function sshSuiteUnavailable(): string | null {
  const why = sshdUnavailable();
  if (why !== null && process.env.CI !== undefined && process.env.CI !== "") {
    throw new Error(`the ssh suite must run under CI, but ${why}`);
  }
  return why;
}

/** The `ssh` that reaches the rig: its folder, to put first on PATH, and the log of its calls. */
export interface SshOnPath {
  bin: string;
  /** Every call's arguments so far, one call a line. */
  calls(): string;
}

/**
 * An `ssh` that adds the rig's `-F <config>` and appends its arguments, one call a line, to a log. With
 * `lateStart`, a call that started a supervisor (it printed `catherd-supervisor <pid>`) returns only once
 * that supervisor has spawned its agent (a proc.json under $CATHERD_HOME, by 30 s): the dispatcher then
 * writes placement.json after the supervisor has come up, as a slow connection's teardown would have it.
 */
export function sshOnPath(rig: Sshd, o: { lateStart?: boolean } = {}): SshOnPath {
  const bin = tempDir("catherd-ssh-bin-");
  const log = path.join(bin, "calls.log");
  const real = execFileSync("sh", ["-c", "command -v ssh"], { encoding: "utf8" }).trim();
  const config = rig
    .sshArgs()
    .map((a) => `'${a}'`)
    .join(" ");
  const call = `exec '${real}' ${config} "$@"`;
  fs.writeFileSync(
    path.join(bin, "ssh"),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\n${o.lateStart === true ? lateStart(real, config) : call}\n`,
    {
      mode: 0o755,
    },
  );
  return { bin, calls: () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "") };
}

/** The body of a `lateStart` ssh: the call, its output kept; for a start, a wait for the agent's proc.json. */
function lateStart(real: string, config: string): string {
  return [
    `out=$(mktemp); '${real}' ${config} "$@" > "$out"; code=$?; cat "$out"`,
    'if grep -q "^catherd-supervisor " "$out"; then',
    "  i=0",
    '  until find "$CATHERD_HOME" -name proc.json | grep -q . || [ "$i" -ge 300 ]; do sleep 0.1; i=$((i + 1)); done',
    "fi",
    'rm -f "$out"; exit "$code"',
  ].join("\n");
}

/** A catherd home of its own whose ssh reaches the rig. */
export function placedHome(ssh: SshOnPath): { home: string; env: NodeJS.ProcessEnv } {
  const { home, env } = isolatedHome();
  return { home, env: { ...env, PATH: `${ssh.bin}:${process.env.PATH ?? ""}` } };
}

/** A fake agent on `exec` running `steps`: the dispatch's arguments from `--backend` on. */
export function execArgs(steps: Record<string, unknown>[]): string[] {
  const scenario = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(scenario, JSON.stringify({ steps }));
  return ["--backend", "exec", "--kill-grace", "300ms", "--", process.execPath, FAKE_AGENT, scenario];
}

/** What `dispatch --json` says of a dispatch placed on the rig. */
export interface Dispatched {
  dispatchId: string;
  dir: string;
  placement: { engine: string; jobId: string; state: string; node: string | null } | null;
  queued: boolean;
  blockedBy: string | null;
}

/** `catherd dispatch --json --placement ssh:<rig> <args…>`: the dispatch it made, or a throw with its words. */
export async function placeOn(
  rig: Sshd,
  env: NodeJS.ProcessEnv,
  args: readonly string[],
): Promise<Dispatched> {
  const result = await runCli(["dispatch", "--json", "--placement", `ssh:${rig.host}`, ...args], {
    env,
    timeoutMs: 60_000,
  });
  return jsonOf<{ dispatched: Dispatched }>(result, "dispatch").dispatched;
}

/** The JSON a command printed; a throw with its output when it failed. */
export function jsonOf<T>(result: CliResult, what: string): T {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}: ${result.stderr}${result.stdout}`);
  return JSON.parse(result.stdout) as T;
}

/** A dispatch's row in `catherd status --json`. */
export interface Row {
  dispatchId: string;
  state: string;
  status: string | null;
}

/** The row of dispatch `id` in `status --json` run by `run` (here, or in another namespace). */
export async function rowOf(
  id: string,
  run: (args: readonly string[]) => Promise<CliResult>,
): Promise<Row | undefined> {
  const result = await run(["status", "--json"]);
  return jsonOf<{ dispatches: Row[] }>(result, "status").dispatches.find((r) => r.dispatchId === id);
}

export { eventually } from "./wait.js";

/**
 * The rig of a test file: started before its tests (`took` is given it and the `ssh` that reaches it),
 * stopped by pid after them whatever they did. Returns why the suite cannot run here, or null.
 */
export function useRig(took: (sshd: Sshd, ssh: SshOnPath) => void): string | null {
  const why = sshSuiteUnavailable();
  let started: Sshd | undefined;
  beforeAll(async () => {
    if (why !== null) return;
    started = await startSshd();
    took(started, sshOnPath(started));
  });
  afterAll(async () => {
    await started?.stop();
  });
  return why;
}
