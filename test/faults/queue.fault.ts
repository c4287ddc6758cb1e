import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dispatchFolders, isolatedHome, runCli } from "../helpers/cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { agent, dispatch, logLines, mostAtOnce, parsed, type Queued, recordOf } from "../helpers/queue.js";

// The queue under a crowd (specs/reliability.md, "The queue"): fifty briefs fired at a run of three.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

describe("the queue under a crowd", () => {
  it("runs 50 queued dispatches in a run capped at 3: never more than 3 at once, each once, oldest first, all recorded", async () => {
    const { home, env } = isolatedHome();
    const log = path.join(tempDir(), "agents.log");
    const names = Array.from({ length: 50 }, (_, i) => `q${String(i).padStart(2, "0")}`);
    // The first three hold their slots until all fifty are fired: the other 47 are queued behind them.
    const gate = path.join(tempDir(), "go");
    const body = `while [ ! -e '${gate}' ]; do sleep 0.05; done; sleep 0.1`;
    const fired: Queued[] = [];
    // Fired five at a time: the admission lock orders them; `since` says in which order.
    for (let i = 0; i < names.length; i += 5) {
      const batch = names.slice(i, i + 5);
      const results = await Promise.all(
        batch.map((n) => dispatch(env, n, agent(log, n, body), ["--max-parallel", "3", "--queue"])),
      );
      fired.push(...results.map((r) => parsed(r, dispatched)));
    }
    expect(fired.filter((d) => d.queued)).toHaveLength(47);
    fs.writeFileSync(gate, "");
    const result = await runCli(["wait", ...names, "--json", "--timeout", "840s"], {
      env,
      timeoutMs: 860_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const lines = logLines(log);
    expect(mostAtOnce(lines)).toBeLessThanOrEqual(3);
    // The slots, from the files: each held from its admission (a queued one: its promotion) to its record.
    // (A `status` sampled meanwhile is no proof: it reads one folder after another, and may see one
    // dispatch not yet recorded and, later in the same listing, the one promoted after its record.)
    expect(mostSlotsHeld(fired)).toBeLessThanOrEqual(3);
    for (const n of names)
      expect(
        lines.filter((l) => l === `start ${n}`),
        n,
      ).toHaveLength(1);
    const folders = dispatchFolders(home);
    expect(folders).toHaveLength(50);
    for (const dir of folders) expect(recordOf(dir).status, dir).toBe("ok");
    // Oldest first: in queue order, promotions never go back in time.
    const promoted = fired
      .filter((d) => d.queued)
      .map((d) => ({
        since: JSON.parse(fs.readFileSync(path.join(d.dir, "queued.json"), "utf8")).since as string,
        id: d.dispatchId,
        at: JSON.parse(fs.readFileSync(path.join(d.dir, "promoted.json"), "utf8")).at as string,
      }))
      .sort((a, b) => (a.since === b.since ? (a.id < b.id ? -1 : 1) : a.since < b.since ? -1 : 1));
    expect(promoted).toHaveLength(47);
    for (let i = 1; i < promoted.length; i++) {
      expect((promoted[i]?.at ?? "") >= (promoted[i - 1]?.at ?? ""), `promotion ${i}`).toBe(true);
    }
  }, 900_000);
});

/** The most slots held at once: each from admission (or promotion) to its record's write, a record first on a tie. */
function mostSlotsHeld(fired: readonly Queued[]): number {
  const edges = fired.flatMap((d) => {
    const from = d.queued
      ? Date.parse(JSON.parse(fs.readFileSync(path.join(d.dir, "promoted.json"), "utf8")).at as string)
      : Date.parse(JSON.parse(fs.readFileSync(path.join(d.dir, "admit.json"), "utf8")).admittedAt as string);
    // To the millisecond, as the promotion's time is written: a tie is a record first, then the promotion.
    const to = Math.floor(fs.statSync(path.join(d.dir, "record.json")).mtimeMs);
    return [
      { at: from, step: 1 },
      { at: to, step: -1 },
    ];
  });
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let held = 0;
  let most = 0;
  for (const edge of edges) {
    held += edge.step;
    most = Math.max(most, held);
  }
  return most;
}
