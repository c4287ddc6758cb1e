import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { FAKE_AGENT, reapAll, tempDir } from "../helpers/folders.js";
import { waitForJson } from "../helpers/wait.js";

// Where people look (specs/cli.md): a dispatch that failed for a reason the provider gave says so in
// status, result, wait, show and logs, and in the record's --json.

const dispatched: string[] = [];
afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

const recorded = (file: string) =>
  fs
    .readFileSync(path.join(import.meta.dirname, "../fixtures/recorded/claude", file), "utf8")
    .split("\n")
    .filter((l) => l !== "");

describe("a failure, where people look", () => {
  it("shows the kind and the provider's words of a Claude that was refused its key", async () => {
    const { env } = isolatedHome();
    const scenario = path.join(tempDir(), "scenario.json");
    // The recorded stream up to its retries (init, two api_retry with status 401); then it would retry on.
    const steps = [
      { err: "a diagnostic on stderr, with a key sk-ant-api03-abcdefghijklmnop" },
      ...recorded("auth401-retries2.jsonl")
        .slice(0, 3)
        .map((out) => ({ out })),
      { hang: true },
    ];
    fs.writeFileSync(scenario, JSON.stringify({ steps }));
    const agentEnv = {
      ...env,
      CATHERD_CLAUDE_BIN: FAKE_AGENT,
      FAKE_AGENT_SCENARIO_FILE: scenario,
      NO_COLOR: "1",
    };
    const result = await runCli(
      ["dispatch", "--backend", "claude-code", "--name", "no-key", "--json", "--brief", "go"],
      { env: agentEnv, timeoutMs: 40_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    const d = dispatchedOf(result);
    dispatched.push(d.dispatchId);

    const waited = await runCli(["wait", "no-key"], { env: agentEnv, timeoutMs: 60_000 });
    expect(waited.code).toBe(1);
    // Two retries whose status is 401: the supervisor ends it at the first.
    expect(waited.stdout).toMatch(/no-key \S+ failed \(provider-unavailable\)/);
    expect(waited.stdout).not.toContain("$");
    expect(waited.stdout).toContain("  error: auth — HTTP 401 authentication_failed");

    const record = await waitForJson(path.join(d.dir, "record.json"));
    expect(record.error).toEqual({
      code: "provider-unavailable",
      kind: "auth",
      message: "HTTP 401 authentication_failed",
      retryAfter: null,
      tail: ["a diagnostic on stderr, with a key [redacted]"],
    });

    const shown = await runCli(["result", "no-key"], { env: agentEnv });
    expect(shown.stdout).toContain("error: auth — HTTP 401 authentication_failed");
    expect(shown.stdout).toContain("stderr (last lines):\n  a diagnostic on stderr, with a key [redacted]");
    const json = JSON.parse((await runCli(["result", "no-key", "--json"], { env: agentEnv })).stdout);
    expect(json.error).toMatchObject({ kind: "auth", retryAfter: null });

    const status = await runCli(["status"], { env: agentEnv });
    expect(status.stdout).toMatch(/no-key .* recorded .* auth: HTTP 401/);
    const show = await runCli(["show", "no-key"], { env: agentEnv });
    expect(show.stdout).toContain("kind: auth (the supervisor's account)");
    expect(show.stdout).toContain("error: auth — HTTP 401 authentication_failed");
    const logs = await runCli(["logs", "no-key"], { env: agentEnv });
    expect(logs.stdout).toContain("! retrying 1/2 (HTTP 401 authentication_failed)");
  });
});
