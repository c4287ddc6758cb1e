import { execFile } from "node:child_process";
import { CatherdError } from "../../domain/errors.js";
import { engineWords } from "./output.js";

// One way to run a Slurm client command (sbatch, squeue, scontrol, sacct, scancel): a hook into the
// outside, so every call has a timeout, and its failure is a value carrying the engine's own words; the
// caller turns it into an error (`engineError`) or picks a safe fallback. The commands find their cluster
// as Slurm's own do: SLURM_CONF, else the configuration installed on the host.

/** The end of a fix for a Slurm that cannot take a dispatch: place it elsewhere, or forget the run's. */
export const NOT_PLACED_FIX =
  "or dispatch with --placement local (--run-placement none forgets a run's remembered placement)";

/** The default bound on one Slurm call: the controller answers in milliseconds, or is in trouble. */
export const SLURM_TIMEOUT_MS = 20_000;
const MAX_BUFFER = 16 * 1024 * 1024;

export type SlurmResult =
  | { ok: true; stdout: string; stderr: string }
  | {
      ok: false;
      /** `missing`: not installed (not on PATH); `timeout`: no answer in time; `refused`: it answered non-zero. */
      failure: "missing" | "timeout" | "refused";
      /** The command as run, for messages: `sbatch --parsable …`. */
      command: string;
      stdout: string;
      stderr: string;
      /** The engine's own words (its error lines), or what went wrong running it. */
      words: string;
      exitCode: number | null;
    };

export interface SlurmCallOptions {
  timeoutMs?: number;
  /** Text for the command's stdin (sbatch reads the batch script from it). */
  input?: string;
  /** The environment; the process's by default. */
  env?: NodeJS.ProcessEnv;
}

/** Runs one Slurm command. Never throws. */
export function runSlurm(
  program: string,
  args: readonly string[],
  options: SlurmCallOptions = {},
): Promise<SlurmResult> {
  const timeoutMs = options.timeoutMs ?? SLURM_TIMEOUT_MS;
  const command = [program, ...args].join(" ");
  return new Promise((resolve) => {
    const child = execFile(
      program,
      args,
      {
        env: { ...(options.env ?? process.env), LC_ALL: "C" },
        timeout: timeoutMs,
        killSignal: "SIGKILL",
        maxBuffer: MAX_BUFFER,
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve({ ok: true, stdout, stderr });
          return;
        }
        const errno = (error as NodeJS.ErrnoException).code;
        const failure = errno === "ENOENT" ? "missing" : error.killed ? "timeout" : "refused";
        const words =
          failure === "missing"
            ? `${program} is not installed here (not found on PATH)`
            : failure === "timeout"
              ? `${program} did not answer within ${timeoutMs} ms`
              : engineWords(stderr) || `${program} failed (${error.message.split("\n")[0]})`;
        resolve({
          ok: false,
          failure,
          command,
          stdout,
          stderr,
          words,
          exitCode: typeof error.code === "number" ? error.code : null,
        });
      },
    );
    // A child that cannot be started has no stdin; its error is reported through the callback.
    child.stdin?.on("error", () => {});
    child.stdin?.end(options.input ?? "");
  });
}

/** A failed Slurm call as the one user-facing error: what was asked, the engine's words, a fix. */
export function engineError(result: SlurmResult & { ok: false }, asked: string): CatherdError {
  switch (result.failure) {
    case "missing":
      return new CatherdError("E_ENGINE_MISSING", `cannot ${asked}: ${result.words}`, {
        fix: `install Slurm's client commands on this host (Debian: apt-get install slurm-client), ${NOT_PLACED_FIX}`,
      });
    case "timeout":
      return new CatherdError("E_ENGINE_TIMEOUT", `cannot ${asked}: ${result.words}`, {
        fix: "check the controller answers (scontrol ping), then try again",
      });
    case "refused":
      return new CatherdError("E_ENGINE_REFUSED", `cannot ${asked}: slurm says: ${result.words}`, {
        fix: `see what Slurm said above; the call was: ${result.command}`,
      });
  }
}
