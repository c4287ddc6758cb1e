import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { readJson } from "../helpers/folders.js";
import {
  binOf,
  checkPrerequisites,
  diagnostics,
  dispatcherEnv,
  type LiveDispatch,
  LiveRun,
  leftovers,
  waitForRecord,
} from "./harness.js";
import { type MockModelServer, startMockModelServer } from "./mock-model-server.js";

// Each real CLI's quota windows (specs/live-suite.md, "Quota windows"): the mock answers with the
// rate-limit headers each provider sends (`window`), or refuses as a spent plan does (`window-rejected`),
// and catherd's quota.json and record must hold what the CLI made of them (specs/backends.md, "Quota
// windows"). Claude runs under a made-up claude.ai login (harness.ts, subscriptionLogin): with an API key
// it ignores the headers.

let server: MockModelServer;
let run: LiveRun;
beforeEach(async () => {
  server = await startMockModelServer();
  run = new LiveRun(server);
});

afterEach(async (context) => {
  const failed = context.task.result?.state === "fail";
  const killed = await run.reap(failed);
  if (failed) for (const d of run.dispatches) process.stderr.write(`kept ${d.root} (killed ${killed})\n`);
});

interface Window {
  limit: string;
  window: string;
  usedPercent: number | null;
  windowMinutes: number | null;
  resetsAt: string | null;
  status: string | null;
  seenAt: string;
}

function windowsOf(d: LiveDispatch, why: string): Record<string, Window> {
  const file = path.join(d.dir, "quota.json");
  expect(fs.existsSync(file), `${why}\nno quota.json`).toBe(true);
  const { windows } = readJson(file) as { windows: Window[] };
  return Object.fromEntries(windows.map((w) => [`${w.limit}/${w.window}`, w]));
}

/** Minutes from now to an ISO time. */
const minutesTo = (iso: string | null | undefined) => (Date.parse(iso ?? "") - Date.now()) / 60_000;

/**
 * What the real CLI's spent window did to its home (specs/quota.md): the account is held until the reset,
 * and the next dispatch to it is parked, not started — then cancelled while it waits.
 */
async function parksTheNext(d: LiveDispatch, resetsAt: string, why: string): Promise<void> {
  const env = dispatcherEnv(path.join(d.root, "catherd-home"));
  const listed = await runCli(["account", "list", "--json"], { env });
  const account = JSON.parse(listed.stdout).accounts[0];
  expect(account, why).toMatchObject({ backend: "claude-code", name: "default", gate: { state: "held" } });
  expect(new Date(account.gate.until).toISOString(), why).toBe(resetsAt);
  const args = ["dispatch", "--backend", "claude-code", "--bin", binOf("claude"), "--name", "next"];
  const next = await runCli([...args, "--brief", "x", "--json"], { env, timeoutMs: 60_000 });
  expect(JSON.parse(next.stdout).dispatched, `${why}\n${next.stdout}${next.stderr}`).toMatchObject({
    queued: true,
    blockedBy: "window",
  });
  expect((await runCli(["cancel", "next", "--json"], { env })).code, why).toBe(0);
}

describe("the real CLIs' quota windows, through catherd dispatch", () => {
  it("claude, under a subscription login, reports an allowed window and a warning one", async () => {
    checkPrerequisites("claude");
    const d = await run.dispatch("claude", "window", { idle: "60s", subscription: true });
    const { record } = await waitForRecord(d, 90_000);
    const why = diagnostics(d, server);
    expect(record.status, why).toBe("ok");
    const events = fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8");
    expect(events, why).toContain('"type":"rate_limit_event"');
    const windows = windowsOf(d, why);
    expect(windows["claude/seven_day"], why).toMatchObject({
      status: "allowed",
      usedPercent: null,
      windowMinutes: 10080,
    });
    expect(minutesTo(windows["claude/seven_day"]?.resetsAt), why).toBeGreaterThan(71 * 60);
    expect(windows["claude/five_hour"], why).toMatchObject({
      status: "warning",
      usedPercent: 91,
      windowMinutes: 300,
    });
    expect(minutesTo(windows["claude/five_hour"]?.resetsAt), why).toBeGreaterThan(50);
    // Nothing but the Messages API: the made-up login sent nothing anywhere else.
    expect(server.unexpected, why).toEqual([]);
    expect(leftovers(d), why).toEqual([]);
  });

  it("claude, hitting a rejected window, ends limit: quota, back at the window's reset", async () => {
    checkPrerequisites("claude");
    const d = await run.dispatch("claude", "window-rejected", { idle: "60s", subscription: true });
    const { record, exit } = await waitForRecord(d, 90_000);
    const why = diagnostics(d, server);
    expect({ reason: exit.reason, status: record.status, kind: record.error?.kind }, why).toEqual({
      reason: "exited",
      status: "limit",
      kind: "quota",
    });
    expect(record.error?.message, why).toMatch(/You've hit your session limit/);
    const window = windowsOf(d, why)["claude/five_hour"];
    expect(window?.status, why).toBe("rejected");
    expect(record.error?.retryAfter, why).toBe(window?.resetsAt);
    expect(minutesTo(record.error?.retryAfter), why).toBeGreaterThan(50);
    expect(minutesTo(record.error?.retryAfter), why).toBeLessThan(61);
    expect(server.unexpected, why).toEqual([]);
    expect(leftovers(d), why).toEqual([]);
    await parksTheNext(d, record.error?.retryAfter ?? "", why);
  });

  for (const steerable of [false, true]) {
    it(`codex ${steerable ? "app-server (--steerable)" : "exec"} reports both windows`, async () => {
      checkPrerequisites("codex");
      const d = await run.dispatch("codex", "window", {
        idle: "60s",
        flags: steerable ? ["--steerable"] : [],
      });
      const { record } = await waitForRecord(d, 90_000);
      const why = diagnostics(d, server);
      expect(record.status, why).toBe("ok");
      const windows = windowsOf(d, why);
      // The rollout keeps the header's 42.5; the app-server's RateLimitWindow rounds it to a whole 43.
      const used = steerable ? 43 : 42.5;
      expect(windows["codex/primary"], why).toMatchObject({ usedPercent: used, windowMinutes: 300 });
      expect(windows["codex/secondary"], why).toMatchObject({ usedPercent: 12, windowMinutes: 10080 });
      expect(minutesTo(windows["codex/primary"]?.resetsAt), why).toBeGreaterThan(50);
      expect(minutesTo(windows["codex/secondary"]?.resetsAt), why).toBeGreaterThan(71 * 60);
      expect(leftovers(d), why).toEqual([]);
    });
  }

  it("codex, refused with usage_limit_reached, ends limit: quota, back at the spent window's reset", async () => {
    checkPrerequisites("codex");
    const d = await run.dispatch("codex", "window-rejected", { idle: "60s" });
    const { record, exit } = await waitForRecord(d, 90_000);
    const why = diagnostics(d, server);
    expect({ reason: exit.reason, status: record.status, kind: record.error?.kind }, why).toEqual({
      reason: "exited",
      status: "limit",
      kind: "quota",
    });
    expect(record.error?.message, why).toMatch(/hit your usage limit/);
    const primary = windowsOf(d, why)["codex/primary"];
    expect(primary?.usedPercent, why).toBe(100);
    expect(record.error?.retryAfter, why).toBe(primary?.resetsAt);
    expect(minutesTo(record.error?.retryAfter), why).toBeGreaterThan(50);
    expect(minutesTo(record.error?.retryAfter), why).toBeLessThan(61);
    expect(leftovers(d), why).toEqual([]);
  });

  it("gemini, refused for a spent daily quota, ends limit: quota, its daily window rejected", async () => {
    checkPrerequisites("gemini");
    const d = await run.dispatch("gemini", "window-rejected", { idle: "60s" });
    const { record, exit } = await waitForRecord(d, 90_000);
    const why = diagnostics(d, server);
    expect({ reason: exit.reason, status: record.status, kind: record.error?.kind }, why).toEqual({
      reason: "exited",
      status: "limit",
      kind: "quota",
    });
    expect(windowsOf(d, why)["gemini/daily"], why).toMatchObject({
      status: "rejected",
      windowMinutes: 1440,
      resetsAt: null,
    });
    // gemini names no time for a daily quota, and catherd does not invent one.
    expect(record.error?.retryAfter ?? null, why).toBeNull();
    expect(leftovers(d), why).toEqual([]);
  });
});
