import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  batchScript,
  literalFilenamePattern,
  memoryMegabytes,
  type SubmitRequest,
  sbatchArgs,
  shellQuote,
  timeLimitMinutes,
} from "../../src/engines/slurm/submit-request.js";

const request: SubmitRequest = {
  jobName: "catherd.r1.20261201T101500Z-k3x9qa",
  outputPath: "/shared/runs/r1/dispatches/fix/20261201T101500Z-k3x9qa/slurm.out",
  workDir: "/shared/runs/r1/dispatches/fix/20261201T101500Z-k3x9qa",
  memoryBytes: 2 * 1024 ** 3,
  wallMs: 30 * 60_000,
  graceMs: 15_000,
  licenses: { codex: 1 },
  extraArgs: ["--partition=agents", "--qos", "long"],
  command: [
    "/usr/bin/node",
    "/opt/catherd/dist/bin/catherd.js",
    "supervise",
    "/shared/runs/r1/dispatches/fix/x",
  ],
};

describe("the sbatch call of a dispatch", () => {
  it("passes --slurm-opt first, then the flags the folder depends on", () => {
    expect(sbatchArgs(request)).toEqual([
      "--partition=agents",
      "--qos",
      "long",
      "--parsable",
      "--job-name=catherd.r1.20261201T101500Z-k3x9qa",
      "--output=/shared/runs/r1/dispatches/fix/20261201T101500Z-k3x9qa/slurm.out",
      "--open-mode=append",
      "--chdir=/shared/runs/r1/dispatches/fix/20261201T101500Z-k3x9qa",
      "--no-requeue",
      "--export=ALL",
      "--mem=2048M",
      "--time=31",
      "--licenses=codex:1",
    ]);
  });

  it("leaves memory, time and licenses to the cluster when the dispatch sets none", () => {
    const args = sbatchArgs({ ...request, memoryBytes: null, wallMs: null, licenses: {}, extraArgs: [] });
    expect(args.filter((a) => /^--(mem|time|licenses)=/.test(a))).toEqual([]);
  });

  it("asks for several licenses, never for none of one", () => {
    expect(sbatchArgs({ ...request, licenses: { codex: 1, gpu: 2, none: 0 } }).at(-1)).toBe(
      "--licenses=codex:1,gpu:2",
    );
  });

  it("exports the submitter's environment, and the --pass-env variables by name only", () => {
    const args = sbatchArgs({ ...request, exportNames: ["ANTHROPIC_API_KEY", "GH_TOKEN"] });
    expect(args.filter((a) => a.startsWith("--export"))).toEqual(["--export=ALL,ANTHROPIC_API_KEY,GH_TOKEN"]);
    expect(
      sbatchArgs({ ...request, extraArgs: ["--export=NONE"] }).filter((a) => a.startsWith("--export")),
    ).toEqual(["--export=NONE", "--export=ALL"]);
  });

  it("refuses a field that is not one line", () => {
    expect(() => sbatchArgs({ ...request, jobName: "a\nb" })).toThrow(TypeError);
    expect(() => sbatchArgs({ ...request, outputPath: "" })).toThrow(TypeError);
  });
});

describe("--time and --mem in Slurm's units", () => {
  it.each([
    [30 * 60_000, 15_000, 31],
    [60_000, 0, 1],
    [59_000, 1_000, 1],
    [59_000, 1_001, 2],
    [1, 0, 1],
    [6 * 3_600_000, 10_000, 361],
  ])("a wall of %d ms and a grace of %d ms give %d minutes", (wall, grace, minutes) => {
    expect(timeLimitMinutes(wall, grace)).toBe(minutes);
  });

  it.each([
    [1, 1],
    [1024 * 1024, 1],
    [1024 * 1024 + 1, 2],
    [64 * 1024 * 1024, 64],
  ])("%d bytes are %dM", (bytes, mb) => {
    expect(memoryMegabytes(bytes)).toBe(mb);
  });
});

describe("paths and words given to sbatch and the batch script", () => {
  it.each([
    ["/runs/r1/slurm.out", "/runs/r1/slurm.out"],
    ["/runs/100%/slurm.out", "/runs/100%%/slurm.out"],
    ["/runs/a%j/slurm.out", "/runs/a%%j/slurm.out"],
    ["/runs/a\\b%j/slurm.out", "/runs/a\\b%j/slurm.out"],
  ])("the output %s is the pattern %s", (file, pattern) => {
    expect(literalFilenamePattern(file)).toBe(pattern);
  });

  it("quotes every word so that /bin/sh hands it over unchanged", () => {
    const words = ["plain", "with space", "it's", "$HOME", "`id`", "a\nb", ""];
    const script = batchScript(["/usr/bin/printf", "%s\\0", ...words]);
    expect(script.startsWith("#!/bin/sh\nexec '/usr/bin/printf' ")).toBe(true);
    const out = execFileSync("/bin/sh", ["-c", script], { encoding: "utf8" });
    expect(out.split("\0").slice(0, -1)).toEqual(words);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });

  it("refuses a batch script without a command", () => {
    expect(() => batchScript([])).toThrow(TypeError);
  });
});
