import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import type { Clock } from "./clock.js";
import { groupAlive, startTimeOf } from "./process-identity.js";
import { type StopReport, stopDispatch } from "./stop.js";
import { findByDispatchVariable } from "./sweep.js";
import { waitUntil } from "./wait-until.js";

// A user's shell command run as a hook (a notification): `sh -c` — what people expect of
// `notify-send …`, `curl … | …` or `printf '\a'` — in its own process group, fed `stdin`, its output
// appended to a log, bounded in time. Nothing it starts outlives its deadline: at the deadline its group
// gets SIGTERM, a grace, SIGKILL, and whatever left the group but still carries the hook's
// CATHERD_DISPATCH value is killed too (the same stop sequence a dispatch gets).

export interface ShellHook {
  command: string;
  /** Its whole environment; must carry CATHERD_DISPATCH=`sweepId`. */
  env: NodeJS.ProcessEnv;
  /** The value of CATHERD_DISPATCH its processes carry: how the stop finds those that left its group. */
  sweepId: string;
  stdin: string;
  cwd: string;
  /** Where its stdout and stderr go, appended, at most `maxOutputBytes` of them. */
  logFile: string;
  timeoutMs: number;
  killGraceMs: number;
  maxOutputBytes: number;
}

/** How a hook ended, as fields. */
export interface HookOutcome {
  /** Its exit code, null when a signal ended it or it never started. */
  code: number | null;
  signal: string | null;
  /** The deadline came while it (or something it started) still ran: the stop sequence ran. */
  timedOut: boolean;
  durationMs: number;
  /** The spawn's error, when `sh` could not be started at all. */
  error: string | null;
  stop: StopReport | null;
  /** Output bytes past maxOutputBytes, not written. */
  droppedBytes: number;
}

const LEFTOVER_POLL_MS = 500;

/** How `sh` ended: by code, by signal, or not started (`error`). */
interface HookExit {
  code: number | null;
  signal: string | null;
  error: string | null;
}

/** The hook's `sh`, started: its pid and identity (null when the spawn failed), its end, as seen so far. */
interface StartedHook {
  child: ChildProcess;
  pid: number | null;
  leader: { pid: number; startTime: string | null } | null;
  ended: Promise<HookExit>;
  /** Its end once seen, else null. */
  exit(): HookExit | null;
}

/** Runs the hook to its end or its deadline; never throws for anything the command does. */
export async function runShellHook(hook: ShellHook, clock: Clock): Promise<HookOutcome> {
  const startedAt = clock.now();
  const deadline = startedAt + hook.timeoutMs;
  const log = boundedLog(hook.logFile, hook.maxOutputBytes);
  const started = startHook(hook, log.append);
  await waitUntil(() => (started.exit() !== null ? true : undefined), {
    clock,
    deadline,
    pollMs: LEFTOVER_POLL_MS,
    watch: (wake) => {
      void started.ended.then(wake);
      return () => {};
    },
  });
  // Whatever it started may finish its work until the deadline (a `curl … &`), not past it.
  const leftovers = () =>
    (started.pid !== null && groupAlive(started.pid)) || findByDispatchVariable(hook.sweepId).length > 0;
  const clear = await waitUntil(() => (leftovers() ? undefined : true), {
    clock,
    deadline,
    pollMs: LEFTOVER_POLL_MS,
  });
  const timedOut = clear !== true;
  const stop = timedOut ? await stopHook(hook, started, clock) : null;
  started.child.stdout?.destroy();
  started.child.stderr?.destroy();
  log.close();
  const how = started.exit() ?? { code: null, signal: null, error: null };
  return {
    code: how.code,
    signal: how.signal,
    timedOut,
    durationMs: Math.round(clock.now() - startedAt),
    error: how.error,
    stop,
    droppedBytes: log.droppedBytes(),
  };
}

/** The hook's log, appended to: its first `maxBytes` bytes of output are written, the rest counted. */
function boundedLog(file: string, maxBytes: number) {
  const log = fs.openSync(file, "a", 0o600);
  let written = 0;
  let dropped = 0;
  return {
    append: (chunk: Buffer) => {
      const room = Math.max(0, maxBytes - written);
      if (room > 0) {
        const part = chunk.subarray(0, room);
        try {
          fs.writeSync(log, part);
        } catch {
          // a full disk loses the hook's output, not the hook
        }
        written += part.length;
      }
      dropped += chunk.length - Math.min(room, chunk.length);
    },
    droppedBytes: () => dropped,
    close: () => fs.closeSync(log),
  };
}

/** `sh -c` the command in a group of its own, fed its stdin, its output to `append`. */
function startHook(hook: ShellHook, append: (chunk: Buffer) => void): StartedHook {
  const child = spawn("/bin/sh", ["-c", hook.command], {
    cwd: hook.cwd,
    env: hook.env,
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const pid = child.pid ?? null;
  const leader = pid === null ? null : { pid, startTime: startTimeOf(pid) };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  // A command that does not read its stdin (most) must not make the write throw.
  child.stdin?.on("error", () => {});
  child.stdin?.end(hook.stdin);
  const ended = new Promise<HookExit>((resolve) => {
    child.once("error", (error) => resolve({ code: null, signal: null, error: error.message }));
    // "close": its output pipes are drained too (unless something it started holds them open).
    child.once("exit", (code, signal) => resolve({ code, signal, error: null }));
  });
  let seen: HookExit | null = null;
  void ended.then((e) => {
    seen = e;
  });
  return { child, pid, leader, ended, exit: () => seen };
}

/** The stop sequence at the deadline: the hook's group and whatever carries its CATHERD_DISPATCH value. */
async function stopHook(hook: ShellHook, started: StartedHook, clock: Clock): Promise<StopReport> {
  const { pid, leader } = started;
  const stop = await stopDispatch(
    {
      dispatchId: hook.sweepId,
      pgid: pid,
      leader: leader?.startTime == null ? null : { pid: leader.pid, startTime: leader.startTime },
      killGraceMs: hook.killGraceMs,
    },
    clock,
  );
  await Promise.race([started.ended, clock.sleep(1000)]);
  return stop;
}
