import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { admit } from "../../src/dispatch/admission.js";
import { inspectDispatch } from "../../src/dispatch/read/inspect.js";
import { validateDispatch } from "../../src/dispatch/request/dispatch-request.js";
import { systemClock } from "../../src/infra/clock.js";
import { dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { waitForFile } from "../helpers/wait.js";

// Admission under the run's lock only judges (specs/dispatch.md §2): it reads the markers that could
// refuse the dispatch, counts a dead dispatch as not live, and leaves recording it — git snapshot, patch,
// sizes — to the dispatcher once the lock is released.

/** A request to run `true` in `cwd`, as `catherd dispatch` would make it. */
function request(name: string, cwd: string, extra: { owns?: string | undefined; maxParallel?: string } = {}) {
  return validateDispatch({
    backend: "exec",
    name,
    run: "default",
    cwd,
    env: [],
    brief: null,
    rest: ["true"],
    environment: process.env,
    ...extra,
  });
}

/**
 * `n` dispatches admitted into the run whose supervisor is gone (supervisor.json names this process with
 * another start time: dead by pid and start time) and whose agent never ran: each is `lost`, unrecorded.
 */
async function deadDispatches(home: string, cwd: string, n: number, owns?: (i: number) => string) {
  const dirs: string[] = [];
  for (let i = 0; i < n; i++) {
    const admitted = await admit(request(`dead-${i}`, cwd, { owns: owns?.(i) }), home, systemClock);
    fs.writeFileSync(
      path.join(admitted.dir, "supervisor.json"),
      JSON.stringify({ schema: 1, pid: process.pid, startTime: "0", startedAt: new Date().toISOString() }),
    );
    dirs.push(admitted.dir);
  }
  for (const dir of dirs) expect(inspectDispatch(dir).state).toBe("lost");
  return dirs;
}

const recorded = (dir: string) => fs.existsSync(path.join(dir, "record.json"));

describe("admission under the run's lock", () => {
  it("counts dead dispatches as not live at the run's cap, records none of them, and names them for after the lock", async () => {
    const { home } = isolatedHome();
    const cwd = tempDir();
    const dead = await deadDispatches(home, cwd, 3);
    const admitted = await admit(request("newcomer", cwd, { maxParallel: "3" }), home, systemClock);
    expect(admitted.queued).toBeNull();
    expect([...admitted.withDuties].sort()).toEqual([...dead].sort());
    expect(dead.filter(recorded)).toEqual([]);
  });

  it("reads only the markers that could refuse the dispatch: none without caps or owns, else the overlapping one", async () => {
    const { home } = isolatedHome();
    const cwd = tempDir();
    const dead = await deadDispatches(home, cwd, 3, (i) => `part-${i}/`);
    const free = await admit(request("free", cwd), home, systemClock);
    expect(free.withDuties).toEqual([]);
    const overlapping = await admit(request("overlapping", cwd, { owns: "part-1/x.ts" }), home, systemClock);
    expect(overlapping.queued).toBeNull();
    expect(overlapping.withDuties).toEqual([dead[1]]);
    expect(dead.filter(recorded)).toEqual([]);
  });

  it("has catherd dispatch record the dead dispatches it found, once its own supervisor is up", async () => {
    const { home, env } = isolatedHome();
    const cwd = tempDir();
    const dead = await deadDispatches(home, cwd, 2);
    const result = await runCli(
      ["dispatch", "--backend", "exec", "--json", "--cwd", cwd, "--max-parallel", "2", "--", "true"],
      { env },
    );
    expect(result.stderr).toBe("");
    const d = dispatchedOf(result);
    await waitForFile(path.join(d.dir, "record.json"), 20_000);
    expect(reapAll([d.dispatchId])).toBe(0);
    expect(
      dead.map((dir) => JSON.parse(fs.readFileSync(path.join(dir, "record.json"), "utf8")).status),
    ).toEqual(["lost", "lost"]);
  });
});
