import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { AccountsWatch, accountsWire, MAX_PARKED_SHOWN } from "../../../src/ui/server/accounts-wire.js";
import type { PushWire } from "../../../src/ui/wire.js";
import { tempDir } from "../../helpers/folders.js";

// The home's accounts as the dashboard's server sends them (specs/ui.md, "Accounts"): `catherd account
// list`'s picture with the parked dispatches each account holds, and the watch that pushes when it changes.
// Files are written as catherd writes them; no process is started.

const NOW = Date.parse("2026-12-06T20:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value));
}

/** An account's windows as a supervisor merges them. */
function seedWindows(home: string, backend: string, account: string, windows: Record<string, unknown>[]) {
  writeJson(path.join(home, "quota", backend, `${account}.json`), {
    schema: 1,
    backend,
    account,
    windows: windows.map((w) => ({
      limit: "claude",
      window: "five_hour",
      usedPercent: null,
      windowMinutes: 300,
      resetsAt: null,
      seenAt: iso(NOW - 60_000),
      status: null,
      ...w,
    })),
  });
}

/** A live marker of a queued dispatch of `run`, held by `blockedBy`, asking for `pool`. */
function seedQueued(home: string, run: string, id: string, pool: string[], blockedBy = "window") {
  writeJson(path.join(home, "runs", run, "live", `${id}.json`), {
    schema: 1,
    dispatchId: id,
    name: `n-${id}`,
    dir: "/elsewhere",
    owns: [],
    backend: "claude-code",
    queued: { since: iso(NOW - 1000), notBefore: null, blockedBy },
    accounts: { pool, headroomPercent: 95 },
  });
}

describe("accountsWire", () => {
  it("says nothing of a home with no account declared and no window reported", () => {
    expect(accountsWire(tempDir(), NOW)).toEqual({ accounts: [], now: NOW });
  });

  it("gives each account its windows, whether it takes work, and the parked dispatches its pool names", () => {
    const home = tempDir();
    const folder = tempDir();
    writeJson(path.join(home, "accounts.json"), {
      schema: 1,
      accounts: [{ backend: "claude-code", name: "work", dir: folder, addedAt: iso(NOW - 86_400_000) }],
    });
    const resets = iso(NOW + 2 * 3_600_000);
    seedWindows(home, "claude-code", "default", [{ status: "rejected", resetsAt: resets }]);
    seedWindows(home, "codex", "default", [
      { limit: "", window: "primary", usedPercent: 40, windowMinutes: 300, status: "allowed" },
    ]);
    seedQueued(home, "night", "d1", ["default", "work"]);
    seedQueued(home, "night", "d2", ["default"]);
    seedQueued(home, "night", "d3", ["default"], "capacity");
    const { accounts } = accountsWire(home, NOW);
    const byName = new Map(accounts.map((a) => [`${a.backend}/${a.name}`, a]));
    expect([...byName.keys()].sort()).toEqual(["claude-code/default", "claude-code/work", "codex/default"]);
    expect(byName.get("claude-code/default")).toMatchObject({
      dir: null,
      gate: { state: "held", until: resets, window: "claude/five_hour" },
      windows: [{ name: "claude/five_hour", status: "rejected", resetsAt: resets, windowMinutes: 300 }],
      waiting: 2,
      parked: [
        { run: "night", dispatchId: "d1", name: "n-d1" },
        { run: "night", dispatchId: "d2", name: "n-d2" },
      ],
    });
    expect(byName.get("claude-code/work")).toMatchObject({
      dir: folder,
      gate: { state: "open" },
      windows: [],
      waiting: 1,
      parked: [{ dispatchId: "d1" }],
    });
    expect(byName.get("codex/default")).toMatchObject({
      gate: { state: "open" },
      windows: [{ name: "primary", usedPercent: 40 }],
      waiting: 0,
      parked: [],
    });
  });

  it("says a spent window whose reset has passed lets one dispatch probe, and lists only the first parked ones", () => {
    const home = tempDir();
    seedWindows(home, "claude-code", "default", [{ status: "rejected", resetsAt: iso(NOW - 60_000) }]);
    for (let i = 0; i < MAX_PARKED_SHOWN + 3; i++) seedQueued(home, "r", `d${i}`, ["default"]);
    const [account] = accountsWire(home, NOW).accounts;
    expect(account?.gate).toEqual({ state: "probe", window: "claude/five_hour" });
    expect(account?.waiting).toBe(MAX_PARKED_SHOWN + 3);
    expect(account?.parked).toHaveLength(MAX_PARKED_SHOWN);
  });
});

describe("AccountsWatch", () => {
  it("pushes when a window is reported, a dispatch parked or a gate opens at its reset, and not otherwise", () => {
    const home = tempDir();
    let now = NOW;
    const pushes: PushWire[] = [];
    const watch = new AccountsWatch(
      home,
      () => now,
      (p) => pushes.push(p),
    );
    watch.check();
    watch.check();
    expect(pushes).toEqual([]);
    seedWindows(home, "claude-code", "default", [{ status: "rejected", resetsAt: iso(NOW + 60_000) }]);
    watch.check();
    expect(pushes).toEqual([{ type: "accounts" }]);
    seedQueued(home, "r", "d1", ["default"]);
    watch.check();
    expect(pushes).toHaveLength(2);
    now += 30_000;
    watch.check();
    expect(pushes).toHaveLength(2);
    now += 60_000;
    watch.check();
    expect(pushes).toHaveLength(3);
    watch.close();
  });
});
