import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { parseMountInfo } from "../../src/infra/cgroup/cgroup-mounts.js";
import { readUsage } from "../../src/infra/cgroup/cgroup-usage.js";
import { type CgroupLayout, type DetectOptions, detectCgroups } from "../../src/infra/cgroup/detect.js";
import {
  type CgroupLimits,
  cgroupName,
  createDispatchCgroup,
  type DispatchCgroup,
  isPopulated,
  membersOf,
  openDispatchCgroup,
  procsFiles,
  removeDispatchCgroup,
} from "../../src/infra/cgroup/dispatch-cgroup.js";
import { JOIN_FAILED_EXIT, joinCommand, joinStatus } from "../../src/infra/cgroup/join.js";
import { killCgroup } from "../../src/infra/cgroup/kill.js";
import { systemClock } from "../../src/infra/clock.js";
import { readProcStat } from "../../src/infra/proc-stat.js";
import { startTimeOf } from "../../src/infra/process-identity.js";
import { findByDispatchVariable, findDescendants } from "../../src/infra/sweep.js";
import { ROOT, tempDir } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForLine } from "../helpers/wait.js";

// Containment with real processes in real cgroups. These run wherever this process may create cgroups
// (root, as in CI, or a delegated v2 subtree); elsewhere they are skipped, and the first test says why.

const mounts =
  process.platform === "linux" ? parseMountInfo(fs.readFileSync("/proc/self/mountinfo", "utf8")) : [];
const defaultLayout = detectCgroups();
const unavailable =
  defaultLayout !== null
    ? null
    : process.platform !== "linux"
      ? "cgroups are Linux only"
      : mounts.length === 0
        ? "no cgroup hierarchy is mounted"
        : "this user may not create cgroups (not root, no delegated subtree)";

const FORK_BOMB = path.join(ROOT, "test/fixtures/fork-bomb.pl");
const MEMORY_HOG = path.join(ROOT, "test/fixtures/memory-hog.pl");
const MiB = 1024 * 1024;

const cgroups: DispatchCgroup[] = [];
const children: ChildProcess[] = [];
const strays: { pid: number; startTime: string }[] = [];

afterEach(async () => {
  for (const cgroup of cgroups.splice(0)) {
    await killCgroup(cgroup, systemClock).catch(() => {});
    removeDispatchCgroup(cgroup);
  }
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      killPid(-child.pid); // the group we created (detached)
    }
  }
  for (const stray of strays.splice(0)) {
    if (startTimeOf(stray.pid) === stray.startTime) killPid(stray.pid);
  }
});

function newCgroup(layout: CgroupLayout, limits: Partial<CgroupLimits> = {}) {
  const name = cgroupName(`test-${randomBytes(4).toString("hex")}`, tempDir());
  const made = createDispatchCgroup(layout, name, { memoryBytes: null, maxProcs: null, ...limits });
  cgroups.push(made.cgroup);
  return made;
}

/** Starts `cmd args` inside the cgroup, as the supervisor starts an agent: its own session, the wrapper. */
async function startInside(cgroup: DispatchCgroup, cmd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const argv = joinCommand(procsFiles(cgroup), cmd, args);
  const child = spawn(argv.cmd, argv.args, {
    detached: true,
    stdio: ["ignore", "ignore", "inherit", "pipe"],
    env: { PATH: process.env.PATH, ...env },
  });
  children.push(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const joined = await joinStatus(child.stdio[3] as Readable);
  return { child, pid: child.pid as number, joined, exited };
}

function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} after ${ms} ms`)), ms).unref(),
    ),
  ]);
}

describe("cgroup detection", () => {
  it("finds a cgroup wherever one is mounted and this process is root", () => {
    const root = process.platform === "linux" && process.getuid?.() === 0 && mounts.length > 0;
    if (!root) {
      expect(unavailable, "the reason the containment tests are skipped").not.toBeNull();
      return;
    }
    expect(defaultLayout, "a root process on a machine with cgroups mounted").not.toBeNull();
    const layout = defaultLayout as CgroupLayout;
    const roles = layout.hierarchies.flatMap((h) => h.roles);
    expect(layout.hierarchies[0]?.roles).toContain("kill");
    expect(new Set(roles).size, "each role in one hierarchy").toBe(roles.length);
    if (mounts.some((m) => m.version === 2)) {
      expect(layout.hierarchies[0]?.version, "the v2 hierarchy kills").toBe(2);
      expect(layout.kill).toBe(
        fs.existsSync(path.join(layout.hierarchies[0]?.parent ?? "", "cgroup.kill"))
          ? "cgroup.kill"
          : "freeze",
      );
    }
    for (const controller of ["memory", "pids"] as const) {
      if (mounts.some((m) => m.controllers.includes(controller))) expect(roles).toContain(controller);
    }
  });

  it("models older machines on request: v1 only (freezer), and v2 without cgroup.kill", () => {
    if (unavailable !== null) return;
    const v1 = detectCgroups({ unified: false });
    if (mounts.some((m) => m.controllers.includes("freezer"))) {
      expect(v1?.kill).toBe("freeze");
      expect(v1?.hierarchies.every((h) => h.version === 1)).toBe(true);
    }
    if (mounts.some((m) => m.version === 2))
      expect(detectCgroups({ cgroupKill: false })?.kill).toBe("freeze");
  });
});

const layouts: [string, DetectOptions][] = [
  ["the default layout", {}],
  ["v2 without cgroup.kill (freeze, kill, thaw)", { cgroupKill: false }],
  ["v1 only (the freezer hierarchy)", { unified: false }],
];

describe.skipIf(unavailable !== null)("a dispatch's cgroup", () => {
  describe.each(layouts)("in %s", (_, options) => {
    const layout = detectCgroups(options);

    it.skipIf(layout === null)("kills an env-clearing, double-forked, setsid escapee", async () => {
      const { cgroup } = newCgroup(layout as CgroupLayout);
      const dispatchId = `esc-${randomBytes(4).toString("hex")}`;
      const pidFile = path.join(tempDir(), "escapee.pid");
      // The agent's grandchild leaves its session, clears its environment and is orphaned to init.
      const script = `(setsid env -i /bin/sh -c 'sleep 600 & echo $! > "$0"' "$1" &); exec sleep 600`;
      const agent = await startInside(cgroup, "/bin/sh", ["-c", script, "agent", pidFile], {
        CATHERD_DISPATCH: dispatchId,
      });
      expect(agent.joined).toBe(true);
      const escapee = Number(await waitForLine(pidFile));
      const escapeeStart = startTimeOf(escapee);
      expect(escapeeStart).not.toBeNull();
      strays.push({ pid: escapee, startTime: escapeeStart as string });

      // What the parent-chain and environment sweep cannot see, the cgroup holds.
      await waitFor("the escapee orphaned", () =>
        readProcStat(escapee)?.ppid !== agent.pid ? true : undefined,
      );
      expect(findByDispatchVariable(dispatchId).map((p) => p.pid)).not.toContain(escapee);
      expect((await findDescendants([agent.pid])).map((p) => p.pid)).not.toContain(escapee);
      expect(membersOf(cgroup)).toEqual(expect.arrayContaining([agent.pid, escapee]));

      const killed = await killCgroup(cgroup, systemClock);
      expect(killed).toMatchObject({ emptied: true });
      expect(killed.members).toEqual(expect.arrayContaining([agent.pid, escapee]));
      expect(await withDeadline(agent.exited, 5000, "the agent still running")).toEqual({
        code: null,
        signal: "SIGKILL",
      });
      await waitFor("the escapee gone", () => (isAlive(escapee) ? undefined : true), 5000);
      expect(isPopulated(cgroup)).toBe(false);
      expect(removeDispatchCgroup(cgroup)).toBe(true);
      for (const { dir } of cgroup.folders) expect(fs.existsSync(dir)).toBe(false);
    });

    it.skipIf(layout === null)("counts the CPU time of everything that ran in it", async () => {
      const { cgroup } = newCgroup(layout as CgroupLayout);
      const busy = `my $t = 0; $t = (times)[0] + (times)[1] while $t < 0.3;`;
      const agent = await startInside(cgroup, "perl", ["-e", busy]);
      expect(agent.joined).toBe(true);
      expect(await withDeadline(agent.exited, 20_000, "the busy loop still running")).toEqual({
        code: 0,
        signal: null,
      });
      const usage = readUsage(cgroup);
      if ((layout as CgroupLayout).hierarchies.some((h) => h.roles.includes("cpu"))) {
        // perl counts in clock ticks, the kernel in nanoseconds: the two differ by a tick or two.
        expect(usage.cpuSeconds).toBeGreaterThanOrEqual(0.25);
        expect(usage.cpuSeconds).toBeLessThan(30);
      } else {
        expect(usage.cpuSeconds).toBeNull();
      }
    });
  });

  const layout = defaultLayout as CgroupLayout;
  const holds = (role: "memory" | "pids") => layout?.hierarchies.some((h) => h.roles.includes(role)) === true;

  it.skipIf(!holds("memory"))("OOM-kills a memory hog over its 64 MiB and counts the kill", async () => {
    const { cgroup, applied } = newCgroup(layout, { memoryBytes: 64 * MiB });
    expect(applied).toEqual({ memoryBytes: 64 * MiB, maxProcs: null });
    const hog = await startInside(cgroup, "perl", [MEMORY_HOG]);
    expect(hog.joined).toBe(true);
    expect(await withDeadline(hog.exited, 30_000, "the hog still running")).toEqual({
      code: null,
      signal: "SIGKILL",
    });
    const usage = readUsage(cgroup);
    expect(usage.oomKills).toBeGreaterThanOrEqual(1);
    expect(usage.peakMemoryBytes).toBeGreaterThan(32 * MiB);
    expect(usage.peakMemoryBytes).toBeLessThanOrEqual(64 * MiB);
  });

  it.skipIf(!holds("pids"))("holds a fork bomb to 50 processes, then kills all of it", async () => {
    const { cgroup, applied } = newCgroup(layout, { maxProcs: 50 });
    expect(applied).toEqual({ memoryBytes: null, maxProcs: 50 });
    const bomb = await startInside(cgroup, "perl", [FORK_BOMB, cgroup.name]);
    expect(bomb.joined).toBe(true);
    // The bomb has pressed against the cap: forks were refused.
    await waitFor(
      "refused forks",
      () => ((readUsage(cgroup).pidsLimitHits ?? 0) > 0 ? true : undefined),
      20_000,
    );
    const members = membersOf(cgroup);
    expect(members.length).toBeGreaterThan(10);
    expect(members.length).toBeLessThanOrEqual(50);
    const killed = await killCgroup(cgroup, systemClock);
    expect(killed.emptied).toBe(true);
    expect(killed.members.length).toBeLessThanOrEqual(50);
    expect(await withDeadline(bomb.exited, 5000, "the bomb still running")).toMatchObject({
      signal: "SIGKILL",
    });
    expect(members.filter(isAlive)).toEqual([]);
    expect(removeDispatchCgroup(cgroup)).toBe(true);
  });

  it("runs nothing when the cgroup cannot be joined, and says so", async () => {
    const { cgroup } = newCgroup(layout);
    expect(removeDispatchCgroup(cgroup)).toBe(true);
    const marker = path.join(tempDir(), "ran");
    const agent = await startInside(cgroup, "/bin/sh", ["-c", 'echo ran > "$0"', marker]);
    expect(agent.joined).toBe(false);
    expect(await withDeadline(agent.exited, 5000, "the wrapper still running")).toEqual({
      code: JOIN_FAILED_EXIT,
      signal: null,
    });
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("finds an existing dispatch cgroup again by name, and reuses an empty one", async () => {
    const { cgroup } = newCgroup(layout);
    expect(openDispatchCgroup(layout, cgroup.name)).toEqual(cgroup);
    expect(openDispatchCgroup(layout, `${cgroup.name}-none`)).toBeNull();
    const again = createDispatchCgroup(layout, cgroup.name, { memoryBytes: null, maxProcs: null });
    expect(again.cgroup.folders.map((f) => f.dir)).toEqual(cgroup.folders.map((f) => f.dir));
  });

  it("refuses to reuse a cgroup that still has members", async () => {
    const { cgroup } = newCgroup(layout);
    const agent = await startInside(cgroup, "sleep", ["600"]);
    expect(agent.joined).toBe(true);
    expect(() => createDispatchCgroup(layout, cgroup.name, { memoryBytes: null, maxProcs: null })).toThrow(
      /already has members/,
    );
    expect(openDispatchCgroup(layout, cgroup.name)).not.toBeNull();
  });
});

describe("cgroupName", () => {
  it("is stable for a folder, differs between folders of the same id, and is safe as a folder name", () => {
    expect(cgroupName("20261129T081530Z-k3x9qa", "/a/b")).toBe(
      cgroupName("20261129T081530Z-k3x9qa", "/a/b/"),
    );
    expect(cgroupName("x", "/a/x")).not.toBe(cgroupName("x", "/b/x"));
    expect(cgroupName("..", "/a")).toMatch(/^[A-Za-z0-9_][A-Za-z0-9._-]*$/);
    expect(cgroupName("a/b c", "/a")).toMatch(/^a_b_c-[0-9a-f]{10}$/);
  });
});
