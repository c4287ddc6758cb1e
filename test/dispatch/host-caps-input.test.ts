import { describe, expect, it } from "vitest";
import { runCaps } from "../../src/dispatch/request/run-caps.js";

// `--max-parallel-host HOST=N` (specs/dispatch.md §7): a cap per host a placement names, keyed by the
// host as `--placement ssh:HOST` writes it, checked as that host is before anything is written.

const hostCaps = (pairs: string[]) => runCaps.validate({ maxParallelHost: pairs }).maxParallelHost;

describe("--max-parallel-host", () => {
  it("takes hosts as a placement names them, the last cap of a host winning", () => {
    expect(hostCaps(["box=2", "me@gpu-1.lab=1", "10.0.0.7=3", "box=4"])).toEqual({
      box: 4,
      "me@gpu-1.lab": 1,
      "10.0.0.7": 3,
    });
    expect(hostCaps([])).toEqual({});
  });

  it.each([
    ["no cap", "box"],
    ["no host", "=2"],
    ["a zero cap", "box=0"],
    ["a cap over 10000", "box=10001"],
    ["a cap that is no number", "box=two"],
    ["a host ssh would read as an option", "-oProxyCommand=x=1"],
    ["a host with whitespace", "a b=1"],
    ["a host with a shell metacharacter", "box;id=1"],
    ["a host with a newline", "box\n=1"],
  ])("refuses %s", (_title, pair) => {
    expect(() => hostCaps([pair])).toThrow(
      expect.objectContaining({ code: "E_INPUT_INVALID", fix: expect.stringContaining("<host>=<n>") }),
    );
  });

  it("refuses more hosts than a run may cap", () => {
    const many = Array.from({ length: 65 }, (_, i) => `h${i}=1`);
    expect(() => hostCaps(many)).toThrow(/more than 64 hosts/);
  });
});
