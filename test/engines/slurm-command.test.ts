import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runSlurm } from "../../src/engines/slurm/command.js";
import { readJob, readJobs } from "../../src/engines/slurm/job.js";
import { engineNoticeIn } from "../../src/engines/slurm/job-output.js";
import { clusterLicenses, definesLicense } from "../../src/engines/slurm/licenses.js";
import { submitJob } from "../../src/engines/slurm/sbatch.js";
import { cancelJob } from "../../src/engines/slurm/scancel.js";
import { slurmUnusable } from "../../src/engines/slurm/usable.js";
import { ROOT, tempDir } from "../helpers/folders.js";

// The engine wrapper where the engine misbehaves: stand-in programs on PATH that print what Slurm printed
// (the captures of test/fixtures/slurm/), hang, or are not there. The real engine: test/slurm/.

/** A folder holding executable stand-ins `name` → shell body, to put first on PATH. */
function standIns(programs: Record<string, string>): NodeJS.ProcessEnv {
  const dir = tempDir("catherd-slurm-bin-");
  for (const [name, body] of Object.entries(programs)) {
    fs.writeFileSync(path.join(dir, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  }
  return { ...process.env, PATH: `${dir}:/usr/bin:/bin` };
}

const fixture = (name: string) => path.join(ROOT, "test/fixtures/slurm", name);

const request = {
  jobName: "catherd.r1.d1",
  outputPath: "/tmp/x/slurm.out",
  workDir: "/tmp/x",
  memoryBytes: null,
  wallMs: null,
  graceMs: 0,
  licenses: {},
  extraArgs: [],
  command: ["true"],
};

describe("a Slurm call", () => {
  it("says the engine is missing when its command is not on PATH", async () => {
    const env = { ...process.env, PATH: tempDir() };
    await expect(submitJob(request, { env })).rejects.toMatchObject({
      code: "E_ENGINE_MISSING",
      message: "cannot submit catherd.r1.d1 to Slurm: sbatch is not installed here (not found on PATH)",
    });
  });

  it("gives up on an engine that does not answer in time, and kills the call", async () => {
    const env = standIns({ sbatch: "exec sleep 30" });
    const started = Date.now();
    await expect(submitJob(request, { env, timeoutMs: 300 })).rejects.toMatchObject({
      code: "E_ENGINE_TIMEOUT",
      message: "cannot submit catherd.r1.d1 to Slurm: sbatch did not answer within 300 ms",
    });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("carries sbatch's own words when it refuses", async () => {
    const env = standIns({ sbatch: `cat ${fixture("sbatch-invalid-license.stderr")} >&2; exit 1` });
    await expect(submitJob(request, { env })).rejects.toMatchObject({
      code: "E_ENGINE_REFUSED",
      message:
        "cannot submit catherd.r1.d1 to Slurm: slurm says: Batch job submission failed: Invalid license specification",
    });
  });

  it("refuses an sbatch that prints no job id", async () => {
    const env = standIns({ sbatch: "echo 'Submitted batch job 12'" });
    await expect(submitJob(request, { env })).rejects.toMatchObject({ code: "E_ENGINE_REFUSED" });
  });

  it("gives sbatch the batch script on stdin and returns the job id", async () => {
    const dir = tempDir();
    const env = standIns({
      sbatch: `cat > ${dir}/script; printf '%s\\n' "$@" > ${dir}/args; echo '77;main'`,
    });
    expect(await submitJob({ ...request, command: ["catherd", "supervise", "/d"] }, { env })).toEqual({
      jobId: "77",
      cluster: "main",
    });
    expect(fs.readFileSync(path.join(dir, "script"), "utf8")).toBe(
      "#!/bin/sh\nexec 'catherd' 'supervise' '/d'\n",
    );
    expect(fs.readFileSync(path.join(dir, "args"), "utf8")).toContain("--no-requeue\n");
  });

  it("runs in the C locale, whatever the caller's", async () => {
    const env = standIns({ scontrol: "echo $LC_ALL" });
    expect(await runSlurm("scontrol", [], { env: { ...env, LC_ALL: "fr_FR.UTF-8" } })).toMatchObject({
      ok: true,
      stdout: "C\n",
    });
  });
});

describe("reading a job", () => {
  it("reads it from the controller", async () => {
    const env = standIns({ scontrol: `cat ${fixture("scontrol-running.txt")}` });
    expect(await readJob("8", { env })).toMatchObject({
      kind: "known",
      source: "scontrol",
      job: { state: "RUNNING" },
    });
  });

  it("asks accounting who cancelled a cancelled job, and keeps the controller's answer without it", async () => {
    const cancelled = `cat ${fixture("scontrol-cancelled-running.txt")}`;
    const withAccounting = standIns({
      scontrol: cancelled,
      sacct: "echo '1|run1.d1|CANCELLED by 1000|None|vm|0:15|a|b|c'",
    });
    expect(await readJob("1", { env: withAccounting })).toMatchObject({
      kind: "known",
      source: "scontrol",
      job: { state: "CANCELLED", cancelledBy: "1000" },
    });
    const without = standIns({
      scontrol: cancelled,
      sacct: `cat ${fixture("sacct-accounting-disabled.stderr")} >&2; exit 1`,
    });
    expect(await readJob("1", { env: without })).toMatchObject({ kind: "known", job: { cancelledBy: null } });
  });

  it("reads from accounting a job the controller forgot, or says it is forgotten", async () => {
    const unknown = `cat ${fixture("scontrol-unknown-job.stderr")} >&2; exit 1`;
    const accounted = standIns({ scontrol: unknown, sacct: "echo '5|x|TIMEOUT|TimeLimit|vm|0:15|a|b|c'" });
    expect(await readJob("5", { env: accounted })).toMatchObject({
      kind: "known",
      source: "sacct",
      job: { state: "TIMEOUT" },
    });
    const none = standIns({
      scontrol: unknown,
      sacct: `cat ${fixture("sacct-accounting-disabled.stderr")} >&2; exit 1`,
    });
    expect(await readJob("5", { env: none })).toEqual({ kind: "forgotten" });
    const empty = standIns({ scontrol: unknown, sacct: "true" });
    expect(await readJob("5", { env: empty })).toEqual({ kind: "forgotten" });
  });

  it("says the engine is unreachable rather than that the job is gone", async () => {
    const env = standIns({
      scontrol:
        "echo 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)' >&2; exit 1",
    });
    expect(await readJob("5", { env })).toMatchObject({
      kind: "unreachable",
      error: {
        code: "E_ENGINE_REFUSED",
        message: expect.stringContaining("Unable to contact slurm controller"),
      },
    });
    const squeue = standIns({ squeue: "exit 1" });
    expect(await readJobs(["5"], { env: squeue })).toMatchObject({
      unreachable: { code: "E_ENGINE_REFUSED" },
    });
  });

  it("refuses a job id that is not one", async () => {
    await expect(readJob("5; rm -rf /")).rejects.toThrow(TypeError);
  });
});

describe("the engine's notice in a job's output", () => {
  it("reads it from the file's end, and nothing from a missing file", () => {
    const dir = tempDir();
    const file = path.join(dir, "slurm.out");
    fs.writeFileSync(
      file,
      `${"agent output\n".repeat(10_000)}${fs.readFileSync(fixture("job-output-timeout.out"), "utf8")}`,
    );
    expect(engineNoticeIn(file)).toMatchObject({ jobId: "4", due: "TIME LIMIT" });
    expect(engineNoticeIn(path.join(dir, "missing.out"))).toBeNull();
  });
});

describe("cancelling a job and reading the cluster's licenses", () => {
  it("runs scancel with the job id, and carries its words when it refuses", async () => {
    const dir = tempDir();
    await cancelJob("12", { env: standIns({ scancel: `echo "$@" > ${dir}/args` }) });
    expect(fs.readFileSync(path.join(dir, "args"), "utf8")).toBe("12\n");
    const refused = standIns({
      scancel: "echo 'scancel: error: Kill job error on job id 12: Access/permission denied' >&2; exit 1",
    });
    await expect(cancelJob("12", { env: refused })).rejects.toMatchObject({
      code: "E_ENGINE_REFUSED",
      message:
        "cannot cancel Slurm job 12: slurm says: Kill job error on job id 12: Access/permission denied",
    });
    await expect(cancelJob("all")).rejects.toThrow(TypeError);
  });

  it("reads the licenses the cluster defines, and says the engine is missing without scontrol", async () => {
    const env = standIns({ scontrol: `cat ${fixture("scontrol-show-licenses.txt")}` });
    expect(Object.keys(await clusterLicenses({ env }))).toEqual(["claude-code", "codex", "gemini"]);
    expect(await definesLicense("codex", { env })).toBe(true);
    expect(await definesLicense("opencode", { env })).toBe(false);
    await expect(clusterLicenses({ env: { ...process.env, PATH: tempDir() } })).rejects.toMatchObject({
      code: "E_ENGINE_MISSING",
    });
  });
});

describe("whether Slurm can take a job from here", () => {
  it.each([
    ["no configuration", "sinfo-no-configuration.stderr", "Could not establish a configuration source"],
    ["no controller answering", "sinfo-no-controller.stderr", "Unable to contact slurm controller"],
  ])("says Slurm is not configured when sinfo finds %s, and how to go back", async (_title, file, words) => {
    const env = standIns({ sinfo: `cat ${fixture(file)} >&2; exit 1` });
    const unusable = await slurmUnusable({ env });
    expect(unusable).toMatchObject({
      code: "E_ENGINE_UNCONFIGURED",
      message: expect.stringContaining("Slurm is installed here but not configured"),
    });
    expect(unusable?.message).toContain(words);
    expect(unusable?.fix).toContain("--run-placement none");
    expect(unusable?.fix).toContain("--placement local");
  });

  it("says nothing when sinfo answers or is not installed, and passes on another refusal in sinfo's words", async () => {
    expect(await slurmUnusable({ env: standIns({ sinfo: "echo debug*" }) })).toBeNull();
    expect(await slurmUnusable({ env: { ...process.env, PATH: tempDir() } })).toBeNull();
    const refused = await slurmUnusable({
      env: standIns({ sinfo: "echo 'sinfo: error: Invalid user for SlurmUser slurm' >&2; exit 1" }),
    });
    expect(refused).toMatchObject({
      code: "E_ENGINE_REFUSED",
      message: "cannot place the dispatch on Slurm: sinfo says: Invalid user for SlurmUser slurm",
    });
  });
});
