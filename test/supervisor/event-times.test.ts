import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeAgentFolder, reapAll, supervise } from "../helpers/folders.js";

// events.times: the supervisor notes when events.jsonl reached each size (specs/dispatch-folder.md), so
// that a reader can date every event line.

const ids: string[] = [];
afterEach(() => {
  expect(reapAll(ids.splice(0))).toBe(0);
});

describe("events.times", () => {
  it("has a checkpoint at most a second apart while output flows, the last at the stream's whole size", async () => {
    const { dir, id } = fakeAgentFolder({
      steps: [
        { out: "one" },
        { sleep: 1300 },
        { out: "two" },
        { sleep: 1300 },
        { out: "three" },
        { exit: 0 },
      ],
    });
    ids.push(id);
    const before = Date.now();
    expect((await supervise(dir)).code).toBe(0);
    const after = Date.now();
    const points = fs
      .readFileSync(path.join(dir, "events.times"), "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split(" ").map(Number) as [number, number]);
    expect(points.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < points.length; i++) {
      expect(points[i]?.[0]).toBeGreaterThan(points[i - 1]?.[0] ?? 0);
      expect(points[i]?.[1]).toBeGreaterThanOrEqual(points[i - 1]?.[1] ?? 0);
    }
    expect(points.at(-1)?.[0]).toBe(fs.statSync(path.join(dir, "events.jsonl")).size);
    for (const [, at] of points) {
      expect(at).toBeGreaterThanOrEqual(before - 1000);
      expect(at).toBeLessThanOrEqual(after);
    }
    // "two" came a second or more after "one": their checkpoints say so.
    const one = points.find(([bytes]) => bytes >= 4);
    const two = points.find(([bytes]) => bytes >= 8);
    expect((two?.[1] ?? 0) - (one?.[1] ?? 0)).toBeGreaterThanOrEqual(1000);
  });
});
