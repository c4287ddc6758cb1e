import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../../src/infra/clock.js";
import { runPaths } from "../../../src/infra/paths.js";
import { RunModel } from "../../../src/ui/server/run-model.js";
import type { PushWire } from "../../../src/ui/wire.js";
import { dispatchedOf, isolatedHome, runCli } from "../../helpers/cli.js";
import { waitFor } from "../../helpers/wait.js";

// How the dashboard's model of a run finds its dispatches (specs/ui.md, "Live, and light"): a dispatch
// admitted and recorded between two flushes — its live marker come and gone before the folders are read
// — shows all the same, and the minute's reconcile finds what no watch reported.

let home: string;
let env: NodeJS.ProcessEnv;
const models: RunModel[] = [];

/** A recorded dispatch of `run`, by the real CLI and supervisor: its folder. */
async function recorded(run: string, name: string): Promise<{ dir: string; dispatchId: string }> {
  const d = dispatchedOf(
    await runCli(["dispatch", "--run", run, "--name", name, "--backend", "exec", "--json", "--", "true"], {
      env,
    }),
  );
  const waited = await runCli(["wait", d.dispatchId, "--run", run, "--timeout", "60s"], { env });
  expect(waited.code, waited.stderr).toBe(0);
  return d;
}

/** Moves a recorded dispatch of another run into `run` as admission does: whole, by rename. */
function moveInto(run: string, from: { dir: string; dispatchId: string }, name: string): string {
  const dir = path.join(home, "runs", run, "dispatches", name, from.dispatchId);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  fs.renameSync(from.dir, dir);
  return dir;
}

function model(run: string): { model: RunModel; pushes: PushWire[] } {
  const pushes: PushWire[] = [];
  const m = new RunModel(runPaths(home, run), (p) => pushes.push(p), systemClock);
  models.push(m);
  return { model: m, pushes };
}

describe("RunModel", () => {
  beforeAll(async () => {
    ({ home, env } = isolatedHome());
    // The run exists with its live/ folder (empty again) before the model looks at it.
    await recorded("r", "first");
  }, 60_000);

  afterEach(() => {
    for (const m of models.splice(0)) m.close();
  });

  it("shows a dispatch whose live marker came and went before the flush read it", async () => {
    const elsewhere = await recorded("staging", "quick");
    const { model: m, pushes } = model("r");
    await m.loaded;
    expect(m.entries.size).toBe(1);
    // Admitted and recorded within one flush: the folder appears whole, its marker is written and removed.
    const marker = path.join(home, "runs", "r", "live", `${elsewhere.dispatchId}.json`);
    moveInto("r", elsewhere, "quick");
    fs.writeFileSync(marker, "{}");
    fs.rmSync(marker);
    await waitFor("the model to hold the quick dispatch", () =>
      m.entries.has(elsewhere.dispatchId) ? true : undefined,
    );
    expect(m.rows().map((r) => [r.name, r.state, r.status])).toContainEqual(["quick", "recorded", "ok"]);
    expect(pushes.some((p) => p.type === "rows" && p.rows.some((r) => r.name === "quick"))).toBe(true);
  });

  it("finds once a minute of polls a folder no watch reported, and drops one removed", async () => {
    const { model: m } = model("r");
    await m.loaded;
    const before = m.entries.size;
    const unseen = moveInto("r", await recorded("staging", "unseen"), "unseen");
    const [gone] = [...m.entries.values()].filter((e) => e.row.name === "first");
    fs.rmSync(gone?.dir as string, { recursive: true });
    for (let i = 0; i < 12; i++) await m.poll();
    await waitFor("the model to hold the unseen dispatch", () =>
      m.entries.has(path.basename(unseen)) ? true : undefined,
    );
    expect(m.entries.size).toBe(before);
    expect(m.rows().map((r) => r.name)).not.toContain("first");
  });
});
