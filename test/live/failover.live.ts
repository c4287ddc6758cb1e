import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { AttemptSummary } from "../../src/dispatch/read/attempts.js";
import { runCli } from "../helpers/cli.js";
import { diagnostics, dispatcherEnv, leftovers, useLiveRun } from "./harness.js";
import { FINAL_MARKER } from "./mock-model-server.js";

// The failover ladder (specs/dispatch.md, "The failover ladder") between two real CLIs: a Codex whose
// provider answers every request with a 429 falls back to a Claude Code whose provider works, and the
// orchestrator sees one chain that ends ok through `catherd wait`.

describe("failover ladder (real codex, then real claude, through catherd dispatch and wait)", () => {
  const live = useLiveRun(["codex", "claude"]);

  it("a codex rate-limited on every request hands over to claude, and wait exits 0 with claude's record", async () => {
    const { run } = live;
    const first = await run.dispatch("codex", "always429", {
      idle: "60s",
      fallback: { cli: "claude", scenario: "tool" },
    });
    const env = dispatcherEnv(path.join(first.root, "catherd-home"));
    const name = "codex-always429";

    const waited = await runCli(["wait", name, "--json", "--timeout", "150s"], { env, timeoutMs: 180_000 });
    const why = `${waited.stdout}${waited.stderr}\n${diagnostics(first, run.server)}`;
    expect(waited.code, why).toBe(0);
    const records = (JSON.parse(waited.stdout) as { records: Record<string, unknown>[] }).records;
    expect(records, why).toHaveLength(1);
    expect(records[0], why).toMatchObject({
      name,
      backend: "claude-code",
      status: "ok",
      attempt: 2,
      next: null,
    });
    expect(String(records[0]?.reply ?? ""), why).toContain(FINAL_MARKER);

    const result = await runCli(["result", name, "--json"], { env });
    const attempts = (JSON.parse(result.stdout) as { attempts: AttemptSummary[] }).attempts;
    expect(
      attempts.map((a) => [a.attempt, a.backend, a.status, a.kind]),
      why,
    ).toEqual([
      [1, "codex", "limit", "rate-limit"],
      [2, "claude-code", "ok", null],
    ]);
    // Each attempt talked to its own provider: codex to the 429s, claude to the working script.
    const answers = run.server.requests.map((r) => r.answer);
    expect(answers, why).toContain("429");
    expect(answers, why).toEqual(expect.arrayContaining(["tool-call", "final"]));
    const second = attempts[1] as AttemptSummary;
    expect(leftovers(first), why).toEqual([]);
    expect(leftovers({ ...first, dispatchId: second.dispatchId, dir: second.dir }), why).toEqual([]);
  });
});
