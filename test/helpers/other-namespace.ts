import { execFile } from "node:child_process";
import * as os from "node:os";
import { promisify } from "node:util";
import { resolveExecutable } from "../../src/infra/which.js";
import type { CliResult } from "./cli.js";
import { CLI_MAIN } from "./folders.js";

// A catherd command in a PID and UTS namespace of its own, with a /proc of its own (`unshare --pid --uts
// --fork --mount-proc`): a container that shares the home, standing in for another host. Its /proc holds
// none of the test's processes, and its host name may differ.

const unshare = resolveExecutable("unshare", process.env.PATH ?? "");

/** Why a command cannot run in another PID namespace here, or null when it can. */
export function otherNamespaceUnavailable(): string | null {
  if (process.platform !== "linux") return "PID namespaces are Linux's";
  if (process.getuid?.() !== 0) return "unshare --pid needs root";
  return unshare === null ? "unshare (util-linux) is not installed" : null;
}

/** Runs `catherd <args>` in another PID and UTS namespace, with a deadline. */
export async function runInOtherNamespace(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CliResult> {
  const argv = ["--pid", "--uts", "--fork", "--mount-proc", process.execPath, CLI_MAIN, ...args];
  try {
    const { stdout, stderr } = await promisify(execFile)(unshare as string, argv, {
      env: options.env ?? process.env,
      cwd: os.tmpdir(),
      timeout: options.timeoutMs ?? 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? null, stdout: e.stdout ?? "", stderr: e.stderr ?? String(error) };
  }
}
