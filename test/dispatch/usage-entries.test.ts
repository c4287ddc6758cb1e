import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { usageEntries } from "../../src/dispatch/read/usage-entries.js";
import { dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { reapAll } from "../helpers/folders.js";
import { waitForJson } from "../helpers/wait.js";

// What `catherd usage` sums, folder by folder (src/dispatch/read/usage-entries.ts): a recorded dispatch
// from its record, a live one from its activity, nothing for one that has spent nothing yet, and a folder
// whose files cannot be read left out and counted — never read as nothing spent.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "left behind").toBe(0);
});

describe("usage's entries", () => {
  it("counts a record, skips what spent nothing, and counts apart the folders it cannot read", async () => {
    const { home, env } = isolatedHome();
    const result = await runCli(["dispatch", "--backend", "exec", "--name", "done", "--json", "--", "true"], {
      env,
    });
    const done = dispatchedOf(result);
    dispatched.push(done.dispatchId);
    await waitForJson(path.join(done.dir, "record.json"), 30_000);
    const admit = fs.readFileSync(path.join(done.dir, "admit.json"));
    const dispatches = path.join(home, "runs/default/dispatches");
    /** A hand-made folder beside `done`'s, named `name`, holding `files`. */
    const folder = (name: string, files: Record<string, string | Buffer>) => {
      const dir = path.join(dispatches, name, `20261201T000000Z-${name.slice(0, 6).padEnd(6, "x")}`);
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      for (const [file, body] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), body);
    };
    folder("empty", {});
    folder("torn", { "record.json": '{"schema":1,"status":' });
    folder("badadmit", { "admit.json": "not json" });
    folder("queued", { "admit.json": admit });
    folder("tornact", { "admit.json": admit, "activity.json": "{" });

    const { entries, unreadable } = usageEntries(home, null);
    expect(entries.map((e) => ({ name: e.name, live: e.live }))).toEqual([{ name: "done", live: false }]);
    expect(unreadable).toBe(3);
    expect(usageEntries(home, "default")).toEqual({ entries, unreadable });

    // The command says so too: what it left out, beside what it summed.
    const usage = await runCli(["usage", "--json"], { env });
    expect(usage.code, usage.stderr).toBe(0);
    expect(JSON.parse(usage.stdout)).toMatchObject({ unreadable: 3 });
  });
});
