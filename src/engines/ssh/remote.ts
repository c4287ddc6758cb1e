import { runSsh, type SshResult } from "./command.js";
import { shellQuote } from "./quote.js";

// Asking a host about the supervisors catherd started there (specs/placement.md, "SSH"): one ssh call per
// host for all of a reading's supervisors. A pid alone means little — pids are reused — so a supervisor
// counts as running only while the process of that pid there still runs the supervisor of that very
// folder (its command line, `ps -o args=`, names the folder). The same test guards the kill of cancel.

/** A supervisor started on a host: its pid there and its dispatch folder. */
export interface Started {
  pid: number;
  dir: string;
}

/** Whether each of `started` still runs on `host`, in order; or the failed ssh call. */
export async function runningOn(
  host: string,
  started: readonly Started[],
): Promise<boolean[] | (SshResult & { ok: false })> {
  const script = started.map(
    (s, i) =>
      `a=$(ps -o args= -p ${s.pid} 2>/dev/null); case $a in *${shellQuote(s.dir)}*) echo "${i} running" ;; *) echo "${i} gone" ;; esac`,
  );
  const result = await runSsh(host, "sh -s", { input: `${script.join("\n")}\n` });
  if (!result.ok) return result;
  const running = new Set([...result.stdout.matchAll(/^(\d+) running$/gm)].map((match) => Number(match[1])));
  return started.map((_s, i) => running.has(i));
}

/**
 * SIGTERM to the supervisor of `started` on `host`, if that pid there still runs it; a supervisor already
 * gone is no error. The failed ssh call, else null.
 */
export async function terminateOn(
  host: string,
  started: Started,
): Promise<(SshResult & { ok: false }) | null> {
  const script = `a=$(ps -o args= -p ${started.pid} 2>/dev/null); case $a in *${shellQuote(started.dir)}*) kill -TERM ${started.pid} ;; esac; true\n`;
  const result = await runSsh(host, "sh -s", { input: script });
  return result.ok ? null : result;
}
