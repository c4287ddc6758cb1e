import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { asCatherdError, CatherdError, exitCodeFor, INTERNAL_FIX } from "../../src/domain/errors.js";
import { exitFileSchema, recordFileSchema } from "../../src/domain/schemas.js";
import { ENDING_ERROR_CODES, ERROR_CODES, EXIT_REASONS } from "../../src/domain/vocab.js";
import { ROOT } from "../helpers/folders.js";

// One error story: every throw becomes one CatherdError, matched by class and errno code (never by text);
// the codes are a closed set, each raised somewhere and written down with its exit code.

/** A system error as node's fs raises it. */
function systemError(code: string, syscall: string, file: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: refused, ${syscall} '${file}'`), { code, syscall, path: file });
}

describe("asCatherdError", () => {
  it.each([
    ["a CatherdError, as it is", new CatherdError("E_IO_LOCK", "held"), "E_IO_LOCK"],
    ["a full disk under mkdir", systemError("ENOSPC", "mkdir", "/h/runs"), "E_IO_WRITE"],
    ["a read-only disk under open", systemError("EROFS", "open", "/h/x.tmp"), "E_IO_WRITE"],
    ["a refused rename", systemError("EACCES", "rename", "/h/a"), "E_IO_WRITE"],
    ["an unreadable folder", systemError("EACCES", "scandir", "/h/runs"), "E_IO_READ"],
    ["a refused stat", systemError("EPERM", "stat", "/h/runs"), "E_IO_READ"],
    [
      "a program that cannot be spawned (not a file-system call)",
      systemError("ENOENT", "spawn x", "x"),
      "E_INTERNAL",
    ],
    [
      "a TypeError (a bug)",
      new TypeError("Cannot read properties of undefined (reading 'pid')"),
      "E_INTERNAL",
    ],
    ["an Error whose text speaks of a write", new Error("cannot write the folder: ENOSPC"), "E_INTERNAL"],
    ["a thrown string", "boom", "E_INTERNAL"],
    ["a thrown object with a code but no syscall", { code: "ENOSPC" }, "E_INTERNAL"],
  ])("classifies %s", (_title, thrown, code) => {
    expect(asCatherdError(thrown).code).toBe(code);
  });

  it("names the path of a refused file-system call and keeps the cause", () => {
    const cause = systemError("ENOSPC", "mkdir", "/h/runs/default");
    const error = asCatherdError(cause);
    expect(error).toMatchObject({ file: "/h/runs/default", cause });
    expect(error.fix).toContain("/h/runs/default");
    expect(error.toJSON()).toEqual({ code: "E_IO_WRITE", message: cause.message, fix: error.fix });
  });

  it.each([
    ["ENOSPC", "mkdir", "E_IO_WRITE", /is full.*free space there/],
    ["EDQUOT", "write", "E_IO_WRITE", /quota spent/],
    ["EROFS", "open", "E_IO_WRITE", /read-only file system.*CATHERD_HOME/],
    ["EACCES", "rename", "E_IO_WRITE", /may not write \/h\/x.*ls -ld \/h\/x/],
    ["EPERM", "unlink", "E_IO_WRITE", /may not write.*immutable/],
    ["EACCES", "scandir", "E_IO_READ", /may not read \/h\/x.*ls -l \/h\/x/],
    ["ENOENT", "mkdir", "E_IO_WRITE", /does not exist.*symbolic link/],
    ["ENOTDIR", "stat", "E_IO_READ", /a part of the path \/h\/x is a file/],
    ["EISDIR", "read", "E_IO_READ", /is a folder where a file was expected/],
    ["EIO", "read", "E_IO_READ", /I\/O error/],
    ["EMFILE", "open", "E_IO_WRITE", /too many files are open/],
    ["EXDEV", "rename", "E_IO_WRITE", /^check \/h\/x \(ls -ld \/h\/x\)/],
  ])("gives %s under %s a fix of its own (%s)", (errno, syscall, code, fix) => {
    const error = asCatherdError(systemError(errno, syscall, "/h/x"));
    expect(error.code).toBe(code);
    expect(error.fix).toMatch(fix);
  });

  it("says nothing of free space for anything but a full disk", () => {
    for (const errno of ["EROFS", "EACCES", "ENOENT", "EISDIR", "EIO"]) {
      expect(asCatherdError(systemError(errno, "open", "/h/x")).fix).not.toMatch(/space/);
    }
  });

  it("gives an internal error a fix and the stack of its throw in --json", () => {
    const bug = new TypeError("x is not a function");
    const error = asCatherdError(bug);
    expect(error.toJSON()).toEqual({
      code: "E_INTERNAL",
      message: "x is not a function",
      fix: INTERNAL_FIX,
      stack: bug.stack,
    });
    expect(bug.stack).toContain("errors.test.ts");
    expect(asCatherdError("boom").toJSON()).toMatchObject({ message: "boom", stack: null });
    expect(asCatherdError(new Error("")).message).toBe("an unexpected error");
  });
});

/** Every source file of the shipped programs (src/ and supervisor/). */
function shippedSources(): string[] {
  return ["src", "supervisor"].flatMap((dir) =>
    fs
      .readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith(".ts"))
      .map((e) => fs.readFileSync(path.join(e.parentPath, e.name), "utf8")),
  );
}

describe("the error codes", () => {
  const cliSpec = fs.readFileSync(path.join(ROOT, "specs/cli.md"), "utf8");
  const exitTable = cliSpec.slice(cliSpec.indexOf("## Exit codes"), cliSpec.indexOf("## Naming a dispatch"));
  expect(exitTable).not.toBe("");

  it("raises every code of the closed set somewhere", () => {
    // A code written as a value anywhere but its definition and the exit-status switch.
    const sources = shippedSources()
      .filter((text) => !text.includes("export const ERROR_CODES"))
      .join("\n")
      .replace(/case "E_[A-Z_]+":/g, "");
    expect(ERROR_CODES.filter((code) => !sources.includes(`"${code}"`))).toEqual([]);
  });

  it("lists every code with its exit status in the exit-code table of specs/cli.md", () => {
    for (const code of ERROR_CODES) {
      const row = exitTable.split("\n").find((line) => line.startsWith(`| \`${code}\``));
      expect(row, `${code} in specs/cli.md's exit-code table`).toBeDefined();
      expect(row).toContain(`| ${exitCodeFor(code)} `);
    }
    expect(exitTable).toContain("| 124 ");
    expect(exitTable).toContain("| 130 ");
  });

  it("lets record.json and exit.json hold only an error code or an exit reason in error.code", () => {
    expect(ENDING_ERROR_CODES).toEqual([...ERROR_CODES, ...EXIT_REASONS]);
    const record = (code: string) => ({
      schema: 1,
      dispatchId: "d",
      run: null,
      name: null,
      backend: "exec",
      model: null,
      status: "failed",
      reason: "exited",
      exitCode: 1,
      signal: null,
      startedAt: null,
      endedAt: "2026-11-29T08:00:00.000Z",
      secs: null,
      thread: null,
      tokens: { input: 0, cached: 0, output: 0 },
      costUsd: null,
      reply: null,
      replyPath: null,
      changedFiles: null,
      error: { code, message: "m" },
    });
    for (const code of ["E_IO_WRITE", "E_INTERNAL", "exited", "idle-timeout"]) {
      expect(recordFileSchema.safeParse(record(code)).success, code).toBe(true);
    }
    for (const code of ["unknown", "E_SOMETHING", "", "EXITED"]) {
      expect(recordFileSchema.safeParse(record(code)).success, code).toBe(false);
    }
    const exitError = exitFileSchema.shape.error;
    expect(exitError.safeParse({ code: "E_SUPERVISOR_LOST", message: "gone" }).success).toBe(true);
    expect(exitError.safeParse({ code: "whatever", message: "gone" }).success).toBe(false);
  });
});
