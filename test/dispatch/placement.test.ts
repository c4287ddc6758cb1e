import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dispatchFolders, fakeDispatchArgs, isolatedHome, runCli } from "../helpers/cli.js";
import { readJson, reapAll, tempDir } from "../helpers/folders.js";
import { waitForJson } from "../helpers/wait.js";

// Where a dispatch's supervisor runs, as the command line resolves it (specs/placement.md, "Placement"):
// --placement, else the run's (--run-placement, run.json), else $CATHERD_PLACEMENT, else local. Without
// Slurm's client commands on PATH, a dispatch placed on Slurm is refused before anything is written, which
// is how these tests see the placement a dispatch got without a cluster.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

function scenario(): string {
  const file = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(file, JSON.stringify({ steps: [{ exit: 0 }] }));
  return file;
}

/** A home whose PATH has no sbatch. */
function homeWithoutSlurm(extra: Record<string, string> = {}) {
  const { home, env } = isolatedHome();
  return { home, env: { ...env, PATH: "/nonexistent", ...extra } };
}

async function dispatch(env: NodeJS.ProcessEnv, flags: string[]) {
  const result = await runCli(fakeDispatchArgs(scenario(), flags), { env });
  if (result.code === 0) {
    const d = JSON.parse(result.stdout).dispatched;
    dispatched.push(d.dispatchId);
    await waitForJson(path.join(d.dir, "record.json"));
  }
  return result;
}

const errorOf = (stdout: string) => JSON.parse(stdout).error as { code: string; message: string };

describe("the placement a dispatch gets", () => {
  it("remembers --run-placement for the run's later dispatches, before $CATHERD_PLACEMENT, until none", async () => {
    const { home, env } = homeWithoutSlurm();
    const runFile = path.join(home, "runs", "default", "run.json");
    // --placement wins for this dispatch; the run's is remembered.
    const first = await dispatch(env, ["--placement", "local", "--run-placement", "slurm"]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).dispatched).toMatchObject({
      placement: null,
      supervisorPid: expect.any(Number),
    });
    expect(readJson(runFile)).toMatchObject({ placement: "slurm" });
    expect(
      readJson(path.join(JSON.parse(first.stdout).dispatched.dir, "admit.json")).placement,
    ).toBeUndefined();

    // The run's placement, before the environment's: refused here, for want of sbatch, with nothing written.
    for (const extra of [{}, { CATHERD_PLACEMENT: "local" }]) {
      const refused = await dispatch({ ...env, ...extra }, []);
      expect(refused.code).toBe(3);
      expect(errorOf(refused.stdout)).toMatchObject({
        code: "E_ENGINE_MISSING",
        message: expect.stringContaining("sbatch"),
      });
    }
    expect(dispatchFolders(home)).toHaveLength(1);

    const forgotten = await dispatch(env, ["--run-placement", "none"]);
    expect(forgotten.code, forgotten.stderr).toBe(0);
    expect(readJson(runFile).placement).toBeUndefined();
    const fromEnvironment = await dispatch({ ...env, CATHERD_PLACEMENT: "slurm" }, []);
    expect(errorOf(fromEnvironment.stdout).code).toBe("E_ENGINE_MISSING");
  });

  it.each([
    [
      "an unknown CATHERD_PLACEMENT",
      { CATHERD_PLACEMENT: "cloud" },
      [],
      /^CATHERD_PLACEMENT "cloud" is not a placement/,
    ],
    ["an unknown --placement", {}, ["--placement", "k8s"], /^--placement "k8s"/],
    [
      "--slurm-opt for a local dispatch",
      {},
      ["--slurm-opt=--partition=gpu"],
      /^--slurm-opt is for a dispatch placed on Slurm/,
    ],
    [
      "a --slurm-opt that replaces the job",
      {},
      ["--placement", "slurm", "--slurm-opt=--wrap=id"],
      /--slurm-opt --wrap/,
    ],
  ])("refuses %s before anything is written (exit 2)", async (_title, extra, flags, message) => {
    const { home, env } = homeWithoutSlurm(extra as Record<string, string>);
    const result = await dispatch(env, flags as string[]);
    expect(result.code).toBe(2);
    expect(errorOf(result.stdout)).toMatchObject({
      code: "E_INPUT_INVALID",
      message: expect.stringMatching(message),
    });
    expect(dispatchFolders(home)).toEqual([]);
  });
});
