import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { detectCgroups } from "../../src/infra/cgroup/detect.js";
import { cgroupName } from "../../src/infra/cgroup/dispatch-cgroup.js";
import { startTimeOf } from "../../src/infra/process-identity.js";
import { ROOT, readJson, reapAll, startSupervisor, tempDir } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForFile, waitForLine } from "../helpers/wait.js";

// The supervisor's containment (specs/supervisor.md, "Containment") with real processes: the agent in a
// cgroup of its own where this machine gives one (root, as in CI), the group and sweep where it does not.

const layout = detectCgroups();
const noCgroups =
  layout === null ? "this process may create no cgroup (not root, no delegated subtree)" : null;
const holds = (role: "memory" | "pids") => layout?.hierarchies.some((h) => h.roles.includes(role)) === true;
const FORK_BOMB = path.join(ROOT, "test/fixtures/fork-bomb.pl");
const MEMORY_HOG = path.join(ROOT, "test/fixtures/memory-hog.pl");
const MiB = 1024 * 1024;

const dispatched: string[] = [];
const strays: { pid: number; startTime: string }[] = [];

afterEach(() => {
  for (const stray of strays.splice(0)) {
    if (startTimeOf(stray.pid) === stray.startTime) killPid(stray.pid);
  }
  expect(reapAll(dispatched.splice(0)), "processes left running by the dispatch").toBe(0);
});

/** A hand-written folder running `sh -c script` (given the folder and its id) with the given spec fields. */
function shellFolder(
  script: string | ((dir: string, id: string) => string),
  spec: Record<string, unknown> = {},
) {
  const id = `c-${randomBytes(5).toString("hex")}`;
  const dir = path.join(tempDir(), id);
  fs.mkdirSync(dir, { mode: 0o700 });
  const text = typeof script === "string" ? script : script(dir, id);
  fs.writeFileSync(
    path.join(dir, "spec.json"),
    JSON.stringify({ cmd: "/bin/sh", args: ["-c", text], pollMs: 20, killGraceMs: 300, ...spec }),
  );
  dispatched.push(id);
  return { dir, id };
}

async function superviseWith(dir: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 30_000) {
  const run = startSupervisor(dir, env);
  const timer = setTimeout(() => run.child.kill("SIGKILL"), timeoutMs);
  const result = await run.done;
  clearTimeout(timer);
  return result;
}

/** The agent starts a grandchild that leaves its session, clears its environment and is orphaned. */
function escapeeScript(pidFile: string) {
  return `(setsid env -i /bin/sh -c 'sleep 600 & echo $! > "$0"' '${pidFile}' &); echo started; sleep 0.3`;
}

async function escapee(pidFile: string) {
  const pid = Number(await waitForLine(pidFile));
  const startTime = startTimeOf(pid);
  if (startTime !== null) strays.push({ pid, startTime });
  return pid;
}

describe("containment", () => {
  it.skipIf(noCgroups !== null)(
    "kills an env-clearing double-forked escapee through the cgroup",
    async () => {
      const pidFile = path.join(tempDir(), "escapee.pid");
      const { dir, id } = shellFolder(escapeeScript(pidFile));
      expect((await superviseWith(dir)).code).toBe(0);
      const pid = await escapee(pidFile);
      expect(isAlive(pid), "the escapee outlived its dispatch").toBe(false);
      const exit = readJson(path.join(dir, "exit.json"));
      expect(exit).toMatchObject({ reason: "exited", code: 0, containment: "cgroup", adoptions: 0 });
      expect((exit.stop as { swept: number }).swept).toBeGreaterThanOrEqual(1);
      expect(exit.cpuSeconds).toEqual(expect.any(Number));
      if (holds("memory")) expect(exit.peakMemoryBytes).toBeGreaterThan(0);
      // The cgroup is removed with the dispatch.
      for (const h of layout?.hierarchies ?? []) {
        expect(fs.existsSync(path.join(h.parent, cgroupName(id, dir)))).toBe(false);
      }
    },
  );

  it("falls back to group+sweep where it has no cgroup, and says so: the escapee then survives", async () => {
    const pidFile = path.join(tempDir(), "escapee.pid");
    const { dir } = shellFolder(escapeeScript(pidFile));
    expect((await superviseWith(dir, { ...process.env, CATHERD_TEST_ONLY_NO_CGROUP: "1" })).code).toBe(0);
    const pid = await escapee(pidFile);
    // The known limit the cgroup closes: neither parent chain nor CATHERD_DISPATCH leads to it.
    expect(isAlive(pid)).toBe(true);
    expect(readJson(path.join(dir, "exit.json"))).toMatchObject({
      reason: "exited",
      containment: "group+sweep",
      cpuSeconds: null,
      peakMemoryBytes: null,
      oomKills: null,
    });
    expect(fs.readFileSync(path.join(dir, "supervisor.log"), "utf8")).toContain(
      '"kind":"group+sweep","why":"cgroups disabled by CATHERD_TEST_ONLY_NO_CGROUP"',
    );
  });

  it.skipIf(!holds("memory"))("records an agent over its 64M as killed by the OOM killer", async () => {
    const { dir } = shellFolder(`echo hogging; exec perl '${MEMORY_HOG}'`, { memoryBytes: 64 * MiB });
    expect((await superviseWith(dir)).code).toBe(0);
    const exit = readJson(path.join(dir, "exit.json"));
    expect(exit).toMatchObject({
      reason: "exited",
      signal: "SIGKILL",
      containment: "cgroup",
      kind: "oom",
      error: { code: "E_AGENT_OOM", message: expect.stringContaining("memory limit of 64M") },
    });
    expect(exit.oomKills).toBeGreaterThanOrEqual(1);
    expect(exit.peakMemoryBytes).toBeLessThanOrEqual(64 * MiB);
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({
      status: "failed",
      error: { code: "E_AGENT_OOM", kind: "oom" },
    });
  });

  it.skipIf(!holds("pids"))("holds a fork bomb to --max-procs 50 and stops all of it", async () => {
    const marker = path.join(tempDir(), "bombing");
    // The bomb says nothing: the idle limit ends it once it has pressed against the cap for a while. It
    // refuses to start outside its own cgroup, named after the folder.
    const bomb = (dir: string, id: string) =>
      `touch '${marker}'; exec perl '${FORK_BOMB}' '${cgroupName(id, dir)}'`;
    const { dir, id } = shellFolder(bomb, { maxProcs: 50, idleMs: 2500 });
    const name = cgroupName(id, dir);
    const run = startSupervisor(dir);
    await waitForFile(marker);
    const pids = layout?.hierarchies.find((h) => h.roles.includes("pids"));
    const folder = path.join(pids?.parent ?? "", name);
    const seen = await waitFor(
      "the bomb at its cap",
      () => {
        const events = readText(path.join(folder, "pids.events"));
        return /max [1-9]/.test(events)
          ? readText(path.join(folder, "cgroup.procs")).trim().split("\n")
          : undefined;
      },
      20_000,
    );
    expect(seen.length).toBeGreaterThan(10);
    expect(seen.length).toBeLessThanOrEqual(50);
    expect((await run.done).code).toBe(0);
    const exit = readJson(path.join(dir, "exit.json"));
    expect(exit).toMatchObject({ reason: "idle-timeout", containment: "cgroup" });
    expect(seen.map(Number).filter(isAlive)).toEqual([]);
    expect(fs.existsSync(folder)).toBe(false);
  });

  it.skipIf(noCgroups !== null)(
    "reports a command that does not exist as spawn-failed, as without a cgroup",
    async () => {
      const { dir, id } = shellFolder("", { cmd: "no-such-agent-cli", args: [] });
      expect((await superviseWith(dir)).code).toBe(0);
      expect(readJson(path.join(dir, "exit.json"))).toMatchObject({
        reason: "spawn-failed",
        error: { code: "E_SPAWN_FAILED", message: expect.stringContaining("ENOENT") },
      });
      for (const h of layout?.hierarchies ?? []) {
        expect(fs.existsSync(path.join(h.parent, cgroupName(id, dir)))).toBe(false);
      }
    },
  );
});

function readText(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
