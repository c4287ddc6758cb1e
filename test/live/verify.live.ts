import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { AttemptSummary } from "../../src/dispatch/read/attempts.js";
import { runCli } from "../helpers/cli.js";
import { diagnostics, dispatcherEnv, useLiveRun } from "./harness.js";

// A check and its repair turn (specs/live-suite.md, "A check and its repair turn") with real codex and the
// mock model's `verify` scenario: the first turn says done and fixes nothing, the check is red, catherd's
// repair turn on the same thread gets the check's words, the model fixes it, the check passes.

describe("a check (real codex, through catherd dispatch and wait)", () => {
  const live = useLiveRun(["codex"]);

  it("is red after the first turn, and green after the repair turn catherd sends on the same thread", async () => {
    const { run } = live;
    const first = await run.dispatch("codex", "verify", {
      idle: "60s",
      flags: ["--verify", "grep -q fixed fixed.txt"],
    });
    const env = dispatcherEnv(path.join(first.root, "catherd-home"));
    const name = "codex-verify";
    const waited = await runCli(["wait", name, "--json", "--timeout", "150s"], { env, timeoutMs: 180_000 });
    const why = `${waited.stdout}${waited.stderr}\n${diagnostics(first, run.server)}`;
    expect(waited.code, why).toBe(0);
    const [record] = (JSON.parse(waited.stdout) as { records: Record<string, unknown>[] }).records;
    expect(record, why).toMatchObject({ status: "ok", attempt: 2, verify: { passed: true } });
    const runs = (record as { verify: { runs: { outcome: string }[] } }).verify.runs;
    expect(
      runs.map((r) => r.outcome),
      why,
    ).toEqual(["failed", "passed"]);
    expect(run.server.requests.filter((r) => r.note === "repair").length, why).toBeGreaterThan(0);

    const result = await runCli(["result", name, "--json"], { env });
    const attempts = (JSON.parse(result.stdout) as { attempts: AttemptSummary[] }).attempts;
    expect(
      attempts.map((a) => [a.attempt, a.status, a.kind]),
      why,
    ).toEqual([
      [1, "failed", "verify"],
      [2, "ok", null],
    ]);
  });
});
