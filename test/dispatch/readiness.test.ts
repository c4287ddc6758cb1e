import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateDispatch } from "../../src/dispatch/request/dispatch-request.js";
import { readinessTimeoutMs } from "../../src/dispatch/request/readiness.js";
import { CatherdError } from "../../src/domain/errors.js";
import { dispatchedOf, dispatchFolders, isolatedHome, runCli } from "../helpers/cli.js";
import { FAKE_AGENT, reapAll, tempDir } from "../helpers/folders.js";
import { isAlive } from "../helpers/processes.js";
import { waitForJson } from "../helpers/wait.js";

// Readiness at admission (specs/dispatch.md): a CLI that cannot start, answers nothing or is too old is
// refused in dispatch, before anything is written; the answer is cached per executable.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

function scenario(steps: Record<string, unknown>[]): string {
  const file = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(file, JSON.stringify({ steps }));
  return file;
}

/** `catherd dispatch --backend claude-code` to the fake agent, with the environment given. */
function dispatchClaude(env: NodeJS.ProcessEnv, extra: Record<string, string> = {}, args: string[] = []) {
  return runCli(["dispatch", "--backend", "claude-code", "--json", "--brief", "go", ...args], {
    env: {
      ...env,
      CATHERD_CLAUDE_BIN: FAKE_AGENT,
      FAKE_AGENT_SCENARIO_FILE: scenario([{ exit: 0 }]),
      ...extra,
    },
    // The --version deadline stretches to 30 s on an overloaded machine.
    timeoutMs: 40_000,
  });
}

function errorOf(stdout: string): { code: string; message: string; fix: string | null } {
  return (JSON.parse(stdout) as { error: { code: string; message: string; fix: string | null } }).error;
}

describe("readiness at admission", () => {
  it("refuses a CLI whose --version does not answer in time: E_BACKEND_BROKEN, exit 3, nothing written or left running", async () => {
    const { home, env } = isolatedHome();
    const pidFile = path.join(tempDir(), "version.pid");
    const started = Date.now();
    const result = await dispatchClaude(env, {
      FAKE_AGENT_VERSION: "hang",
      FAKE_AGENT_VERSION_PIDFILE: pidFile,
    });
    expect(result.code).toBe(3);
    expect(errorOf(result.stdout)).toMatchObject({
      code: "E_BACKEND_BROKEN",
      message: expect.stringMatching(/--version did not answer within \d+(\.\d)? s$/),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(5000);
    expect(dispatchFolders(home)).toEqual([]);
    const pid = Number(fs.readFileSync(pidFile, "utf8"));
    expect(isAlive(pid), `the hung --version (${pid}) is still running`).toBe(false);
  }, 45_000);

  it.each([
    [0, 2, 5000],
    [2, 2, 5000],
    [4, 2, 10_000],
    [100, 2, 30_000],
    [3, 0, 15_000],
  ])("waits 5 s for --version, stretched by the load: load %d on %d cores → %d ms", (load, cores, ms) => {
    expect(readinessTimeoutMs(load, cores)).toBe(ms);
  });

  it("refuses a CLI whose --version fails, in the CLI's own words", async () => {
    const { home, env } = isolatedHome();
    const result = await dispatchClaude(env, { FAKE_AGENT_VERSION: "fail" });
    expect(result.code).toBe(3);
    expect(errorOf(result.stdout)).toMatchObject({
      code: "E_BACKEND_BROKEN",
      message: expect.stringContaining("failed (exit code 1): fake-agent: cannot load its native module"),
      fix: expect.stringContaining("npm install -g @anthropic-ai/claude-code"),
    });
    expect(dispatchFolders(home)).toEqual([]);
  });

  it("refuses a CLI older than its backend reads, naming both versions and the install command", async () => {
    const { home, env } = isolatedHome();
    const result = await dispatchClaude(env, { FAKE_AGENT_VERSION: "2.0.9 (Claude Code)" });
    expect(result.code).toBe(3);
    expect(errorOf(result.stdout)).toEqual({
      code: "E_BACKEND_TOO_OLD",
      message: `claude-code: ${FAKE_AGENT} is version 2.0.9; catherd reads the stream format of 2.1.197 and later`,
      fix: "npm install -g @anthropic-ai/claude-code@latest",
    });
    expect(dispatchFolders(home)).toEqual([]);
  });

  it("asks an executable for its version once, until the executable changes", async () => {
    const { env } = isolatedHome();
    const dir = tempDir();
    const log = path.join(dir, "asked");
    const cli = path.join(dir, "claude");
    const wrapper = (version: string) =>
      `#!/bin/sh\nif [ "$1" = "--version" ]; then echo asked >> '${log}'; echo '${version}'; exit 0; fi\nexec '${process.execPath}' '${FAKE_AGENT}' "$@"\n`;
    fs.writeFileSync(cli, wrapper("2.1.197 (Claude Code)"), { mode: 0o755 });
    const extra = { CATHERD_CLAUDE_BIN: cli };
    const asked = () => fs.readFileSync(log, "utf8").split("\n").filter(Boolean).length;
    for (let i = 0; i < 2; i++) {
      const result = await dispatchClaude(env, extra);
      expect(result.code, result.stderr).toBe(0);
      const d = dispatchedOf(result);
      dispatched.push(d.dispatchId);
      await waitForJson(path.join(d.dir, "record.json"));
    }
    expect(asked()).toBe(1);
    // Replaced by an older one (a new size and mtime): asked again, and refused.
    fs.writeFileSync(cli, wrapper("2.1.0 (Claude Code) replaced"), { mode: 0o755 });
    const result = await dispatchClaude(env, extra);
    expect(asked()).toBe(2);
    expect(errorOf(result.stdout).code).toBe("E_BACKEND_TOO_OLD");
  });

  it("refuses a thread of the wrong form before anything is written", async () => {
    const { home, env } = isolatedHome();
    const result = await dispatchClaude(env, {}, ["--thread", "ses_dd2f8c1b9ffe61TIhHsywNFVw1"]);
    expect(result.code).toBe(2);
    expect(errorOf(result.stdout)).toMatchObject({
      code: "E_INPUT_INVALID",
      message: expect.stringContaining(
        "--thread is not a claude-code thread: a Claude Code thread is a UUID",
      ),
    });
    expect(dispatchFolders(home)).toEqual([]);
  });
});

describe("--thread, checked in the form of each backend's thread ids", () => {
  const raw = (backend: string, thread: string) => ({
    backend,
    run: "default",
    env: [],
    brief: Buffer.from("go"),
    thread,
    bin: process.execPath,
    rest: backend === "exec" ? [process.execPath] : [],
    environment: process.env,
  });
  it.each([
    ["codex", "01a22d07-1915-73e1-aea5-ac3876195192"],
    ["claude-code", "a3a8eeed-ad4a-4d14-94ae-610dc038b311"],
    ["gemini", "9cc73193-c0e5-4878-8694-f0ebcf73a3d6"],
    ["opencode", "ses_dd2f8c1b9ffe61TIhHsywNFVw1"],
  ])("accepts a %s thread %s", (backend, thread) => {
    expect(validateDispatch(raw(backend, thread)).thread).toBe(thread);
  });

  it.each([
    ["codex", "t-7"],
    ["codex", "ses_dd2f8c1b9ffe61TIhHsywNFVw1"],
    ["claude-code", "latest"],
    ["gemini", "latest"],
    ["gemini", "2"],
    ["opencode", "a3a8eeed-ad4a-4d14-94ae-610dc038b311"],
    ["exec", "anything"],
  ])("refuses a %s thread %j with E_INPUT_INVALID", (backend, thread) => {
    const attempt = () => validateDispatch(raw(backend, thread));
    expect(attempt).toThrow(CatherdError);
    expect(attempt).toThrow(/--thread/);
  });
});
