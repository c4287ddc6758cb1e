import { describe, expect, it } from "vitest";
import { execBackend as exec } from "../../src/backends/exec.js";
import { emptySummary } from "../../src/domain/ending/summary.js";
import { planRequest } from "./recorded.js";

describe("exec backend", () => {
  it("runs the given command with its arguments, feeding the brief on stdin only when there is one", () => {
    const withBrief = exec.plan(planRequest({ bin: "make", extraArgs: ["test", "-j4"] }));
    expect(withBrief).toEqual({ cmd: "make", args: ["test", "-j4"], env: {}, stdin: "brief" });
    expect(exec.plan(planRequest({ bin: "make", briefPath: null })).stdin).toBe("none");
  });

  it("takes every output line as progress, described by the line itself", () => {
    expect(exec.parse("anything at all")).toEqual({ progress: true, describe: "anything at all" });
    expect(exec.parse('{"type":"result","is_error":true}')).toEqual({
      progress: true,
      describe: '{"type":"result","is_error":true}',
    });
  });

  it("lets the exit code decide, after the exit reason", () => {
    expect(exec.finalize(emptySummary(), { reason: "exited", code: 0, signal: null }).status).toBe("ok");
    const failed = exec.finalize(emptySummary(), { reason: "exited", code: 2, signal: null });
    expect(failed).toMatchObject({
      status: "failed",
      error: { code: "exited", message: "exit code 2" },
    });
    expect(exec.finalize(emptySummary(), { reason: "idle-timeout", code: 0, signal: null }).status).toBe(
      "timeout",
    );
  });

  it("needs no brief, prints plain text, and is never stopped for lingering", () => {
    expect(exec.needsBrief).toBe(false);
    expect(exec.plainText).toBe(true);
    expect(exec.defaults.graceAfterFinalMs).toBeNull();
  });
});
