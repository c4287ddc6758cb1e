import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CliResult, dispatchedOf, dispatchFolders, isolatedHome, runCli } from "../helpers/cli.js";
import { FAKE_AGENT, reapAll, tempDir } from "../helpers/folders.js";
import { holdAdmissionLock } from "../helpers/lock-holder.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

function hangScenario(): string {
  const file = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(file, JSON.stringify({ steps: [{ out: "busy" }, { hang: true }] }));
  return file;
}

function fakeArgs(scenario: string): string[] {
  return ["--", process.execPath, FAKE_AGENT, scenario];
}

/** Cancels every admitted dispatch by its cancel file and waits for the records. */
async function cancelAll(results: CliResult[]) {
  const ok = results.filter((r) => r.code === 0).map(dispatchedOf);
  for (const d of ok) {
    dispatched.push(d.dispatchId);
    fs.writeFileSync(path.join(d.dir, "cancel"), "test");
  }
  for (const d of ok) await waitForJson(path.join(d.dir, "record.json"), 20_000);
}

describe("admission races, for real, in parallel processes", () => {
  it("admits exactly one of 20 simultaneous dispatches of one name", async () => {
    const { home, env } = isolatedHome();
    const scenario = hangScenario();
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        runCli(["dispatch", "--backend", "exec", "--name", "same", "--json", ...fakeArgs(scenario)], {
          env,
          timeoutMs: 60_000,
        }),
      ),
    );
    await cancelAll(results);
    expect(results.filter((r) => r.code === 0)).toHaveLength(1);
    const refused = results.filter((r) => r.code !== 0);
    expect(refused).toHaveLength(19);
    for (const r of refused) expect(JSON.parse(r.stdout).error.code).toBe("E_ADMIT_DUPLICATE");
    expect(dispatchFolders(home)).toHaveLength(1);
  }, 90_000);

  it("admits exactly 5 of 20 names against --max-parallel 5, and remembers the cap", async () => {
    const { home, env } = isolatedHome();
    const scenario = hangScenario();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        runCli(
          [
            "dispatch",
            "--backend",
            "exec",
            "--name",
            `n${i}`,
            "--max-parallel",
            "5",
            "--json",
            ...fakeArgs(scenario),
          ],
          {
            env,
            timeoutMs: 60_000,
          },
        ),
      ),
    );
    try {
      expect(results.filter((r) => r.code === 0)).toHaveLength(5);
      for (const r of results.filter((x) => x.code !== 0))
        expect(JSON.parse(r.stdout).error.code).toBe("E_ADMIT_CAPACITY");
      expect(JSON.parse(fs.readFileSync(path.join(home, "runs/default/run.json"), "utf8")).maxParallel).toBe(
        5,
      );
      const sixth = await runCli(
        ["dispatch", "--backend", "exec", "--name", "later", "--json", ...fakeArgs(scenario)],
        { env },
      );
      expect(JSON.parse(sixth.stdout).error.code).toBe("E_ADMIT_CAPACITY");
    } finally {
      await cancelAll(results);
    }
  }, 90_000);

  it("refuses --owns that overlap a live dispatch's, naming both, and admits disjoint ones", async () => {
    const { env } = isolatedHome();
    const cwd = tempDir();
    const scenario = hangScenario();
    const run = (name: string, owns: string) =>
      runCli(
        [
          "dispatch",
          "--backend",
          "exec",
          "--name",
          name,
          "--cwd",
          cwd,
          "--owns",
          owns,
          "--json",
          ...fakeArgs(scenario),
        ],
        { env },
      );
    const first = await run("a", "src/,README.md");
    const results = [first];
    try {
      expect(first.code).toBe(0);
      const overlapping = await run("b", "src/lib/x.ts");
      expect(overlapping.code).toBe(1);
      const error = JSON.parse(overlapping.stdout).error;
      expect(error.code).toBe("E_ADMIT_OVERLAP");
      expect(error.message).toContain(path.join(cwd, "src/lib/x.ts"));
      expect(error.message).toContain(path.join(cwd, "src/"));
      expect(error.message).toContain(" a ");
      const sameFile = await run("c", "README.md");
      expect(JSON.parse(sameFile.stdout).error.code).toBe("E_ADMIT_OVERLAP");
      const disjoint = await run("d", "docs/,srcs/");
      results.push(disjoint);
      expect(disjoint.code).toBe(0);
    } finally {
      await cancelAll(results);
    }
    // Once recorded, a dispatch no longer blocks.
    const again = await run("e", "src/");
    await cancelAll([again]);
    expect(again.code).toBe(0);
  }, 60_000);

  it("is not blocked beyond the stale window by a lock left by a SIGKILLed dispatcher", async () => {
    const { home, env } = isolatedHome();
    const runDir = path.join(home, "runs", "default");
    fs.mkdirSync(runDir, { recursive: true });
    const holder = await holdAdmissionLock(runDir, 5000);
    holder.kill("SIGKILL");
    await waitFor("holder to die", () =>
      holder.exitCode !== null || holder.signalCode !== null ? true : undefined,
    );
    const started = Date.now();
    const result = await runCli(["dispatch", "--backend", "exec", "--json", "--", "true"], {
      env,
      timeoutMs: 30_000,
    });
    const waited = Date.now() - started;
    expect(result.code).toBe(0);
    const d = dispatchedOf(result);
    dispatched.push(d.dispatchId);
    await waitForJson(path.join(d.dir, "record.json"));
    expect(waited).toBeLessThan(5000 + 3000);
  }, 30_000);
});
