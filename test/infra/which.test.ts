import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveExecutable } from "../../src/infra/which.js";
import { tempDir } from "../helpers/folders.js";

/** A folder holding an executable `tool` and a non-executable `notes`. */
function binFolder(): string {
  const bin = path.join(tempDir(), "bin");
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, "tool"), "#!/bin/sh\n", { mode: 0o755 });
  fs.writeFileSync(path.join(bin, "notes"), "text\n", { mode: 0o644 });
  return bin;
}

describe("resolveExecutable", () => {
  it("finds a bare name on PATH, first entry first", () => {
    const first = binFolder();
    const second = binFolder();
    expect(resolveExecutable("tool", [first, second].join(path.delimiter))).toBe(path.join(first, "tool"));
  });

  it("gives an absolute path for a relative PATH entry", () => {
    const bin = binFolder();
    const relative = path.relative(process.cwd(), bin);
    expect(path.isAbsolute(relative)).toBe(false);
    expect(resolveExecutable("tool", `/nonexistent${path.delimiter}${relative}`)).toBe(
      path.join(bin, "tool"),
    );
  });

  it("gives an absolute path for a relative path with a slash", () => {
    const bin = binFolder();
    const relative = path.relative(process.cwd(), path.join(bin, "tool"));
    expect(resolveExecutable(relative, "")).toBe(path.join(bin, "tool"));
  });

  it("skips empty PATH entries, folders and files that are not executable", () => {
    const bin = binFolder();
    expect(resolveExecutable("notes", bin)).toBeNull();
    expect(resolveExecutable("bin", path.dirname(bin))).toBeNull();
    expect(resolveExecutable("tool", `${path.delimiter}${path.delimiter}`)).toBeNull();
  });

  it("refuses an empty name and names with NUL or a newline", () => {
    expect(resolveExecutable("", "/bin")).toBeNull();
    expect(resolveExecutable("sh\n", "/bin")).toBeNull();
    expect(resolveExecutable("s\0h", "/bin")).toBeNull();
  });
});
