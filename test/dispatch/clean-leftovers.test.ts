import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ABANDONED_STAGING_MS, cleanRuns } from "../../src/dispatch/clean.js";
import { runPaths } from "../../src/infra/paths.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { tempDir } from "../helpers/folders.js";

// What no reader lists, clean removes: staging folders of dispatchers that died mid-admission, and the
// folders an interrupted clean had condemned.

const DAY = 86_400_000;
/** A hidden folder `<run>/dispatches/n/<entry>` holding 100 bytes, last written `ageMs` before `now`. */
function hiddenFolder(dispatches: string, entry: string, now: number, ageMs: number): string {
  const dir = path.join(dispatches, "n", entry);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "brief.md"), Buffer.alloc(100, 0x61));
  const at = new Date(now - ageMs);
  fs.utimesSync(dir, at, at);
  return dir;
}

describe("clean removes what admission and clean left half done", () => {
  it("removes abandoned .admitting folders older than the age and an hour, and every .removing folder", async () => {
    const home = tempDir("catherd-leftovers-");
    const run = runPaths(home, "r");
    const now = Date.now();
    const abandoned = hiddenFolder(run.dispatches, ".20261101T000000Z-aaaaaa.admitting", now, 8 * DAY);
    const recent = hiddenFolder(run.dispatches, ".20261130T000000Z-bbbbbb.admitting", now, 30 * 60_000);
    const condemned = hiddenFolder(run.dispatches, ".20261129T000000Z-cccccc.removing", now, 60_000);
    const notOurs = hiddenFolder(run.dispatches, ".a..b.admitting", now, 8 * DAY);
    fs.symlinkSync(home, path.join(run.dispatches, "n", ".20261101T000000Z-dddddd.removing"));

    const options = { olderThanMs: 0, force: false, clock: new FakeClock({ wall: now }) };
    const dry = await cleanRuns([run], { ...options, dryRun: true });
    expect(dry.removed.map((d) => d.dispatchId).sort()).toEqual([
      "20261101T000000Z-aaaaaa",
      "20261129T000000Z-cccccc",
    ]);
    expect(dry.freedBytes).toBe(200);
    for (const dir of [abandoned, recent, condemned, notOurs]) expect(fs.existsSync(dir)).toBe(true);

    const done = await cleanRuns([run], { ...options, dryRun: false });
    expect(done).toMatchObject({ freedBytes: 200, kept: [] });
    expect([abandoned, recent, condemned, notOurs].map((dir) => fs.existsSync(dir))).toEqual([
      false,
      true,
      false,
      true,
    ]);
    // A symlink is never followed: what it names stays.
    expect(fs.existsSync(path.join(home, "runs"))).toBe(true);

    // An age longer than an hour holds a staging folder that long too.
    const week = await cleanRuns([run], {
      ...options,
      olderThanMs: 7 * DAY,
      dryRun: true,
      clock: new FakeClock({ wall: now + 2 * ABANDONED_STAGING_MS }),
    });
    expect(week.removed).toEqual([]);
  });
});
