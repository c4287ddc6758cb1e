import type { Clock } from "../clock.js";
import { waitUntil } from "../wait-until.js";
import { type DispatchCgroup, folderFor, isPopulated, membersOf } from "./dispatch-cgroup.js";
import { keyedNumber, readCgroupFile, writeCgroupFile } from "./files.js";

const STEP_MS = 10;
const FREEZE_ROUNDS = 5;

/**
 * Kills every process in the cgroup, whatever session, parent or environment it has, and waits (up to
 * `timeoutMs`) until none is left. With `cgroup.kill` the kernel does it atomically; else the cgroup is
 * frozen (a frozen process cannot fork), each member SIGKILLed, and thawed so the kills land, in rounds
 * until it is empty. Returns the pids that were members when the kill began; `emptied` says whether the
 * cgroup was empty in the end (a process stuck in the kernel, state D, can outlast the timeout).
 */
export async function killCgroup(
  cgroup: DispatchCgroup,
  clock: Clock,
  timeoutMs = 5000,
): Promise<{ members: number[]; emptied: boolean }> {
  const members = membersOf(cgroup);
  const deadline = clock.now() + timeoutMs;
  const killer = folderFor(cgroup, "kill");
  if (killer === null) return { members, emptied: !isPopulated(cgroup) };
  if (cgroup.layout.kill === "cgroup.kill") {
    writeCgroupFile(killer.dir, "cgroup.kill", "1");
  } else {
    for (let round = 0; round < FREEZE_ROUNDS && isPopulated(cgroup) && clock.now() < deadline; round++) {
      await freezeAndKill(killer, cgroup, clock, deadline);
    }
  }
  const emptied = await until(() => !isPopulated(cgroup), clock, deadline);
  return { members, emptied };
}

async function freezeAndKill(
  killer: { version: 1 | 2; dir: string },
  cgroup: DispatchCgroup,
  clock: Clock,
  deadline: number,
): Promise<void> {
  const v2 = killer.version === 2;
  writeCgroupFile(killer.dir, v2 ? "cgroup.freeze" : "freezer.state", v2 ? "1" : "FROZEN");
  try {
    // A member that cannot be frozen at once (in the kernel) is killed anyway when the wait runs out.
    await until(() => isFrozen(killer), clock, Math.min(deadline, clock.now() + 1000));
    for (const pid of membersOf(cgroup)) {
      if (pid <= 1 || pid === process.pid) continue;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  } finally {
    writeCgroupFile(killer.dir, v2 ? "cgroup.freeze" : "freezer.state", v2 ? "0" : "THAWED");
  }
  await until(() => !isPopulated(cgroup), clock, Math.min(deadline, clock.now() + 500));
}

function isFrozen(killer: { version: 1 | 2; dir: string }): boolean {
  if (killer.version === 2) return keyedNumber(readCgroupFile(killer.dir, "cgroup.events"), "frozen") === 1;
  return readCgroupFile(killer.dir, "freezer.state")?.trim() === "FROZEN";
}

/** Polls `check` every STEP_MS until it holds (true) or `deadline` on the clock passes (false). */
async function until(check: () => boolean, clock: Clock, deadline: number): Promise<boolean> {
  return (await waitUntil(() => (check() ? true : undefined), { clock, deadline, pollMs: STEP_MS })) ?? false;
}
