import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { RunSpend } from "../../src/domain/spend/run-budget.js";
import { foldUnderLock, REPAIR_AFTER_MS, sumLedger, writeSpendPart } from "../../src/folder/run-ledger.js";
import { runSpendNow, SUM_EVERY_MS } from "../../src/folder/run-spend-now.js";
import { tryLock } from "../../src/infra/lock.js";
import { dispatchDir, type RunPaths, runPaths, spendFile } from "../../src/infra/paths.js";
import { ROOT, tempDir } from "../helpers/folders.js";

// The run's spend ledger (src/folder/run-ledger.ts, run-spend-now.ts): parts, folds and sums, with the
// crash windows of a fold hit exactly, and many writer processes at once against folds and sums.

function scratchRun(): RunPaths {
  const home = tempDir("catherd-ledger-");
  const run = runPaths(home, "r");
  fs.mkdirSync(run.dir, { recursive: true });
  return run;
}

const id = (n: number) => `20261201T000000Z-${n.toString(36).padStart(6, "0")}`;
const part = (
  run: RunPaths,
  n: number,
  tokens: number,
  costUsd: number | null,
  final: boolean,
  at = new Date(),
) => writeSpendPart(run, { dispatchId: id(n), name: `d${n}` }, { tokens, costUsd }, { at, final });
const totals = (s: RunSpend) => ({ tokens: s.tokens, costUsd: Math.round(s.costUsd * 1e6) / 1e6 });

describe("the run's spend ledger", () => {
  it("sums spent.json and the parts beside it, and a fold moves the final ones without changing the sum", () => {
    const run = scratchRun();
    part(run, 1, 1000, 0.5, true);
    part(run, 2, 300, null, false);
    part(run, 3, 70, 0.25, true);
    const before = sumLedger(run);
    expect(before.spend).toEqual({ tokens: 1370, costUsd: 0.75, unpriced: 1, live: 1, dispatches: 3 });
    expect(before.parts).toEqual({ [id(2)]: { tokens: 300, costUsd: null } });
    const folded = foldUnderLock(run, new Date());
    expect(folded.spend).toEqual(before.spend);
    expect(fs.readdirSync(run.spend).sort()).toEqual([`${id(2)}.json`]);
    expect(JSON.parse(fs.readFileSync(run.spentFile, "utf8"))).toMatchObject({
      tokens: 1070,
      costUsd: 0.75,
      dispatches: 2,
      folded: [id(1), id(3)],
    });
    expect(sumLedger(run).spend).toEqual(before.spend);
    // Later records fold onto what is there.
    part(run, 2, 400, 0.1, true);
    foldUnderLock(run, new Date());
    expect(sumLedger(run).spend).toEqual({
      tokens: 1470,
      costUsd: 0.85,
      unpriced: 0,
      live: 0,
      dispatches: 3,
    });
    expect(fs.readdirSync(run.spend)).toEqual([]);
  });

  it("counts once the parts a fold killed before removing them left behind, and the next fold removes them", () => {
    const run = scratchRun();
    part(run, 1, 1000, 1, true);
    part(run, 2, 500, 1, true);
    // The fold's first write, as a fold killed right after it would leave the ledger: spent.json names the
    // parts it folded, and they are still there.
    fs.writeFileSync(
      run.spentFile,
      JSON.stringify({
        schema: 1,
        at: new Date().toISOString(),
        tokens: 1500,
        costUsd: 2,
        unpriced: 0,
        dispatches: 2,
        folded: [id(1), id(2)],
      }),
    );
    expect(totals(sumLedger(run).spend)).toEqual({ tokens: 1500, costUsd: 2 });
    part(run, 3, 10, 0, true);
    foldUnderLock(run, new Date());
    expect(fs.readdirSync(run.spend)).toEqual([]);
    expect(totals(sumLedger(run).spend)).toEqual({ tokens: 1510, costUsd: 2 });
  });

  it("never overwrites a spent.json it cannot read, and says the sum misses it", () => {
    const run = scratchRun();
    part(run, 1, 1000, 1, true);
    fs.writeFileSync(run.spentFile, "{ torn");
    const sum = foldUnderLock(run, new Date());
    expect(sum.problems).toEqual([run.spentFile]);
    expect(fs.readFileSync(run.spentFile, "utf8")).toBe("{ torn");
    expect(fs.existsSync(spendFile(run, id(1)))).toBe(true);
    expect(sum.spend.tokens).toBe(1000);
  });

  it("skips a hand-broken part or one copied under another dispatch's name, and names it", () => {
    const run = scratchRun();
    part(run, 1, 1000, 1, false);
    fs.copyFileSync(spendFile(run, id(1)), spendFile(run, id(2)));
    fs.writeFileSync(spendFile(run, id(3)), "not json");
    const sum = sumLedger(run);
    expect(sum.spend.tokens).toBe(1000);
    expect(sum.problems.map((p) => path.basename(p)).sort()).toEqual([`${id(2)}.json`, `${id(3)}.json`]);
  });

  it("takes the record's figures for a part its record writer never made final, once both are old", () => {
    const run = scratchRun();
    const old = new Date(Date.now() - REPAIR_AFTER_MS - 1000);
    part(run, 1, 100, null, false, old);
    const dir = dispatchDir(run, "d1", id(1));
    fs.mkdirSync(dir, { recursive: true });
    const record = {
      schema: 1,
      dispatchId: id(1),
      run: "r",
      name: "d1",
      backend: "codex",
      model: null,
      status: "ok",
      reason: "exited",
      exitCode: 0,
      signal: null,
      startedAt: old.toISOString(),
      endedAt: old.toISOString(),
      secs: 1,
      thread: null,
      tokens: { input: 900, cached: 0, output: 100 },
      costUsd: 0.42,
      reply: null,
      replyPath: null,
      changedFiles: null,
      error: null,
    };
    fs.writeFileSync(path.join(dir, "record.json"), JSON.stringify(record));
    // Freshly recorded: left as it is (its record writer may still be about to write it).
    fs.writeFileSync(
      path.join(dir, "record.json"),
      JSON.stringify({ ...record, endedAt: new Date().toISOString() }),
    );
    foldUnderLock(run, new Date());
    expect(fs.existsSync(spendFile(run, id(1)))).toBe(true);
    fs.writeFileSync(path.join(dir, "record.json"), JSON.stringify(record));
    foldUnderLock(run, new Date());
    expect(fs.existsSync(spendFile(run, id(1)))).toBe(false);
    expect(sumLedger(run).spend).toMatchObject({ tokens: 1000, costUsd: 0.42, live: 0, dispatches: 1 });
  });

  it("removes the temp file of a writer killed mid-write once it is a minute old, and never counts it", () => {
    const run = scratchRun();
    part(run, 1, 10, 0, false);
    const temp = path.join(run.spend, `.${id(2)}.json.4242.1.abc.tmp`);
    fs.writeFileSync(temp, '{"schema":1,"dispatchId":"x","tok');
    expect(sumLedger(run).spend.dispatches).toBe(1);
    foldUnderLock(run, new Date());
    expect(fs.existsSync(temp)).toBe(true);
    const old = (Date.now() - 120_000) / 1000;
    fs.utimesSync(temp, old, old);
    foldUnderLock(run, new Date());
    expect(fs.existsSync(temp)).toBe(false);
  });
});

describe("one sum for every supervisor of a run", () => {
  it("reads spend-now.json while it is fresh, and sums again once it is older than SUM_EVERY_MS", async () => {
    const run = scratchRun();
    part(run, 1, 100, 0.1, false);
    const t0 = new Date();
    expect((await runSpendNow(run, t0)).spend.tokens).toBe(100);
    part(run, 1, 250, 0.2, false);
    expect((await runSpendNow(run, new Date(t0.getTime() + SUM_EVERY_MS - 1))).spend.tokens).toBe(100);
    const later = await runSpendNow(run, new Date(t0.getTime() + SUM_EVERY_MS));
    expect(later.spend.tokens).toBe(250);
    expect(later.parts).toEqual({ [id(1)]: { tokens: 250, costUsd: 0.2 } });
  });

  it("does not take a sum dated in the future (a host whose clock is ahead) as fresh", async () => {
    const run = scratchRun();
    part(run, 1, 100, 0, false);
    await runSpendNow(run, new Date(Date.now() + 60_000));
    part(run, 1, 200, 0, false);
    expect((await runSpendNow(run, new Date())).spend.tokens).toBe(200);
  });

  it("uses a recent sum while another holds spend.lock, and sums without the lock when it has none", async () => {
    const run = scratchRun();
    part(run, 1, 100, 0, false);
    const t0 = Date.now();
    await runSpendNow(run, new Date(t0));
    part(run, 1, 300, 0, false);
    const release = await tryLock({ lockPath: run.spendLock, staleMs: 60_000 });
    if (release === null) throw new Error("spend.lock is busy");
    try {
      expect((await runSpendNow(run, new Date(t0 + 2000))).spend.tokens).toBe(100);
      fs.rmSync(run.spendNow);
      expect((await runSpendNow(run, new Date(t0 + 2000))).spend.tokens).toBe(300);
    } finally {
      await release();
    }
  });

  it("counts exactly what many writers at once spent, and no look ever counts a part twice", async () => {
    const run = scratchRun();
    const writers = 12;
    const steps = 40;
    // Each writer process rewrites its live part `steps` times (tokens 1, 2, … steps), then makes it final
    // (steps tokens) and folds, as a supervisor and its record writer do; the test sums meanwhile.
    const script = `
      const { writeSpendPart, foldUnderLock, withSpendLock } = await import(${JSON.stringify(path.join(ROOT, "dist/src/folder/run-ledger.js"))});
      const { runPaths } = await import(${JSON.stringify(path.join(ROOT, "dist/src/infra/paths.js"))});
      const run = runPaths(process.argv[1], "r");
      const ids = { dispatchId: process.argv[2], name: process.argv[3] };
      for (let n = 1; n <= ${steps}; n++) writeSpendPart(run, ids, { tokens: n, costUsd: n / 100 }, { at: new Date(), final: false });
      writeSpendPart(run, ids, { tokens: ${steps}, costUsd: ${steps} / 100 }, { at: new Date(), final: true });
      await withSpendLock(run, () => foldUnderLock(run, new Date()));
    `;
    const home = path.dirname(path.dirname(run.dir));
    const children = Array.from({ length: writers }, (_, i) =>
      spawn(process.execPath, ["--input-type=module", "-e", script, home, id(i), `d${i}`], {
        stdio: "ignore",
      }),
    );
    const done = Promise.all(children.map((c) => new Promise((resolve) => c.on("exit", resolve))));
    let finished = false;
    void done.then(() => {
      finished = true;
    });
    const most = writers * steps;
    let looks = 0;
    while (!finished) {
      const sum = await runSpendNow(run, new Date(), 0);
      expect(sum.spend.tokens).toBeLessThanOrEqual(most);
      looks += 1;
      // A look that finds nothing to lock does not yield: let the children's exits through.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await done).toEqual(Array(writers).fill(0));
    await runSpendNow(run, new Date(), 0);
    const end = sumLedger(run);
    expect(end.spend).toMatchObject({ tokens: most, live: 0, dispatches: writers });
    expect(end.spend.costUsd).toBeCloseTo(most / 100, 6);
    expect(looks).toBeGreaterThan(0);
  }, 60_000);
});
