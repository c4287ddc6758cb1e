import { afterEach, describe, expect, it, vi } from "vitest";
import { CatherdError } from "../../src/domain/errors.js";
import { reportError } from "../../src/infra/report-error.js";

// The one error printer, in process: what goes to which stream, and the exit code it answers.

function captured(run: () => number) {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => out.push(String(chunk)) > 0);
  const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => err.push(String(chunk)) > 0);
  try {
    const code = run();
    return { code, stdout: out.join(""), stderr: err.join("") };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

const debug = process.env.CATHERD_DEBUG;
afterEach(() => {
  if (debug === undefined) delete process.env.CATHERD_DEBUG;
  else process.env.CATHERD_DEBUG = debug;
});

describe("reportError", () => {
  it("prints a catherd error as two lines on stderr, each on one line, and answers its exit code", () => {
    const error = new CatherdError("E_INPUT_INVALID", "bad\n  value", { fix: "catherd\nhelp" });
    expect(captured(() => reportError(error, false))).toEqual({
      code: 2,
      stdout: "",
      stderr: "error E_INPUT_INVALID: bad value\nfix: catherd help\n",
    });
  });

  it("prints the error object on stdout with --json", () => {
    const error = new CatherdError("E_INTERRUPTED", "interrupted (SIGINT)");
    const { code, stdout, stderr } = captured(() => reportError(error, true));
    expect({ code, stderr, json: JSON.parse(stdout) }).toEqual({
      code: 130,
      stderr: "",
      json: { error: { code: "E_INTERRUPTED", message: "interrupted (SIGINT)", fix: null } },
    });
  });

  it("reports an unknown throw as E_INTERNAL with its stack in --json, never as an I/O error", () => {
    const bug = new TypeError("Cannot read properties of null (reading 'pid')");
    const { code, stdout } = captured(() => reportError(bug, true));
    const json = JSON.parse(stdout) as { error: Record<string, unknown> };
    expect(code).toBe(1);
    expect(json.error).toMatchObject({ code: "E_INTERNAL", message: bug.message, stack: bug.stack });
    expect(json.error.fix).toContain("bug");
  });

  it("prints an internal error's stack after the text only with CATHERD_DEBUG", () => {
    const bug = new RangeError("out of range");
    delete process.env.CATHERD_DEBUG;
    const quiet = captured(() => reportError(bug, false));
    expect(quiet.stderr.split("\n").slice(0, 1)).toEqual(["error E_INTERNAL: out of range"]);
    expect(quiet.stderr).not.toContain("report-error.test.ts");
    process.env.CATHERD_DEBUG = "1";
    const loud = captured(() => reportError(bug, false));
    expect(loud.stderr).toContain(bug.stack as string);
  });

  it("reports a refused write as E_IO_WRITE naming the path", () => {
    const refused = Object.assign(new Error("ENOSPC: no space left on device, mkdir '/h/runs'"), {
      code: "ENOSPC",
      syscall: "mkdir",
      path: "/h/runs",
    });
    const { code, stdout } = captured(() => reportError(refused, true));
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({
      error: { code: "E_IO_WRITE", fix: expect.stringContaining("/h/runs") },
    });
  });
});
