import * as fs from "node:fs";
import * as path from "node:path";
import type { Clock } from "../src/infra/clock.js";
import type { FileWriter } from "./deps.js";
import type { PausePoint } from "./phases.js";

// Test-only fault injection for the real supervisor process (specs/supervisor.md, "Test hooks"). Each hook
// is selected by a CATHERD_TEST_ONLY_* environment variable and does nothing when it is unset; they ship in
// the bundle so that the fault suite drives the supervisor users run. The agent never sees them: every
// CATHERD_* variable but the home and the slot count is scrubbed from its environment.

/**
 * With CATHERD_TEST_ONLY_PAUSE_AT=<point>: writes `<dir>/test-paused-<point>` (holding our pid) and stops this
 * process with SIGSTOP, so that a test can SIGKILL it exactly there, or SIGCONT it. The points are the
 * phases of phases.ts and the points within them; a phase's entry pauses through enterPhase.
 */
export function pauseAt(point: PausePoint, dir: string): void {
  if (process.env.CATHERD_TEST_ONLY_PAUSE_AT !== point) return;
  try {
    fs.writeFileSync(path.join(dir, `test-paused-${point}`), `${process.pid}\n`, { mode: 0o600 });
  } catch {
    // the test waits on the marker; without it, it times out and says so
  }
  process.kill(process.pid, "SIGSTOP");
}

/**
 * With CATHERD_TEST_ONLY_FAIL_WRITE=<file>:<ERRNO>[,…] (e.g. `exit.json:ENOSPC`): the file writer throws that
 * error for those file names, as a full or read-only disk would.
 */
export function withWriteFaults(
  files: FileWriter,
  spec = process.env.CATHERD_TEST_ONLY_FAIL_WRITE,
): FileWriter {
  if (spec === undefined || spec === "") return files;
  const faults = new Map<string, string>();
  for (const item of spec.split(",")) {
    const [name, code] = item.split(":");
    if (name !== undefined && name !== "") faults.set(name, code ?? "EIO");
  }
  const check = (file: string) => {
    const code = faults.get(path.basename(file));
    if (code !== undefined) {
      // Shaped as node's own: errno's code, the call and the path.
      throw Object.assign(new Error(`${code}: injected fault, open '${file}'`), {
        code,
        syscall: "open",
        path: file,
      });
    }
  };
  return {
    writeJson(file, value) {
      check(file);
      files.writeJson(file, value);
    },
    createJson(file, value) {
      check(file);
      return files.createJson(file, value);
    },
  };
}

/**
 * With CATHERD_TEST_ONLY_NO_CGROUP=1 the supervisor starts its agent without a cgroup even where it could have
 * one: the group+sweep fall-back, tested on machines that have cgroups.
 */
export function cgroupsDisabledForTest(): boolean {
  return process.env.CATHERD_TEST_ONLY_NO_CGROUP === "1";
}

/**
 * With CATHERD_TEST_ONLY_WALL_SHIFT_MS=<ms> (negative: behind) this supervisor's wall clock reads that far
 * from the machine's, its monotonic clock untouched: a process whose wall clock jumped, without changing
 * the machine's.
 */
export function withWallShift(clock: Clock, spec = process.env.CATHERD_TEST_ONLY_WALL_SHIFT_MS): Clock {
  const shiftMs = Number(spec);
  if (spec === undefined || spec === "" || !Number.isFinite(shiftMs) || shiftMs === 0) return clock;
  return {
    now: () => clock.now(),
    wallNow: () => new Date(clock.wallNow().getTime() + shiftMs),
    sleep: (ms, signal) => clock.sleep(ms, signal),
  };
}
