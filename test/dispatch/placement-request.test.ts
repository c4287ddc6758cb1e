import { describe, expect, it } from "vitest";
import {
  admitPlacementOf,
  type PlacementRequest,
  parsePlacement,
  resolvePlacement,
} from "../../src/dispatch/request/placement.js";

// The placement a dispatch asks for (specs/placement.md, "Placement"): validated before anything is
// written, resolved against the run's remembered placement and the environment.

const asked = (over: Partial<PlacementRequest> = {}): PlacementRequest => ({
  placement: null,
  runPlacement: null,
  fromEnvironment: null,
  engineOptions: {},
  ...over,
});

describe("which placement a dispatch gets", () => {
  it.each<[string, Partial<PlacementRequest>, "local" | "slurm" | null, "local" | "slurm"]>([
    ["nothing said anywhere", {}, null, "local"],
    ["the environment", { fromEnvironment: "slurm" }, null, "slurm"],
    ["the run's, before the environment", { fromEnvironment: "slurm" }, "local", "local"],
    ["--run-placement, before the run's", { runPlacement: "slurm" }, "local", "slurm"],
    [
      "--run-placement none: the environment again",
      { runPlacement: "none", fromEnvironment: "slurm" },
      "local",
      "slurm",
    ],
    ["--run-placement none, no environment", { runPlacement: "none" }, "slurm", "local"],
    [
      "--placement, before everything",
      { placement: "local", runPlacement: "slurm", fromEnvironment: "slurm" },
      "slurm",
      "local",
    ],
  ])("%s", (_title, request, runs, placement) => {
    expect(resolvePlacement(asked(request), runs)).toBe(placement);
  });
});

describe("validating the placement flags", () => {
  const parse = (raw: Partial<Parameters<typeof parsePlacement>[0]>) =>
    parsePlacement({ environment: {}, ...raw });

  it("takes the flags and the environment as given", () => {
    expect(
      parse({
        placement: "slurm",
        runPlacement: "none",
        engineOptions: { slurm: ["--partition=gpu", "-Aproj"] },
        environment: { CATHERD_PLACEMENT: "local" },
      }),
    ).toEqual({
      placement: "slurm",
      runPlacement: "none",
      fromEnvironment: "local",
      engineOptions: { slurm: ["--partition=gpu", "-Aproj"] },
    });
    expect(parse({ environment: { CATHERD_PLACEMENT: "" } }).fromEnvironment).toBeNull();
  });

  it.each<[string, Partial<Parameters<typeof parsePlacement>[0]>, RegExp]>([
    ["an unknown --placement", { placement: "kubernetes" }, /^--placement "kubernetes" is not a placement/],
    ["--run-placement none is not a placement", { placement: "none" }, /^--placement "none"/],
    ["an unknown --run-placement", { runPlacement: "elsewhere" }, /^--run-placement "elsewhere"/],
    [
      "an unknown CATHERD_PLACEMENT",
      { environment: { CATHERD_PLACEMENT: "cloud" } },
      /^CATHERD_PLACEMENT "cloud"/,
    ],
    ["a --slurm-opt that is no option", { engineOptions: { slurm: ["gpu"] } }, /is not an sbatch option/],
    ["a --slurm-opt of two lines", { engineOptions: { slurm: ["--comment=a\nb"] } }, /must be one line/],
    ["an empty --slurm-opt", { engineOptions: { slurm: [""] } }, /must be one line/],
    [
      "--wrap, which replaces the batch script",
      { engineOptions: { slurm: ["--wrap=sleep 1"] } },
      /--slurm-opt --wrap would change/,
    ],
    [
      "--array, which runs it many times",
      { engineOptions: { slurm: ["--array=1-4"] } },
      /--slurm-opt --array/,
    ],
    ["-a, --array's short form", { engineOptions: { slurm: ["-a1-4"] } }, /--slurm-opt -a would change/],
    [
      "--wait, which holds sbatch until the job ends",
      { engineOptions: { slurm: ["--wait"] } },
      /--slurm-opt --wait/,
    ],
    [
      "--test-only, which submits nothing",
      { engineOptions: { slurm: ["--test-only"] } },
      /--slurm-opt --test-only/,
    ],
  ])("refuses %s", (_title, raw, message) => {
    expect(() => parse(raw)).toThrow(
      expect.objectContaining({ code: "E_INPUT_INVALID", message: expect.stringMatching(message) }),
    );
  });

  it("writes admit.json's placement for an engine, and refuses --slurm-opt for a local dispatch", () => {
    expect(admitPlacementOf("slurm", asked({ engineOptions: { slurm: ["--qos=long"] } }))).toEqual({
      engine: "slurm",
      options: ["--qos=long"],
    });
    expect(admitPlacementOf("local", asked())).toBeUndefined();
    expect(() => admitPlacementOf("local", asked({ engineOptions: { slurm: ["--qos=long"] } }))).toThrow(
      expect.objectContaining({
        code: "E_INPUT_INVALID",
        message: expect.stringMatching(/^--slurm-opt is for/),
      }),
    );
  });
});
