import { describe, expect, it } from "vitest";
import { raceState, raceWords, tableLines } from "../../../src/ui/page/race-rows.js";
import type { RowWire } from "../../../src/ui/wire.js";

// A race in the run's table (specs/ui.md, "A run"): one line of its own where its first attempt stands,
// its attempts after it in the order of their numbers, every other row where it stood.

function row(
  id: string,
  state: string,
  race: [string, number] | null,
  status: string | null = null,
): RowWire {
  return {
    dispatchId: id,
    name: race === null ? id : `${race[0]}.${race[1]}`,
    backend: "codex",
    state,
    status,
    reason: null,
    error: null,
    admittedAt: null,
    startedAt: null,
    endedAt: null,
    lastEvent: null,
    lastEventAt: null,
    activityAt: null,
    openToolCalls: [],
    retrying: 0,
    retries: 0,
    usage: null,
    queue: null,
    attempt: 1,
    earlier: [],
    next: null,
    unread: false,
    problems: [],
    race: race === null ? null : { name: race[0], raceId: `id-${race[0]}`, attempt: race[1] },
  };
}

describe("a race in the run's table", () => {
  it("shows a race as one line where its first attempt stands, its attempts after it by number", () => {
    const ordered = [
      row("a", "running", null),
      row("f2", "running", ["fix", 2]),
      row("b", "running", null),
      row("f1", "queued", ["fix", 1]),
      row("c", "recorded", null, "ok"),
    ];
    const lines = tableLines(ordered).map((l) =>
      l.kind === "race" ? `race ${l.group.name}` : `${l.row.dispatchId}${l.race === null ? "" : " in race"}`,
    );
    expect(lines).toEqual(["a", "race fix", "f1 in race", "f2 in race", "b", "c"]);
  });

  it("says how a race's attempts stand, and that it races while one lives", () => {
    const [line] = tableLines([
      row("f1", "recorded", ["fix", 1], "ok"),
      row("f2", "recorded", ["fix", 2], "cancelled"),
      row("f3", "stopping", ["fix", 3]),
    ]);
    if (line?.kind !== "race") throw new Error("no race line");
    expect(raceWords(line.group)).toBe("3 attempts: 1 ok, 1 cancelled, 1 stopping");
    const ok = line.group.rows[0] as RowWire;
    ok.check = { command: "npm test", passed: true, runs: 1, since: null };
    expect(raceWords(line.group)).toBe("3 attempts: 1 ok, 1 cancelled, 1 stopping · 1 passed its check");
    expect(raceState(line.group)).toBe("racing");
    line.group.rows.pop();
    expect(raceState(line.group)).toBe("ended");
  });
});
