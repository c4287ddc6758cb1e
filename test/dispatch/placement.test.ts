import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dispatchFolders, fakeDispatchArgs, isolatedHome, runCli } from "../helpers/cli.js";
import { ROOT, readJson, reapAll, tempDir } from "../helpers/folders.js";
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

/**
 * A home whose PATH has Slurm's client commands installed but not configured: each prints what Slurm's
 * print without a slurm.conf and fails.
 */
function homeWithUnconfiguredSlurm() {
  const { home, env } = isolatedHome();
  const bin = tempDir("catherd-slurm-bin-");
  const said = path.join(ROOT, "test/fixtures/slurm/sinfo-no-configuration.stderr");
  for (const name of ["sbatch", "squeue", "sinfo", "scontrol"]) {
    const body = `sed 's/^sinfo/${name}/' '${said}' >&2; exit 1`;
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  }
  return { home, env: { ...env, PATH: `${bin}:/usr/bin:/bin` } };
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
      /^--slurm-opt is for a dispatch placed on slurm, and this one runs locally/,
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

describe("a Slurm installed but not configured", () => {
  it("refuses a dispatch placed on it before anything is written, and never remembers it for the run", async () => {
    const { home, env } = homeWithUnconfiguredSlurm();
    const runFile = path.join(home, "runs", "default", "run.json");
    const refused = await dispatch(env, ["--run-placement", "slurm"]);
    expect(refused.code).toBe(3);
    const error = JSON.parse(refused.stdout).error as { code: string; message: string; fix: string };
    expect(error).toMatchObject({
      code: "E_ENGINE_UNCONFIGURED",
      message: expect.stringContaining("Slurm is installed here but not configured"),
    });
    expect(error.message).toContain("Could not establish a configuration source");
    expect(error.fix).toContain("--run-placement none");
    expect(dispatchFolders(home)).toEqual([]);
    expect(fs.existsSync(runFile) ? readJson(runFile).placement : undefined).toBeUndefined();

    // A run that remembers slurm from before: each plain dispatch is refused the same, none recorded
    // failed, until --run-placement none takes the run back to local.
    const remembered = await dispatch(env, ["--placement", "local", "--run-placement", "slurm"]);
    expect(remembered.code, remembered.stderr).toBe(0);
    const plain = await dispatch(env, []);
    expect(plain.code).toBe(3);
    expect(errorOf(plain.stdout).code).toBe("E_ENGINE_UNCONFIGURED");
    expect(dispatchFolders(home)).toHaveLength(1);
    const back = await dispatch(env, ["--run-placement", "none"]);
    expect(back.code, back.stderr).toBe(0);
    expect(readJson(runFile).placement).toBeUndefined();
  });
});
