import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { resolvedPath } from "../../src/infra/real-path.js";
import { tempDir } from "../helpers/folders.js";

// resolvedPath: a path as the file system resolves it, there or not yet there.

function tree() {
  const root = fs.realpathSync(tempDir());
  fs.mkdirSync(path.join(root, "real", "src"), { recursive: true });
  fs.symlinkSync(path.join(root, "real"), path.join(root, "link"));
  fs.symlinkSync("real/src", path.join(root, "relative-link"));
  fs.symlinkSync(path.join(root, "real", "future"), path.join(root, "dangling"));
  fs.symlinkSync(path.join(root, "loop-b"), path.join(root, "loop-a"));
  fs.symlinkSync(path.join(root, "loop-a"), path.join(root, "loop-b"));
  return root;
}

describe("resolvedPath", () => {
  const root = tree();
  it.each([
    ["an existing folder, as it is", "real/src", "real/src"],
    ["a folder through a link", "link/src", "real/src"],
    ["a trailing / kept", "link/src/", "real/src/"],
    ["a relative link, from the folder that holds it", "relative-link/a.ts", "real/src/a.ts"],
    [
      "a path not there yet: its deepest existing ancestor resolved, the rest appended",
      "link/src/new/b.ts",
      "real/src/new/b.ts",
    ],
    ["a dangling link followed to where it points", "dangling/d.ts", "real/future/d.ts"],
    ["a loop of links left as written", "loop-a/e.ts", "loop-a/e.ts"],
  ])("%s", (_, given, expected) => {
    expect(resolvedPath(path.join(root, given))).toBe(path.join(root, expected));
  });

  it("keeps the root as /", () => {
    expect(resolvedPath("/")).toBe("/");
  });
});
