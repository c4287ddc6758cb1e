import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { CLI_MAIN, FAKE_AGENT, tempDir } from "./folders.js";

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI with a deadline; stdin is closed (or fed `input`). With `umask`, through sh under
 * that umask (node cannot set another process's umask).
 */
export function runCli(
  args: readonly string[],
  options: {
    env?: NodeJS.ProcessEnv;
    input?: string | Buffer;
    timeoutMs?: number;
    cwd?: string;
    umask?: string;
    /** Keep stdin open, writing nothing, until the command has exited (an orchestrator's idle pipe). */
    holdStdin?: boolean;
  } = {},
): Promise<CliResult> {
  const argv = [process.execPath, CLI_MAIN, ...args];
  const [cmd, ...cmdArgs] =
    options.umask === undefined
      ? argv
      : ["/bin/sh", "-c", `umask ${options.umask}; exec ${argv.map(shellQuote).join(" ")}`];
  const child = spawn(cmd as string, cmdArgs, {
    env: options.env ?? process.env,
    // By default outside any git work tree: a dispatch there snapshots no repository (never catherd's
    // own, whose objects it would write); the tests about git give --cwd.
    cwd: options.cwd ?? os.tmpdir(),
    stdio: ["pipe", "pipe", "pipe"],
  });
  const output = collectOutput(child, `catherd ${args.join(" ")}`, options.timeoutMs ?? 20_000);
  child.stdin.on("error", () => {});
  if (options.holdStdin === true) child.on("exit", () => child.stdin.end());
  else child.stdin.end(options.input);
  return output;
}

/**
 * What a started process prints, once it has closed its output; it is SIGKILLed and the promise rejected
 * past `timeoutMs`. "close", not "exit": under load the last output can arrive after the process exited.
 */
export function collectOutput(child: ChildProcess, what: string, timeoutMs: number): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${what} did not finish in time; stderr: ${stderr}`));
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, "'\\''")}'`;
}

/** The argv of `catherd dispatch --backend exec --json` running the fake agent on a scenario file. */
export function fakeDispatchArgs(scenarioFile: string, extra: readonly string[] = []): string[] {
  return [
    "dispatch",
    "--backend",
    "exec",
    "--json",
    "--kill-grace",
    "300ms",
    ...extra,
    "--",
    process.execPath,
    FAKE_AGENT,
    scenarioFile,
  ];
}

/** An isolated CATHERD_HOME and the environment that points at it. */
export function isolatedHome(): { home: string; env: NodeJS.ProcessEnv } {
  const home = tempDir("catherd-home-");
  return { home, env: { ...process.env, CATHERD_HOME: home, CATHERD_RUN: "" } };
}

/** Every dispatch folder under a home (folders with admit.json or not). */
export function dispatchFolders(home: string): string[] {
  const root = path.join(home, "runs");
  if (!fs.existsSync(root)) return [];
  const out: string[] = [];
  for (const run of fs.readdirSync(root)) {
    const dispatches = path.join(root, run, "dispatches");
    if (!fs.existsSync(dispatches)) continue;
    for (const name of fs.readdirSync(dispatches)) {
      for (const id of fs.readdirSync(path.join(dispatches, name))) {
        if (id !== "latest") out.push(path.join(dispatches, name, id));
      }
    }
  }
  return out;
}

/** The id a `--json` dispatch printed. */
export function dispatchedOf(result: CliResult): {
  dispatchId: string;
  dir: string;
  name: string;
  supervisorPid: number;
} {
  return (
    JSON.parse(result.stdout) as {
      dispatched: { dispatchId: string; dir: string; name: string; supervisorPid: number };
    }
  ).dispatched;
}

/** A command's `--json` output, parsed; a failure shows its exit and the start of what it printed. */
export function json<T>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${result.code}): ${result.stdout.slice(0, 2000)}${result.stderr}`);
  }
}
