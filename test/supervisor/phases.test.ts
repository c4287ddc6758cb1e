import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { SupervisorLog } from "../../supervisor/log.js";
import { enterPhase, LIFE_START, mayEnter, PHASES, type PhaseName } from "../../supervisor/phases.js";
import { ROOT } from "../helpers/folders.js";

// The supervisor's life (specs/supervisor.md, "Phases"): one list, its transitions, and the one function
// that enters a phase.

const NAMES = PHASES.map((p) => p.name);

/** A log that keeps its lines. */
function memoryLog(): { log: SupervisorLog; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { log: (event, fields = {}) => lines.push({ event, ...fields }), lines };
}

/** A folder for the test hook's marker (never written: the hook is unset here). */
const DIR = os.tmpdir();

describe("the supervisor's phases", () => {
  it("are, in order, the life of a first supervisor, an adopter's start, and the end they share", () => {
    expect(NAMES).toEqual([
      "given",
      "claimed",
      "adopted",
      "started",
      "watching",
      "stopping",
      "exited",
      "verifying",
      "recorded",
      "after-record",
    ]);
  });

  it("each follows only the start or phases listed before it: the list is the order", () => {
    PHASES.forEach((phase, i) => {
      for (const from of phase.follows as readonly string[]) {
        if (from === LIFE_START) continue;
        expect(NAMES.indexOf(from as PhaseName), `${phase.name} follows ${from}`).toBeGreaterThanOrEqual(0);
        expect(NAMES.indexOf(from as PhaseName), `${phase.name} follows ${from}`).toBeLessThan(i);
      }
    });
  });

  it.each<[PhaseName | null, PhaseName, boolean]>([
    [null, "given", true],
    [null, "claimed", true],
    [null, "adopted", true],
    [null, "started", false],
    [null, "watching", false],
    [null, "stopping", false],
    ["given", "claimed", true],
    ["given", "adopted", true],
    ["given", "started", false],
    ["claimed", "started", true],
    ["claimed", "stopping", true],
    ["claimed", "watching", false],
    ["claimed", "adopted", false],
    ["adopted", "watching", true],
    ["adopted", "stopping", true],
    ["adopted", "started", false],
    ["started", "watching", true],
    ["started", "stopping", true],
    ["started", "exited", false],
    ["watching", "stopping", true],
    ["watching", "exited", false],
    ["watching", "watching", false],
    ["stopping", "exited", true],
    ["stopping", "recorded", false],
    ["stopping", "after-record", false],
    ["exited", "recorded", true],
    ["exited", "verifying", true],
    ["verifying", "recorded", true],
    ["verifying", "after-record", true],
    ["verifying", "exited", false],
    [null, "verifying", true],
    ["watching", "verifying", false],
    ["exited", "after-record", true],
    ["exited", "stopping", false],
    ["recorded", "after-record", true],
    ["recorded", "recorded", false],
    ["after-record", "claimed", false],
    ["after-record", "stopping", false],
  ])("from %s, entering %s is allowed: %s", (from, to, allowed) => {
    expect(mayEnter(from, to)).toBe(allowed);
  });

  it("names each pause point once: the phases, and the points within them", () => {
    const points = PHASES.flatMap((p) => [p.name, ...p.points]);
    expect(new Set(points).size).toBe(points.length);
    expect(Object.fromEntries(PHASES.map((p) => [p.name, [...p.points]]))).toMatchObject({
      claimed: ["before-spawn", "sandbox-raised", "sandbox-starting", "after-spawn"],
      watching: ["handshake-written", "message-written", "answer-written"],
      stopping: ["term-sent"],
    });
  });

  it("are the table of specs/supervisor.md, 'Phases', row for row", () => {
    const text = fs.readFileSync(path.join(ROOT, "specs/supervisor.md"), "utf8");
    const section = text.slice(text.indexOf("## Phases"), text.indexOf("## Start"));
    const rows = section
      .split("\n")
      .filter((line) => /^\| `[a-z-]+` /.test(line))
      .map((line) => line.split("|").map((cell) => cell.trim()));
    expect(rows.map((cells) => cells[1])).toEqual(NAMES.map((name) => `\`${name}\``));
    for (const [i, phase] of PHASES.entries()) {
      const follows = (phase.follows as readonly string[]).map((f) =>
        f === LIFE_START ? "the start" : `\`${f}\``,
      );
      expect(rows[i]?.[4], `${phase.name}: may follow`).toBe(follows.join(", "));
      expect(rows[i]?.[5], `${phase.name}: log line`).toBe(`\`"event":"phase","phase":"${phase.name}"\``);
    }
  });
});

describe("enterPhase", () => {
  it("writes one phase line per phase entered, in order", () => {
    const { log, lines } = memoryLog();
    const life: PhaseName[] = [
      "claimed",
      "started",
      "watching",
      "stopping",
      "exited",
      "recorded",
      "after-record",
    ];
    for (const phase of life) enterPhase(log, DIR, phase);
    expect(lines).toEqual(life.map((phase) => ({ event: "phase", phase })));
  });

  it("logs a phase entered out of order as E_INTERNAL with its stack, and enters it all the same", () => {
    const { log, lines } = memoryLog();
    enterPhase(log, DIR, "claimed");
    enterPhase(log, DIR, "exited");
    expect(lines[0]).toEqual({ event: "phase", phase: "claimed" });
    expect(lines[1]).toMatchObject({
      event: "phase-out-of-order",
      code: "E_INTERNAL",
      from: "claimed",
      phase: "exited",
      message: "the supervisor entered phase exited from claimed, which it may not follow",
    });
    expect(lines[1]?.stack).toEqual(expect.stringContaining("enterPhase"));
    expect(lines[2]).toEqual({ event: "phase", phase: "exited" });
    // The phase it is in now is the one it entered: the next step on from there is in order.
    enterPhase(log, DIR, "recorded");
    expect(lines.slice(3)).toEqual([{ event: "phase", phase: "recorded" }]);
  });

  it("keeps each supervision's phase by its own log", () => {
    const first = memoryLog();
    const second = memoryLog();
    enterPhase(first.log, DIR, "claimed");
    enterPhase(second.log, DIR, "adopted");
    enterPhase(first.log, DIR, "started");
    enterPhase(second.log, DIR, "watching");
    expect([...first.lines, ...second.lines].map((line) => line.event)).toEqual([
      "phase",
      "phase",
      "phase",
      "phase",
    ]);
  });

  it("says a life that begins past its start is out of order", () => {
    const { log, lines } = memoryLog();
    enterPhase(log, DIR, "watching");
    expect(lines[0]).toMatchObject({ event: "phase-out-of-order", from: null, phase: "watching" });
  });
});
