import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { FAKE_AGENT, ROOT, readJson, reapAll, tempDir } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// A spent codex plan, supervised for real: a fake codex (test/fixtures/fake-agent.mjs) plays what codex
// 0.171.0 printed on a 429 usage_limit_reached (test/fixtures/recorded/codex/usage-limit) and writes the
// token_count it put in its rollout (test/fixtures/recorded/codex-rollout/usage-limit) as it exits. The
// windows reach quota.json from the rollout, read once more at the exit, and the record comes back at the
// spent window's reset: codex's own words name only "8:21 PM".

const dispatched: { dispatchId: string; dir: string; supervisorPid: number }[] = [];

afterEach(async () => {
  for (const d of dispatched) {
    await waitFor(
      `supervisor ${d.supervisorPid} to exit`,
      () => (isAlive(d.supervisorPid) ? undefined : true),
      30_000,
    ).catch(() => killPid(d.supervisorPid));
  }
  expect(reapAll(dispatched.splice(0).map((d) => d.dispatchId)), "processes left running").toBe(0);
});

const RECORDED = path.join(ROOT, "test/fixtures/recorded");
const lines = (file: string) =>
  fs
    .readFileSync(path.join(RECORDED, file), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");

describe("a codex dispatch that hits its usage limit", () => {
  it("keeps the rollout's windows in quota.json and comes back at the spent window's reset", async () => {
    const { env } = isolatedHome();
    const codexHome = path.join(tempDir(), "codex-home");
    const [started, ...rest] = lines("codex/usage-limit.jsonl");
    const thread = (JSON.parse(started ?? "{}") as { thread_id: string }).thread_id;
    const day = path.join(codexHome, "sessions", "2026", "12", "06");
    fs.mkdirSync(day, { recursive: true });
    const rollout = path.join(day, `rollout-2026-12-06T19-21-38-${thread}.jsonl`);
    // Dated after the agent starts: a rollout's lines from before it belong to an earlier run.
    const later = new Date(Date.now() + 60_000).toISOString();
    const count = lines("codex-rollout/usage-limit.jsonl")
      .map((line) => JSON.parse(line) as { timestamp: string; payload: { type?: string } })
      .filter((event) => event.payload.type === "token_count")
      .map((event) => JSON.stringify({ ...event, timestamp: later }));
    const steps = [
      { out: started },
      ...count.map((line) => ({ append: { file: rollout, line } })),
      ...rest.map((out) => ({ out })),
      { exit: 1 },
    ];
    const scenario = path.join(tempDir(), "usage-limit.json");
    fs.writeFileSync(scenario, JSON.stringify({ steps }));
    const result = await runCli(
      [
        "dispatch",
        "--backend",
        "codex",
        "--bin",
        FAKE_AGENT,
        "--name",
        "usage-limit",
        "--brief",
        "work",
        "--json",
        "--env",
        `FAKE_AGENT_SCENARIO_FILE=${scenario}`,
        "--env",
        `CODEX_HOME=${codexHome}`,
      ],
      { env, timeoutMs: 60_000 },
    );
    expect(result.stderr).toBe("");
    const d = dispatchedOf(result);
    dispatched.push(d);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    const quota = readJson(path.join(d.dir, "quota.json")) as { windows: Record<string, unknown>[] };
    expect(quota.windows.map((w) => [w.limit, w.window, w.usedPercent, w.windowMinutes, w.status])).toEqual([
      ["codex", "primary", 100, 300, null],
      ["codex", "secondary", 12, 10080, null],
    ]);
    const primary = quota.windows[0]?.resetsAt;
    expect(primary).toBe("2026-12-06T20:21:38.000Z");
    expect(record.status).toBe("limit");
    expect(record.error).toMatchObject({ kind: "quota", retryAfter: primary });
  });
});
