import { execFile } from "node:child_process";

// One way to run git: a hook into the outside, so every call has a timeout and its failure is a value
// (the caller picks the safe fallback), never a throw.

/** The default bound on one git call; calls that hash or check out files pass their own. */
export const GIT_TIMEOUT_MS = 5000;
const MAX_BUFFER = 64 * 1024 * 1024;

/** Variables that would point git at another repository, index or work tree than the folder asked about. */
const REDIRECTING = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX"];

export type GitResult =
  | { ok: true; stdout: string }
  | { ok: false; stderr: string; timedOut: boolean; notStarted: boolean };

export interface GitCallOptions {
  timeoutMs?: number;
  /** Added to the environment (for example GIT_INDEX_FILE for a private index). */
  env?: Record<string, string>;
}

/** Runs `git <args>` in `cwd`. Never takes optional locks: the agent may be running git in the same tree. */
export function runGit(
  cwd: string,
  args: readonly string[],
  options: GitCallOptions = {},
): Promise<GitResult> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of REDIRECTING) delete env[name];
  Object.assign(env, options.env, { GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" });
  return new Promise((resolve) => {
    execFile(
      "git",
      args,
      { cwd, env, timeout: options.timeoutMs ?? GIT_TIMEOUT_MS, maxBuffer: MAX_BUFFER, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve({ ok: true, stdout });
          return;
        }
        const code = (error as NodeJS.ErrnoException).code;
        resolve({
          ok: false,
          stderr: stderr.trim() || error.message,
          timedOut: error.killed === true || error.signal === "SIGTERM",
          notStarted: code === "ENOENT",
        });
      },
    );
  });
}

/** The trimmed output of `git <args>`, or null when it failed for any reason. */
export async function gitLine(
  cwd: string,
  args: readonly string[],
  options?: GitCallOptions,
): Promise<string | null> {
  const result = await runGit(cwd, args, options);
  return result.ok ? result.stdout.trim() : null;
}

/** One line saying why a git call failed, for a log or an error message. */
export function whyFailed(result: GitResult & { ok: false }): string {
  if (result.notStarted) return "git could not be started (not on PATH, or the folder is gone)";
  if (result.timedOut) return "git did not answer in time";
  return result.stderr.split("\n").find((line) => line.trim() !== "") ?? "git failed";
}
