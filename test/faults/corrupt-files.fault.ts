import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { type CliResult, runCli } from "../helpers/cli.js";
import { readJson } from "../helpers/folders.js";
import { waitFor, waitForJson } from "../helpers/wait.js";
import { dispatchFake, handDispatch, handId, homeFor, jsonOf, trial, useFaultKit } from "./kit.js";

// Row 8: hand-edited or corrupt files in a run. Every reader reports each one clearly (a problem naming
// the file, or one E_… error) and never crashes, and the other dispatches of the run are unaffected.

useFaultKit();

const FILES = [
  "admit.json",
  "spec.json",
  "supervisor.json",
  "proc.json",
  "exit.json",
  "record.json",
  "activity.json",
];

const CORRUPTIONS: Record<string, (file: string) => void> = {
  torn: (file) => fs.writeFileSync(file, fs.readFileSync(file, "utf8").slice(0, 25)),
  "newer schema": (file) => fs.writeFileSync(file, JSON.stringify({ ...readJson(file), schema: 9 })),
  "wrong types": (file) =>
    fs.writeFileSync(file, JSON.stringify({ schema: 1, pid: "twelve", status: 42, backend: ["x"], cmd: {} })),
  empty: (file) => fs.writeFileSync(file, ""),
  binary: (file) => fs.writeFileSync(file, Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x22, 0x80])),
  "a folder": (file) => {
    fs.rmSync(file);
    fs.mkdirSync(file);
  },
  "unknown backend": (file) =>
    fs.writeFileSync(file, JSON.stringify({ ...readJson(file), backend: "cursor" })),
};

/** Known, clear outcomes of a reader: exit 0, or one error with a code of catherd's, never a crash. */
function clear(r: CliResult, what: string): void {
  expect(r.stderr, `${what} printed to stderr`).not.toMatch(/at .*\.js:\d+|TypeError|RangeError|SyntaxError/);
  expect(
    [0, 1, 124],
    `${what} exited ${r.code}: ${r.stdout.slice(0, 300)} ${r.stderr.slice(0, 300)}`,
  ).toContain(r.code);
  const out = jsonOf(r);
  if (r.code === 1) {
    expect((out.error as { code: string }).code, what).toMatch(
      /^E_(FILE_CORRUPT|SCHEMA_NEWER|IO_READ|NOT_RECORDED|SPEC_INVALID)$/,
    );
  }
}

/** A copy of a recorded dispatch under a new name, as a person could leave it. */
function copyOf(source: string, home: string, name: string): string {
  const id = handId();
  const dir = path.join(home, "runs/default/dispatches", name, id);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const file of fs.readdirSync(source)) {
    if (file.startsWith(".") || file === "seen") continue;
    fs.copyFileSync(path.join(source, file), path.join(dir, file));
  }
  for (const file of ["admit.json", "spec.json", "record.json"]) {
    const json = readJson(path.join(dir, file));
    fs.writeFileSync(
      path.join(dir, file),
      JSON.stringify({ ...json, dispatchId: id, ...(file === "spec.json" ? {} : { name }) }),
    );
  }
  fs.writeFileSync(path.join(home, "runs/default/dispatches", name, "latest"), `${id}\n`);
  return dir;
}

async function inBatches<T>(items: T[], size: number, run: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run));
}

describe("row 8: hand-edited and corrupt files", () => {
  it("reports every corrupt file of every kind clearly in status, show, logs, result and wait, and keeps the rest", async () => {
    const t = trial("8 corrupt files (file x corruption x reader)", { many: true });
    const { home, env } = homeFor(t);
    const fine = await dispatchFake(t, env, [{ out: "fine" }, { exit: 0 }], ["--name", "fine"]);
    await waitForJson(path.join(fine.dir, "record.json"));
    // Its supervisor releases its lock after the record: copies are made of the folder it leaves.
    await waitFor("the supervisor's lock released", () =>
      fs.existsSync(path.join(fine.dir, "supervisor.lock")) ? undefined : true,
    );
    fs.writeFileSync(
      path.join(fine.dir, "activity.json"),
      JSON.stringify({
        schema: 1,
        at: new Date().toISOString(),
        lastEvent: "fine",
        lastEventAt: null,
        openToolCalls: [],
        retrying: 0,
        retries: 0,
        tokens: { input: 0, cached: 0, output: 0 },
        thread: null,
      }),
    );
    const cases: { name: string; file: string; kind: string; dir: string }[] = [];
    for (const file of FILES) {
      for (const [kind, corrupt] of Object.entries(CORRUPTIONS)) {
        if (
          kind === "unknown backend" &&
          file !== "spec.json" &&
          file !== "admit.json" &&
          file !== "record.json"
        )
          continue;
        const name = `c${cases.length}`;
        const dir = copyOf(fine.dir, home, name);
        corrupt(path.join(dir, file));
        cases.push({ name, file, kind, dir });
      }
    }
    // The whole run at once, as text and as JSON.
    for (const args of [
      ["status", "--all", "--json"],
      ["status", "--all"],
    ]) {
      const r = await runCli(args, { env: { ...env, NO_COLOR: "1" } });
      expect(r.code, r.stderr).toBe(0);
    }
    const rows = (
      jsonOf(await runCli(["status", "--all", "--json"], { env })) as {
        dispatches: {
          name: string | null;
          dir: string;
          state: string;
          status: string | null;
          problems: { code: string; message: string }[];
        }[];
      }
    ).dispatches;
    expect(rows.find((r) => r.name === "fine")).toMatchObject({
      state: "recorded",
      status: "ok",
      problems: [],
    });
    const failures: string[] = [];
    await inBatches(cases, 6, async (c) => {
      const what = `${c.file} ${c.kind}`;
      t.tally.tried += 1;
      try {
        const row = rows.find((r) => r.dir === c.dir);
        expect(row, `${what}: no status row`).toBeDefined();
        const shown = await runCli(["show", c.name, "--json"], { env });
        clear(shown, `show (${what})`);
        expect(shown.code, `show (${what})`).toBe(0);
        const shownText = await runCli(["show", c.name], { env: { ...env, NO_COLOR: "1" } });
        expect(shownText.code, `show text (${what}): ${shownText.stderr}`).toBe(0);
        // Every file the readers validate names its problem; activity.json only feeds live rows.
        if (c.file !== "activity.json") {
          const problems = (jsonOf(shown).dispatch as { problems: { message: string }[] }).problems;
          const named = problems.some((p) => p.message.includes(c.file));
          const recordedAnyway = c.file === "record.json" ? false : row?.state === "recorded";
          expect(
            named || recordedAnyway,
            `${what}: no problem names ${c.file}: ${JSON.stringify(problems)}`,
          ).toBe(true);
        }
        clear(await runCli(["logs", c.name, "--json"], { env }), `logs (${what})`);
        clear(await runCli(["result", c.name, "--json"], { env }), `result (${what})`);
        clear(
          await runCli(["wait", c.name, "--timeout", "2s", "--json"], { env, timeoutMs: 20_000 }),
          `wait (${what})`,
        );
        if (c.file === "record.json" && c.kind !== "unknown backend") {
          // Recorded but unreadable: `wait` says so at once instead of waiting for ever.
          const waited = await runCli(["wait", c.name, "--json"], { env, timeoutMs: 20_000 });
          clear(waited, `wait without a timeout (${what})`);
          expect(waited.code, `wait without a timeout (${what})`).toBe(1);
        }
        t.tally.passed += 1;
      } catch (error) {
        failures.push(String(error).split("\n")[0] ?? what);
      }
    });
    expect(failures).toEqual([]);
    // And the fine dispatch is still fine, read by every command.
    const result = await runCli(["result", "fine", "--json"], { env });
    expect(result.code).toBe(0);
    expect(jsonOf(result)).toMatchObject({ status: "ok" });
  });

  it("reports a folder without admit.json clearly and records it only as the hand-made dispatch it is", async () => {
    const t = trial("8 folder without admit.json in a run");
    const { home, env } = homeFor(t);
    const { dir } = handDispatch(home, "handmade", {}, { admit: false });
    const status = await runCli(["status", "--all", "--json"], { env });
    expect(status.code).toBe(0);
    const show = await runCli(["show", "handmade", "--json"], { env });
    expect(show.code).toBe(0);
    expect(jsonOf(show)).toMatchObject({ dispatch: { admit: null, dir } });
    const text = await runCli(["status", "--all"], { env: { ...env, NO_COLOR: "1" } });
    // Its place names it, as for any folder of the run; nothing else is made up for it.
    expect(text.stdout).toMatch(/handmade\s+\S+\s+exec\s/);
    t.pass();
  });

  it("never crashes on files replaced by FIFOs, and does not hang on them", async () => {
    const t = trial("8 FIFOs in place of record.json, events.jsonl, stderr.log");
    const { home, env } = homeFor(t);
    const fine = await dispatchFake(t, env, [{ exit: 0 }], ["--name", "fine"]);
    await waitForJson(path.join(fine.dir, "record.json"));
    const { dir } = handDispatch(home, "fifo", {
      "supervisor.json": { schema: 1, pid: 999_999, startTime: "1", startedAt: new Date().toISOString() },
    });
    for (const file of ["record.json", "events.jsonl", "stderr.log"])
      execFileSync("mkfifo", [path.join(dir, file)]);
    for (const args of [
      ["status", "--all", "--json"],
      ["show", "fifo", "--json"],
      ["result", "fifo", "--json"],
      ["logs", "fifo", "--json"],
      ["wait", "fifo", "--timeout", "1s", "--json"],
    ]) {
      const r = await runCli(args, { env, timeoutMs: 15_000 });
      clear(r, args.join(" "));
    }
    t.pass();
  });
});
