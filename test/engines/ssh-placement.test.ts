import { describe, expect, it } from "vitest";
import {
  admitPlacementOf,
  type PlacementRequest,
  parsePlacement,
  resolvePlacement,
} from "../../src/dispatch/request/placement.js";
import { placementParts, placementSchema } from "../../src/domain/placement.js";
import { checkHost } from "../../src/engines/ssh/host.js";

// `--placement ssh:HOST` as the request reads it (specs/placement.md, "SSH", "The host"): a host ssh can
// only take as its destination, checked before ssh runs, wherever the placement came from.

const asked = (over: Partial<PlacementRequest> = {}): PlacementRequest => ({
  placement: null,
  runPlacement: null,
  fromEnvironment: null,
  engineOptions: {},
  ...over,
});

const HOSTILE: [string, string, RegExp][] = [
  ["an empty host", "", /names no host/],
  ["an ssh option", "-oProxyCommand=touch /tmp/pwned", /starts with "-"/],
  ["a lone dash", "-", /starts with "-"/],
  ["whitespace", "box touch /tmp/x", /holds a character/],
  ["a tab", "box\tx", /is not a placement|holds a character/],
  ["a semicolon", "box;reboot", /holds a character/],
  ["a command substitution", "$(reboot)", /holds a character/],
  ["backticks", "`reboot`", /holds a character/],
  ["a pipe", "box|sh", /holds a character/],
  ["an ampersand", "box&", /holds a character/],
  ["a redirection", "box>x", /holds a character/],
  ["a single quote", "box'x", /holds a character/],
  ["a double quote", 'box"x', /holds a character/],
  ["a glob", "box*", /holds a character/],
  ["a backslash", "box\\x", /holds a character/],
  ["a newline", "box\nreboot", /is not a placement|holds a character/],
  ["a NUL", "box\0", /is not a placement|holds a character/],
  ["a colon (an ssh:// form, an IPv6 address)", "user@box:22", /holds a character/],
  ["a host past 253 characters", "a".repeat(254), /longer than 253/],
];

describe("the host of ssh:HOST", () => {
  it.each<[string, string]>([
    ["an alias of the user's ssh configuration", "gpu-box"],
    ["a fully qualified name", "node7.cluster.example.org"],
    ["a user and a host", "alice@node7"],
    ["an IPv4 address", "10.0.0.7"],
    ["an underscore", "build_host"],
    ["253 characters", "a".repeat(253)],
  ])("takes %s", (_title, host) => {
    expect(checkHost(host)).toBe(host);
    expect(parsePlacement({ placement: `ssh:${host}`, environment: {} }).placement).toBe(`ssh:${host}`);
  });

  it.each(HOSTILE)("refuses %s before ssh runs", (_title, host, message) => {
    const refused = expect.objectContaining({
      code: "E_INPUT_INVALID",
      message: expect.stringMatching(message),
    });
    expect(() => parsePlacement({ placement: `ssh:${host}`, environment: {} })).toThrow(refused);
    expect(() => parsePlacement({ runPlacement: `ssh:${host}`, environment: {} })).toThrow(refused);
    expect(() => parsePlacement({ environment: { CATHERD_PLACEMENT: `ssh:${host}` } })).toThrow(refused);
  });

  it.each(HOSTILE)("refuses %s remembered in run.json, before it is used", (_title, host) => {
    expect(() => resolvePlacement(asked(), `ssh:${host}`)).toThrow(
      expect.objectContaining({ code: "E_INPUT_INVALID" }),
    );
  });
});

describe("an engine's target", () => {
  it.each<[string, string, RegExp]>([
    ["ssh without a host", "ssh", /names no target: give ssh:<host>/],
    ["a target for Slurm, which takes none", "slurm:gpu", /slurm takes no target/],
    ["a target for local", "local:box", /is not a placement/],
    ["an unknown engine with a target", "kubernetes:box", /is not a placement/],
  ])("refuses %s", (_title, placement, message) => {
    expect(() => parsePlacement({ placement, environment: {} })).toThrow(
      expect.objectContaining({ code: "E_INPUT_INVALID", message: expect.stringMatching(message) }),
    );
  });

  it("keeps the host in admit.json's placement, as the user gave it", () => {
    expect(admitPlacementOf("ssh:alice@gpu-box", asked())).toEqual({
      engine: "ssh",
      options: [],
      target: "alice@gpu-box",
    });
    expect(() => admitPlacementOf("ssh:-oProxyCommand=x", asked())).toThrow(
      expect.objectContaining({ code: "E_INPUT_INVALID" }),
    );
  });

  it("takes a placement apart and bounds what run.json may hold", () => {
    expect(placementParts("ssh:box")).toEqual({ engine: "ssh", target: "box" });
    expect(placementParts("slurm")).toEqual({ engine: "slurm", target: null });
    expect(placementParts("local")).toEqual({ engine: null, target: null });
    expect(placementParts("ssh:a\nb")).toBeNull();
    expect(placementSchema.safeParse("ssh:box").success).toBe(true);
    expect(placementSchema.safeParse("ssh:a\nb").success).toBe(false);
    expect(placementSchema.safeParse("cloud").success).toBe(false);
  });

  it("resolves the run's remembered ssh host like any placement", () => {
    expect(resolvePlacement(asked(), "ssh:box")).toBe("ssh:box");
    expect(resolvePlacement(asked({ placement: "local" }), "ssh:box")).toBe("local");
  });
});
