import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  arrive,
  EMPTY_SLOTS,
  leave,
  type SlotClaim,
  type SlotState,
  viewOf,
} from "../../src/domain/lock/slots.js";
import { systemClock } from "../../src/infra/clock.js";
import { INITIAL_PID_NAMESPACE } from "../../src/infra/namespaced-process.js";
import { startTimeOf } from "../../src/infra/process-identity.js";
import { bootId, bootTimeMs, judgeClaims, pidNamespace, slotProcess } from "../../src/infra/slot-identity.js";
import { readSlots, slotClassDir, slotClasses, updateSlots } from "../../src/infra/slot-store.js";
import { tempDir } from "../helpers/folders.js";

// The slot store on real files: versions created exclusively, a lost race read again, a write that was
// not kept made again, old versions removed, and a queue that cannot be read never taken for an empty one.

const AT = "2026-12-01T10:00:00.000Z";
const judge = judgeClaims();

function claim(id: string, slots = 2): Omit<SlotClaim, "ticket" | "heldSince"> {
  return {
    id,
    owner: slotProcess(process.pid),
    command: null,
    label: `cmd ${id}`,
    slots,
    askedAt: AT,
    dispatch: null,
  };
}

/** Adds claim `id` to the queue in `dir`, as a taker arriving does. */
function join(dir: string, id: string, slots = 2): Promise<SlotState> {
  return updateSlots(
    { dir, cls: "heavy", clock: systemClock },
    (state) => arrive(state, claim(id, slots), judge, { at: AT }),
    (state) => viewOf(state, id, judge).present,
  );
}

const versions = (dir: string) =>
  fs
    .readdirSync(dir)
    .filter((n) => /^state\.\d+\.json$/.test(n))
    .map((n) => Number(n.split(".")[1]))
    .sort((a, b) => a - b);

describe("the slot store", () => {
  it("reads an empty queue where nobody took a slot yet, and lists no class", () => {
    const home = tempDir();
    expect(readSlots(slotClassDir(home, "heavy"))).toEqual({ version: 0, state: EMPTY_SLOTS, file: null });
    expect(slotClasses(home)).toEqual([]);
  });

  it("writes one version per change, keeps the last few, and removes a dead writer's temp file, not a live one's", async () => {
    const home = tempDir();
    const dir = slotClassDir(home, "heavy");
    fs.mkdirSync(dir, { recursive: true });
    // A writer that died a minute ago left its temp; a live one in a sandbox's PID namespace has just
    // made its own, under a pid this side does not have: judged by age, only the first goes.
    const orphan = path.join(dir, ".state.3.json.999999.1.abc.tmp");
    fs.writeFileSync(orphan, "{");
    const minuteAgo = new Date(Date.now() - 61_000);
    fs.utimesSync(orphan, minuteAgo, minuteAgo);
    const writing = path.join(dir, ".state.13.json.999998.1.def.tmp");
    fs.writeFileSync(writing, "{");
    for (let i = 0; i < 12; i++) await join(dir, `c${i}`);
    expect(versions(dir)).toEqual([5, 6, 7, 8, 9, 10, 11, 12]);
    expect(fs.existsSync(orphan)).toBe(false);
    expect(fs.existsSync(writing)).toBe(true);
    const { version, state } = readSlots(dir);
    expect(version).toBe(12);
    expect(state.holders.map((c) => c.id)).toEqual(["c0", "c1"]);
    expect(state.waiters.map((c) => c.ticket)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(slotClasses(home)).toEqual(["heavy"]);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
  });

  it("loses no change when thirty writers race: each claim once, tickets unique", async () => {
    const dir = slotClassDir(tempDir(), "heavy");
    await Promise.all(Array.from({ length: 30 }, (_, i) => join(dir, `r${i}`)));
    const { state } = readSlots(dir);
    const all = [...state.holders, ...state.waiters];
    expect(all.map((c) => c.id).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `r${i}`).sort());
    expect(new Set(all.map((c) => c.ticket)).size).toBe(30);
    expect(state.holders.length).toBe(2);
  });

  it("makes a change again when the version it wrote had been removed by writers that got ahead", async () => {
    const dir = slotClassDir(tempDir(), "heavy");
    await join(dir, "first");
    const writeVersion = (version: number, state: SlotState) =>
      fs.writeFileSync(
        path.join(dir, `state.${version}.json`),
        JSON.stringify({ schema: 1, class: "heavy", ...state }),
      );
    let calls = 0;
    const done = await updateSlots(
      { dir, cls: "heavy", clock: systemClock },
      (state) => {
        calls += 1;
        if (calls === 1) {
          // While this writer stalls on version 1, ten changes go through (2..11) and versions up to 3
          // are removed, as the writers of 10 and 11 remove them: its create of version 2 succeeds.
          let other = state;
          for (let v = 2; v <= 11; v++) {
            other = arrive(other, claim(`other${v}`), judge, { at: AT });
            writeVersion(v, other);
          }
          for (const v of [1, 2, 3]) fs.rmSync(path.join(dir, `state.${v}.json`), { force: true });
        }
        return arrive(state, claim("slow"), judge, { at: AT });
      },
      (state) => viewOf(state, "slow", judge).present,
    );
    // Its version 2 lies behind the newest, unread; seen missing from the newest, it was made again there.
    expect(calls).toBe(2);
    expect(readSlots(dir).version).toBe(12);
    const ids = [...done.holders, ...done.waiters].map((c) => c.id);
    expect(ids.filter((id) => id === "slow")).toEqual(["slow"]);
    expect(ids).toHaveLength(12);
  });

  it("leaves a queue: the claim is gone from holders and waiters", async () => {
    const dir = slotClassDir(tempDir(), "heavy");
    await join(dir, "a");
    await join(dir, "b");
    await join(dir, "c");
    const left = await updateSlots(
      { dir, cls: "heavy", clock: systemClock },
      (state) => leave(state, "a"),
      (state) => !state.holders.some((c) => c.id === "a"),
    );
    expect(left.holders.map((c) => c.id)).toEqual(["b"]);
    expect(left.waiters.map((c) => c.id)).toEqual(["c"]);
  });

  it("reads a torn newest version last written before this boot as an empty queue, and writes above it", async () => {
    const dir = slotClassDir(tempDir(), "heavy");
    await join(dir, "a");
    await join(dir, "b");
    const newest = path.join(dir, "state.2.json");
    // What a power loss leaves of a version that was not yet on disk: an empty file, from the last boot.
    fs.writeFileSync(newest, "");
    const before = new Date((bootTimeMs() as number) - 3_600_000);
    fs.utimesSync(newest, before, before);
    expect(readSlots(dir)).toEqual({ version: 2, state: EMPTY_SLOTS, file: newest });
    const after = await join(dir, "c");
    expect(after.holders.map((c) => c.id)).toEqual(["c"]);
    expect(readSlots(dir).version).toBe(3);
  });

  it("answers a torn or newer version, or a class that is not a folder, with its error and its path", async () => {
    const home = tempDir();
    const dir = slotClassDir(home, "heavy");
    await join(dir, "a");
    const newest = path.join(dir, "state.1.json");
    fs.writeFileSync(newest, '{"schema":1,"class":"heavy","nextTick');
    expect(() => readSlots(dir)).toThrow(expect.objectContaining({ code: "E_FILE_CORRUPT", file: newest }));
    await expect(join(dir, "b")).rejects.toMatchObject({ code: "E_FILE_CORRUPT" });
    fs.writeFileSync(newest, '{"schema":2}');
    expect(() => readSlots(dir)).toThrow(expect.objectContaining({ code: "E_SCHEMA_NEWER" }));
    const other = slotClassDir(home, "build");
    fs.writeFileSync(other, "not a folder");
    expect(() => readSlots(other)).toThrow(expect.objectContaining({ code: "E_IO_READ", file: other }));
  });
});

describe("judging a claim", () => {
  const base = () => ({ ...claim("x"), ticket: 1, heldSince: null });

  it("calls a claim live while its lock or its command runs, dead once both are gone", () => {
    expect(judge(base())).toBe("live");
    const gone = { ...base(), owner: { ...slotProcess(process.pid), pid: 999_999, startTime: "1" } };
    expect(judge(gone)).toBe("dead");
    expect(judge({ ...gone, command: { pid: process.pid, startTime: startTimeOf(process.pid) } })).toBe(
      "live",
    );
    // A pid that lives but started at another time is another process.
    const reused = { ...base(), owner: { ...slotProcess(process.pid), startTime: "1" } };
    expect(judge(reused)).toBe("dead");
  });

  it("calls another boot dead, another machine's foreign, and a pid namespace that no process shows dead from the initial one", () => {
    const owner = slotProcess(process.pid);
    expect(bootId()).not.toBeNull();
    expect(judge({ ...base(), owner: { ...owner, pid: 999_999, bootId: "an-earlier-boot" } })).toBe("dead");
    expect(judge({ ...base(), owner: { ...owner, bootId: "an-earlier-boot" } })).toBe("dead");
    expect(judge({ ...base(), owner: { ...owner, pid: 999_999, host: `not-${os.hostname()}` } })).toBe(
      "foreign",
    );
    expect(pidNamespace()).toMatch(/^pid:\[\d+\]$/);
    // No process of this /proc is in it: ended, when this process sees every namespace; else unseen, live.
    expect(judge({ ...base(), owner: { ...owner, pid: 999_999, pidNs: "pid:[1]" } })).toBe(
      pidNamespace() === INITIAL_PID_NAMESPACE ? "dead" : "live",
    );
  });
});
