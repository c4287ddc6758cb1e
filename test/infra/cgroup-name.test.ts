import { describe, expect, it } from "vitest";
import { cgroupName } from "../../src/infra/cgroup/dispatch-cgroup.js";

// A dispatch's cgroup name is found again by every later supervisor of its folder, of this catherd or
// another version: the same id and folder always give the same name (SHA-256 of the folder's path).

describe("cgroupName", () => {
  it.each([
    ["01J", "/runs/default/dispatches/a/01J", "01J-fc525b26d1"],
    ["../x y", "/h/é/ü", "__x_y-8c94749684"],
  ])("names %s in %s %s", (id, dir, name) => {
    expect(cgroupName(id, dir)).toBe(name);
  });
});
