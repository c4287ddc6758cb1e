import { spawn } from "node:child_process";

/** What `<bin> --version` did within its deadline. */
export type VersionAnswer =
  | { kind: "answered"; code: number | null; signal: string | null; output: string }
  | { kind: "silent"; output: string }
  | { kind: "unstartable"; error: string };

/** Output kept from a version probe: the CLI's words, not a log. */
const MAX_OUTPUT_CHARS = 16 * 1024;

/**
 * Runs `bin args` with stdin closed, in a process group of its own, and collects what it prints (stdout
 * then stderr). At `timeoutMs` the group is killed — it is still ours: its leader has not been reaped —
 * and the answer is `silent`. A command that cannot be started is `unstartable`.
 */
export function probeVersion(
  bin: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<VersionAnswer> {
  return new Promise((resolve) => {
    let out = "";
    let err = "";
    const keep = (text: string, chunk: Buffer) =>
      text.length >= MAX_OUTPUT_CHARS ? text : (text + chunk.toString("utf8")).slice(0, MAX_OUTPUT_CHARS);
    const child = spawn(bin, [...args], {
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      env: { ...process.env, NO_COLOR: "1" },
    });
    let settled = false;
    const finish = (answer: VersionAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    const timer = setTimeout(() => {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      finish({ kind: "silent", output: `${out}\n${err}`.trim() });
    }, timeoutMs);
    timer.unref();
    child.stdout.on("data", (chunk: Buffer) => {
      out = keep(out, chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err = keep(err, chunk);
    });
    child.on("error", (error) => finish({ kind: "unstartable", error: error.message }));
    child.on("close", (code, signal) =>
      finish({ kind: "answered", code, signal, output: `${out}\n${err}`.trim() }),
    );
  });
}
