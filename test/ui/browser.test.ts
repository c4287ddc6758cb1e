import * as fs from "node:fs";
import * as path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { dispatchedOf, fakeDispatchArgs, isolatedHome, runCli } from "../helpers/cli.js";
import { fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { FAKE_AGENT, readJson, reapAll, tempDir } from "../helpers/folders.js";
import { isolateGitConfig, makeRepo } from "../helpers/git.js";
import { codexLine } from "../helpers/mcp.js";
import { isAlive } from "../helpers/processes.js";
import { FAKE_CLAUDE, useSteeredDispatches } from "../helpers/steering.js";
import {
  CHROMIUM,
  launchBrowser,
  type RunningUi,
  screenshot,
  startUiServer,
  stopAllUi,
  untilInPage,
} from "../helpers/ui.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

// The dashboard in a real Chromium (specs/ui.md): the built `catherd ui` serving a home that real
// dispatches under real supervisors write into. A deadline in a wait only says how soon a failure is
// reported; the latencies themselves are measured by the bench (bench/sections/ui.mjs).

const dispatched: string[] = [];
let browser: BrowserContext;
let ui: RunningUi;
let env: NodeJS.ProcessEnv;
/** Every page's requests, dialogs and CSP violations, checked after each test. */
const seen = {
  foreign: [] as string[],
  dialogs: [] as string[],
  violations: [] as string[],
  errors: [] as string[],
};

/** Long enough for a loaded CI machine; a pass never waits for it. */
const DEADLINE = 20_000;

describe.skipIf(CHROMIUM === null)("catherd ui in a real browser", () => {
  // Steerable dispatches: their supervisors are waited for (they end by themselves), then reaped.
  const steered = useSteeredDispatches();

  beforeAll(async () => {
    isolateGitConfig();
    ({ env } = isolatedHome());
    ui = await startUiServer(env);
    browser = await launchBrowser();
    // Records the notifications the page raises (the browser's own would go to the desktop), and reports
    // every CSP violation on the console.
    await browser.addInitScript({
      content: `
        window.__notes = [];
        const Real = window.Notification;
        class Recorded {
          static get permission() { return Real ? Real.permission : "granted"; }
          static requestPermission() { return Promise.resolve("granted"); }
          constructor(title, options) { window.__notes.push({ title, body: (options && options.body) || "" }); }
        }
        Object.defineProperty(window, "Notification", { value: Recorded, configurable: true });
        document.addEventListener("securitypolicyviolation", (e) =>
          console.error("csp-violation " + e.violatedDirective + " " + e.blockedURI));
      `,
    });
    await browser.grantPermissions(["notifications"], { origin: ui.origin });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopAllUi();
    expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
  });

  afterEach(() => {
    const { foreign, dialogs, violations, errors } = seen;
    expect({ foreign, dialogs, violations, errors }).toEqual({
      foreign: [],
      dialogs: [],
      violations: [],
      errors: [],
    });
  });

  /** A page that reports every request off the server, every dialog, CSP violation and script error. */
  async function openPage(pathname: string, server: RunningUi = ui): Promise<Page> {
    const page = await browser.newPage();
    page.on("request", (r) => {
      if (!r.url().startsWith(server.origin)) seen.foreign.push(r.url());
    });
    page.on("dialog", (d) => {
      seen.dialogs.push(d.message());
      void d.dismiss();
    });
    page.on("console", (m) => {
      if (m.text().startsWith("csp-violation")) seen.violations.push(m.text());
    });
    page.on("pageerror", (e) => seen.errors.push(e.message));
    const url = new URL(server.url);
    await page.goto(`${server.origin}${pathname}${url.search}`);
    return page;
  }

  function scenario(steps: Record<string, unknown>[]): string {
    const file = path.join(tempDir(), "scenario.json");
    fs.writeFileSync(file, JSON.stringify({ steps }));
    return file;
  }

  async function dispatch(run: string, name: string, steps: Record<string, unknown>[], extra: string[] = []) {
    const result = await runCli(fakeDispatchArgs(scenario(steps), ["--run", run, "--name", name, ...extra]), {
      env,
    });
    expect(result.code, result.stderr + result.stdout).toBe(0);
    const d = dispatchedOf(result);
    dispatched.push(d.dispatchId);
    return d;
  }

  /**
   * Waits until `selector` matches `n` elements: the table and the timeline are drawn apart (the timeline
   * at most four times a second), so one may show a change a frame before the other.
   */
  const countReaches = (page: Page, selector: string, n: number) =>
    untilInPage(page, `document.querySelectorAll(${JSON.stringify(selector)}).length === ${n}`, DEADLINE);

  /** An account's windows as its supervisors would have merged them (`<home>/quota/<backend>/<name>.json`). */
  function seedAccountWindows(home: string, backend: string, account: string, windows: object[]): void {
    const seenAt = new Date(Date.now() - 60_000).toISOString();
    const full = windows.map((w) => ({
      usedPercent: null,
      windowMinutes: null,
      resetsAt: null,
      seenAt,
      ...w,
    }));
    fs.mkdirSync(path.join(home, "quota", backend), { recursive: true });
    fs.writeFileSync(
      path.join(home, "quota", backend, `${account}.json`),
      JSON.stringify({ schema: 1, backend, account, windows: full }),
    );
  }

  const row = (page: Page, name: string) =>
    page.locator("tr.dispatch-row", { has: page.locator(`td.name a:text-is("${name}")`) });

  it("takes the token out of the address bar, keeps the cookie from scripts, and shows the runs", async () => {
    await dispatch("first", "hello", [{ out: "hi" }]);
    await runCli(["wait", "hello", "--run", "first"], { env });
    const page = await openPage("/");
    await page.waitForSelector('tr.run-row[data-run="first"]', { timeout: DEADLINE });
    expect(page.url()).toBe(`${ui.origin}/`);
    expect(await page.evaluate("document.cookie")).toBe("");
    await screenshot(page, "runs");
    await page.close();
  });

  it("shows a dispatch on its run's page as soon as it is admitted, and turns it recorded when it ends", async () => {
    const page = await openPage("/runs/live");
    await page.waitForSelector("text=No dispatch in this run yet.", { timeout: DEADLINE });
    const go = path.join(tempDir(), "go");
    await dispatch("live", "worker", [{ out: "compiling" }, { waitFor: go }, { out: "done" }]);
    await row(page, "worker").locator('.pill:text-is("running")').waitFor({ timeout: DEADLINE });
    await row(page, "worker").locator('td.doing:has-text("compiling")').waitFor({ timeout: DEADLINE });
    fs.writeFileSync(go, "");
    await row(page, "worker").locator('.pill:text-is("ok")').waitFor({ timeout: DEADLINE });
    expect(await page.locator("rect.bar").count()).toBe(1);
    // The page raised a notification for it (the person had allowed them).
    await untilInPage(page, "window.__notes.length === 1", DEADLINE);
    const notes = await page.evaluate("window.__notes");
    expect(notes).toEqual([{ title: "catherd: worker ok", body: "run live" }]);
    await page.close();
  });

  it("follows a row's link pressed before its row was redrawn and released after", async () => {
    const page = await openPage("/runs/press");
    await page.waitForSelector("text=No dispatch in this run yet.", { timeout: DEADLINE });
    const go = path.join(tempDir(), "go");
    const done = path.join(tempDir(), "done");
    const d = await dispatch("press", "busy", [
      { out: "compiling" },
      { waitFor: go },
      { out: "linking" },
      { waitFor: done },
    ]);
    try {
      const doing = row(page, "busy").locator("td.doing");
      await doing.locator('text="compiling"').waitFor({ timeout: DEADLINE });
      await row(page, "busy").locator("td.name a").hover();
      await page.mouse.down();
      // A push redraws the row while the button is held: the link under it must be the one released on.
      fs.writeFileSync(go, "");
      await doing.locator('text="linking"').waitFor({ timeout: DEADLINE });
      await page.mouse.up();
      await page.waitForURL(`${ui.origin}/runs/press/dispatches/${d.dispatchId}`, { timeout: DEADLINE });
    } finally {
      fs.writeFileSync(done, "");
      await page.close();
      await runCli(["wait", "busy", "--run", "press", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    }
  });

  it("draws the run's timeline: one bar per dispatch, a chain's attempts joined", async () => {
    const bins = tempDir();
    const codex = fakeCli(bins, "codex", [{ lines: recordedLines("codex", "quota"), exit: 1 }]);
    const claude = fakeCli(bins, "claude", [{ lines: recordedLines("claude", "text"), exit: 0 }]);
    const chainEnv = { ...env, CATHERD_CODEX_BIN: codex, CATHERD_CLAUDE_BIN: claude };
    // The quota it ends with holds its account for a while (specs/quota.md): an account of its own keeps
    // the home's default codex account, which the other tests use, open.
    const account = ["account", "add", "metered", "--backend", "codex", "--dir", tempDir()];
    expect((await runCli(account, { env: chainEnv })).code).toBe(0);
    const first = dispatchedOf(
      await runCli(
        [
          "dispatch",
          "--run",
          "chains",
          "--backend",
          "codex",
          "--name",
          "ladder",
          "--brief",
          "hi",
          "--account",
          "metered",
          "--fallback",
          "claude-code",
          "--json",
        ],
        { env: chainEnv },
      ),
    );
    dispatched.push(first.dispatchId);
    await dispatch("chains", "solo", [{ out: "one" }]);
    await dispatch("chains", "failing", [{ err: "boom" }, { exit: 2 }]);
    const waited = JSON.parse(
      (
        await runCli(["wait", "ladder", "solo", "failing", "--run", "chains", "--json", "--timeout", "60s"], {
          env: chainEnv,
          timeoutMs: 90_000,
        })
      ).stdout,
    ) as { records: { dispatchId: string; name: string }[] };
    for (const r of waited.records) dispatched.push(r.dispatchId);
    const last = waited.records.find((r) => r.name === "ladder")?.dispatchId;
    const page = await openPage("/runs/chains");
    await countReaches(page, "rect.bar", 4);
    await countReaches(page, "tr.dispatch-row", 3);
    expect(await page.locator("line.join").count()).toBe(1);
    expect(await page.locator("line.join").getAttribute("data-chain")).toBe(first.dispatchId);
    expect(await page.locator(`g.bar-group[data-id="${last}"] rect.bar`).getAttribute("class")).toContain(
      "s-ok",
    );
    expect(
      await page.locator(`g.bar-group[data-id="${first.dispatchId}"] rect.bar`).getAttribute("class"),
    ).toContain("s-limit");
    expect(await page.locator("line.now").count()).toBe(1);
    // One row for the chain, as status has it.
    expect(await page.locator("tr.dispatch-row").count()).toBe(3);
    expect(await row(page, "ladder").locator("td").nth(1).textContent()).toBe("codex quota → claude-code");
    // A live one beside them, in a tool call, for the picture.
    const go = path.join(tempDir(), "go");
    const building = scenario([
      codexLine({ type: "thread.started", thread_id: "t-2" }),
      codexLine({ type: "turn.started" }),
      codexLine({
        type: "item.started",
        item: { id: "c1", type: "command_execution", command: "cargo build --release" },
      }),
      { waitFor: go },
      codexLine({
        type: "item.completed",
        item: { id: "c1", type: "command_execution", command: "cargo build --release", exit_code: 0 },
      }),
      codexLine({ type: "turn.completed", usage: { input_tokens: 800, output_tokens: 90 } }),
      { exit: 0 },
    ]);
    const builder = dispatchedOf(
      await runCli(
        [
          "dispatch",
          "--run",
          "chains",
          "--backend",
          "codex",
          "--name",
          "builder",
          "--bin",
          FAKE_AGENT,
          "--brief",
          "build it",
          "--env",
          `FAKE_AGENT_SCENARIO_FILE=${building}`,
          "--json",
        ],
        { env },
      ),
    );
    dispatched.push(builder.dispatchId);
    await row(page, "builder")
      .locator('td.doing:has-text("cargo build --release")')
      .waitFor({ timeout: DEADLINE });
    await countReaches(page, "rect.bar", 5);
    expect(await page.locator("tr.dispatch-row").first().getAttribute("data-id")).toBe(builder.dispatchId);
    await screenshot(page, "run");
    fs.writeFileSync(go, "");
    await row(page, "builder").locator('.pill:text-is("ok")').waitFor({ timeout: DEADLINE });
    await page.close();
  });

  it("joins a conversation's turns on the timeline: a follow-up's bar follows its first turn's, dashed", async () => {
    const bins = tempDir();
    const codex = fakeCli(bins, "codex", [{ lines: recordedLines("codex", "text"), exit: 0 }]);
    const talkEnv = { ...env, CATHERD_CODEX_BIN: codex };
    const turn = async (args: string[]) => {
      const d = dispatchedOf(
        await runCli(["dispatch", "--run", "talks", ...args, "--json"], { env: talkEnv }),
      );
      dispatched.push(d.dispatchId);
      const waited = await runCli(["wait", "talk", "--run", "talks", "--timeout", "60s"], {
        env: talkEnv,
        timeoutMs: 90_000,
      });
      expect(waited.code, waited.stdout + waited.stderr).toBe(0);
      return d;
    };
    const first = await turn(["--backend", "codex", "--name", "talk", "--brief", "hi"]);
    const second = await turn(["--follow-up", "talk", "--brief", "and then?"]);
    const page = await openPage("/runs/talks");
    await countReaches(page, "rect.bar", 2);
    expect(await page.locator("line.join.follow-up").count()).toBe(1);
    expect(await page.locator("line.join.follow-up").getAttribute("data-chain")).toBe(first.dispatchId);
    expect(await page.locator(`g.bar-group[data-id="${second.dispatchId}"] title`).textContent()).toContain(
      `follow-up of ${first.dispatchId}`,
    );
    await page.close();
  });

  it("shows the worker's declared outcome beside the verdict, on the run's page and the dispatch's", async () => {
    const why = "the docs are left <b>bold?</b>";
    const said = scenario([
      codexLine({ type: "thread.started", thread_id: "t-3" }),
      codexLine({ type: "turn.started" }),
      codexLine({
        type: "item.completed",
        item: { id: "m1", type: "agent_message", text: `Done.\n\nSTATUS: partial — ${why}` },
      }),
      codexLine({ type: "turn.completed", usage: { input_tokens: 100, output_tokens: 10 } }),
      { exit: 0 },
    ]);
    const asked = (name: string, extra: string[]) =>
      runCli(
        [
          "dispatch",
          "--run",
          "outcomes",
          "--backend",
          "codex",
          "--name",
          name,
          "--bin",
          FAKE_AGENT,
          "--brief",
          "fix it",
          "--env",
          `FAKE_AGENT_SCENARIO_FILE=${said}`,
          "--json",
          ...extra,
        ],
        { env },
      );
    const d = dispatchedOf(await asked("declared", ["--outcome"]));
    dispatched.push(d.dispatchId);
    const plain = dispatchedOf(await asked("plain", []));
    dispatched.push(plain.dispatchId);
    await runCli(["wait", "declared", "plain", "--run", "outcomes"], { env });
    const page = await openPage("/runs/outcomes");
    await row(page, "declared").locator('.pill:text-is("ok")').waitFor({ timeout: DEADLINE });
    expect(await row(page, "declared").locator("td.doing .outcome").textContent()).toBe(` · partial: ${why}`);
    await row(page, "plain").locator('.pill:text-is("ok")').waitFor({ timeout: DEADLINE });
    expect(await row(page, "plain").locator("td.doing .outcome").count()).toBe(0);
    expect(await page.locator("main b").count()).toBe(0);
    await page.close();
    const detail = await openPage(`/runs/outcomes/dispatches/${d.dispatchId}`);
    await detail.waitForSelector("p.outcome", { timeout: DEADLINE });
    expect(await detail.locator("p.outcome").textContent()).toBe(
      `Outcome, the worker's word: partial — ${why}`,
    );
    await detail.close();
  });

  it("shows a check running on its row, then that it passed, on the run's page and the dispatch's", async () => {
    const go = path.join(tempDir(), "go");
    const check = `while [ ! -e '${go}' ]; do sleep 0.05; done; echo green`;
    const started = await runCli(
      [
        "dispatch",
        "--run",
        "checks",
        "--backend",
        "exec",
        "--name",
        "checked",
        "--verify",
        check,
        "--json",
        "--",
        "true",
      ],
      { env },
    );
    const d = dispatchedOf(started);
    dispatched.push(d.dispatchId);
    const page = await openPage("/runs/checks");
    await row(page, "checked").locator('.pill:text-is("verifying")').waitFor({ timeout: DEADLINE });
    expect(await row(page, "checked").locator("td.doing").textContent()).toMatch(/^checking while \[/);
    fs.writeFileSync(go, "");
    await row(page, "checked").locator('.pill:text-is("ok")').waitFor({ timeout: DEADLINE });
    expect(await row(page, "checked").locator("td.doing .check").textContent()).toBe(" · check passed");
    await page.close();
    const detail = await openPage(`/runs/checks/dispatches/${d.dispatchId}`);
    await detail.waitForSelector("p.check", { timeout: DEADLINE });
    expect(await detail.locator("p.check").textContent()).toBe(`Check: passed — ${check} (1 run)`);
    await detail.close();
  });

  it("shows a race as one line that opens into its attempts", async () => {
    const bins = tempDir();
    const codex = fakeCli(bins, "codex", [
      { lines: recordedLines("codex", "text"), exit: 0, write: { file: "answer.txt", text: "right" } },
    ]);
    const repo = makeRepo(path.join(tempDir(), "repo"), { "answer.txt": "wrong" });
    const raced = await runCli(
      [
        ...["dispatch", "--run", "races", "--backend", "codex", "--name", "fix", "--worktree"],
        ...["--verify", 'test "$(cat answer.txt)" = right', "--attempts", "2", "--pick", "all", "--json"],
        ...["--brief", "make answer.txt right"],
      ],
      { env: { ...env, CATHERD_CODEX_BIN: codex }, cwd: repo },
    );
    expect(raced.code, raced.stderr + raced.stdout).toBe(0);
    const attempts = (JSON.parse(raced.stdout) as { race: { attempts: { dispatchId: string }[] } }).race
      .attempts;
    dispatched.push(...attempts.map((a) => a.dispatchId));
    const waited = await runCli(["wait", "fix", "--run", "races", "--timeout", "60s"], {
      env,
      timeoutMs: 90_000,
    });
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    const page = await openPage("/runs/races");
    const line = page.locator("tr.race-row");
    await line.waitFor({ timeout: DEADLINE });
    await untilInPage(
      page,
      `document.querySelector("tr.race-row td.doing")?.textContent === "2 attempts: 2 ok · 2 passed its check"`,
      DEADLINE,
    );
    expect(await line.locator("td.name").textContent()).toBe("▸ fix");
    // Closed at first: its attempts' rows are there, hidden; a click opens it, another closes it.
    await countReaches(page, "tr.race-attempt[hidden]", 2);
    await line.locator("button.race-toggle").click();
    await countReaches(page, "tr.race-attempt:not([hidden])", 2);
    expect(await page.locator("tr.race-attempt td.name").allTextContents()).toEqual(["fix.1", "fix.2"]);
    await line.locator("button.race-toggle").click();
    await countReaches(page, "tr.race-attempt[hidden]", 2);
    await page.close();
  });

  it("shows a steerable dispatch's question on its row, its messages and questions on its page, and the answer live", async () => {
    const steerEnv = { ...env, CATHERD_CLAUDE_BIN: FAKE_CLAUDE };
    const cli = async (args: string[]) => {
      const r = await runCli(args, { env: steerEnv });
      expect(r.code, `catherd ${args.join(" ")}: ${r.stderr}${r.stdout}`).toBe(0);
      return r.stdout;
    };
    const page = await openPage("/runs/steer");
    await page.waitForSelector("text=No dispatch in this run yet.", { timeout: DEADLINE });
    const d = await steered.dispatch(steerEnv, "asker", "[ask] run the tests", [
      "--run",
      "steer",
      "--steerable",
      "--on-question",
      "wait 1m",
    ]);
    // The run's row: it waits for an answer, and says so instead of what it is doing.
    const asking = row(page, "asker").locator("td.doing .asking");
    await asking.waitFor({ timeout: DEADLINE });
    expect(await asking.textContent()).toBe("asks: q1 $ sleep 0.3"); // the fake's Bash call, [ask]
    expect(fs.existsSync(path.join(d.dir, "questions", "q1.json"))).toBe(true);
    await cli(["send", "asker", "also update the docs\nsecond line", "--run", "steer"]);

    // The dispatch's page, reached from the row: the message queued, the question waiting.
    await row(page, "asker").locator("td.name a").click();
    await page.waitForURL(`${ui.origin}/runs/steer/dispatches/${d.dispatchId}`, { timeout: DEADLINE });
    const messages = page.locator(".part-messages table.messages tbody tr.message");
    const question = page.locator(".part-messages table.questions tbody tr.question");
    await countReaches(page, ".part-messages table.messages tbody tr.message", 1);
    expect(await messages.locator("td").allTextContents()).toEqual([
      "also update the docs",
      "queued",
      expect.stringMatching(/^\d\d:\d\d:\d\d$/),
    ]);
    await countReaches(page, ".part-messages table.questions tbody tr.question.waiting", 1);
    expect((await page.locator(".part-messages").textContent()) ?? "").not.toContain("second line");
    const cells = await question.locator("td").allTextContents();
    expect(cells[0]).toBe("q1 (permission)");
    expect(cells[1]).toBe("$ sleep 0.3");
    expect(cells[2]).toMatch(/^waiting for an answer until \d{4}-/);
    await screenshot(page, "steering");

    // Answered from the command line: the page shows the answer as it comes, then the record.
    await cli(["answer", "asker", "q1", "--allow", "--run", "steer"]);
    await question
      .locator("td", { hasText: /^allowed by catherd answer \(pid \d+\)$/ })
      .waitFor({ timeout: DEADLINE });
    expect(await page.locator(".part-messages tr.question.waiting").count()).toBe(0);
    await messages.locator('td:text-is("acted")').waitFor({ timeout: DEADLINE });
    await page.locator('.title-row .pill:text-is("ok")').waitFor({ timeout: DEADLINE });
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({ status: "ok" });
    // Back on the run's page: recorded ok, asking nothing.
    await page.locator("p.summary a", { hasText: "steer" }).click();
    await row(page, "asker").locator('.pill:text-is("ok")').waitFor({ timeout: DEADLINE });
    expect(await row(page, "asker").locator(".asking").count()).toBe(0);
    await page.close();
  });

  it("cancels from the page after a confirmation: the agent stops and its record says cancelled", async () => {
    const ready = path.join(tempDir(), "ready");
    const d = await dispatch("cancel", "victim", [{ touch: ready }, { hang: true }]);
    const agentPid = Number((await waitForFile(ready)).trim());
    const page = await openPage("/runs/cancel");
    await row(page, "victim").locator('.pill:text-is("running")').waitFor({ timeout: DEADLINE });
    await row(page, "victim").locator("button.cancel").click();
    await page.locator("button.keep").click();
    expect(await page.locator(".modal").count()).toBe(0);
    expect(fs.existsSync(path.join(d.dir, "cancel"))).toBe(false);
    await row(page, "victim").locator("button.cancel").click();
    await page.locator("button.confirm-cancel").click();
    await row(page, "victim").locator('.pill:text-is("cancelled")').waitFor({ timeout: DEADLINE });
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({
      status: "cancelled",
      reason: "cancelled",
    });
    await waitFor("the agent to be gone", () => (isAlive(agentPid) ? undefined : true));
    await page.close();
  });

  it("shows each account's windows, whether it takes work and what it holds parked, with a link to each, live", async () => {
    // A home of its own, without a waker: the work parked here waits hours for a reset nobody sees.
    const own = isolatedHome();
    const ownEnv = { ...own.env, CATHERD_TEST_ONLY_NO_WAKER: "1", CATHERD_CLAUDE_BIN: FAKE_CLAUDE };
    const resetsAt = new Date(Math.ceil((Date.now() + 3 * 3_600_000) / 60_000) * 60_000).toISOString();
    seedAccountWindows(own.home, "claude-code", "default", [
      { limit: "claude", window: "five_hour", status: "rejected", resetsAt, windowMinutes: 300 },
    ]);
    const parked = await runCli(
      ["dispatch", "--run", "night", "--backend", "claude-code", "--name", "fix", "--brief", "fix", "--json"],
      { env: ownEnv },
    );
    expect(parked.code, parked.stderr).toBe(0);
    const d = JSON.parse(parked.stdout).dispatched as { dispatchId: string; blockedBy: string | null };
    expect(d.blockedBy).toBe("window");
    const server = await startUiServer(ownEnv);
    try {
      const page = await openPage("/", server);
      const block = page.locator('.account[data-account="claude-code/default"]');
      await block.waitFor({ timeout: DEADLINE });
      const until = `${resetsAt.slice(0, 10)} ${resetsAt.slice(11, 16)}Z`;
      expect(await block.locator(".gate").textContent()).toBe(
        `out of window until ${until} (claude/five_hour)`,
      );
      expect(await block.locator(".parked").textContent()).toBe("1 waiting: night / fix");
      const cells = await block.locator("tr.window-row td").allTextContents();
      expect(cells.slice(0, 3)).toEqual(["claude/five_hour", "no figure", "5h00m"]);
      expect(cells[3]).toMatch(new RegExp(`^${until} \\(in [23]h\\d\\dm\\)$`));
      expect(cells[4]).toBe("rejected");
      // A window reported by another CLI shows without a reload (the slow poll judges the accounts).
      seedAccountWindows(own.home, "codex", "default", [
        {
          limit: "",
          window: "primary",
          usedPercent: 40,
          status: "allowed",
          resetsAt: null,
          windowMinutes: 300,
        },
      ]);
      const codex = page.locator('.account[data-account="codex/default"]');
      await codex.waitFor({ timeout: DEADLINE });
      expect(await codex.locator(".gate").textContent()).toBe("takes work");
      expect(await codex.locator("tr.window-row td").first().textContent()).toBe("primary");
      await screenshot(page, "accounts");
      // The link opens the parked dispatch, whose row says why it waits.
      await block.locator(".parked a").click();
      await page.waitForURL(`${server.origin}/runs/night/dispatches/${d.dispatchId}`, { timeout: DEADLINE });
      await page.waitForSelector("main h2", { timeout: DEADLINE });
      await untilInPage(
        page,
        'document.querySelector("main").textContent.includes("claude-code default out of window")',
        DEADLINE,
      );
      await page.close();
    } finally {
      await server.stop();
    }
  });

  it("says in one line that a home has no account declared and no window reported", async () => {
    const server = await startUiServer({ ...isolatedHome().env, CATHERD_TEST_ONLY_NO_WAKER: "1" });
    try {
      const page = await openPage("/", server);
      await page.waitForSelector("section.accounts p.empty", { timeout: DEADLINE });
      expect(await page.locator("section.accounts p.empty").textContent()).toBe(
        "No accounts declared and no window reported yet (catherd account add).",
      );
      await page.close();
    } finally {
      await server.stop();
    }
  });

  it("renders every string an agent or a user wrote as text: no dialog, no script, nothing broken, on every view", async () => {
    const run = "xss";
    const payloads = [
      "<script>window.__pwned='script'</script>",
      "<img src=x onerror=\"window.__pwned='img'\">",
      "<svg onload=\"window.__pwned='svg'\"></svg>",
    ];
    // An exec agent: its own lines are its events (ANSI escapes, invalid UTF-8, a 10 MB line among them).
    const exec = await dispatch(
      run,
      "raw",
      [
        ...payloads.map((p) => ({ out: p })),
        { out: "\u001b[31mred\u001b[0m \u001b]0;title\u0007done" },
        { bytes: [0x62, 0x61, 0x64, 0xff, 0xfe, 0x0a] },
        { bigLine: 10_000_000 },
        { err: `\u001b[1m${payloads[1]}\u001b[0m` },
      ],
      ["--brief", `Brief ${payloads[0]}`],
    );
    // A codex agent whose reply is Markdown full of traps, and whose tool call is one too.
    const reply = [
      "# Done <script>window.__pwned='h'</script>",
      "[a link](javascript:window.__pwned='link') and [ok](https://example.com/x) and <img src=x onerror=\"window.__pwned='r'\">",
      "",
      "```html",
      "<script>window.__pwned='code'</script>",
      "```",
      "- item **bold** `code`",
    ].join("\n");
    const scenarioPath = scenario([
      codexLine({ type: "thread.started", thread_id: "t-1" }),
      codexLine({ type: "turn.started" }),
      codexLine({
        type: "item.started",
        item: { id: "c1", type: "command_execution", command: payloads[1] },
      }),
      codexLine({
        type: "item.completed",
        item: { id: "c1", type: "command_execution", command: payloads[1], exit_code: 0 },
      }),
      codexLine({ type: "item.completed", item: { id: "m", type: "agent_message", text: reply } }),
      codexLine({
        type: "turn.completed",
        usage: { input_tokens: 1200, cached_input_tokens: 200, output_tokens: 300 },
      }),
      { exit: 0 },
    ]);
    const codex = dispatchedOf(
      await runCli(
        [
          "dispatch",
          "--run",
          run,
          "--backend",
          "codex",
          "--name",
          "md",
          "--bin",
          FAKE_AGENT,
          "--brief",
          payloads[2] as string,
          "--env",
          `FAKE_AGENT_SCENARIO_FILE=${scenarioPath}`,
          "--env",
          "API_KEY=sekrit-value",
          "--json",
        ],
        { env },
      ),
    );
    dispatched.push(codex.dispatchId);
    // An agent in a git repository whose change is a trap: changes.patch shows it.
    const repo = makeRepo(path.join(tempDir(), "repo"), { "README.md": "hi\n" });
    const patcher = dispatchedOf(
      await runCli(
        [
          "dispatch",
          "--run",
          run,
          "--backend",
          "exec",
          "--name",
          "patch",
          "--cwd",
          repo,
          "--env",
          `EVIL=${payloads[1]}`,
          "--json",
          "--",
          "/bin/sh",
          "-c",
          'printf "%s\\n" "$EVIL" > evil.html',
        ],
        { env },
      ),
    );
    dispatched.push(patcher.dispatchId);
    await runCli(["wait", "raw", "md", "patch", "--run", run, "--timeout", "60s"], {
      env,
      timeoutMs: 90_000,
    });

    const check = async (page: Page) => {
      expect(await page.evaluate("window.__pwned")).toBeUndefined();
      expect(await page.locator("main img, main script, main iframe, main svg [onload]").count()).toBe(0);
      expect(await page.locator('a[href^="javascript"]').count()).toBe(0);
    };
    const runPage = await openPage(`/runs/${run}`);
    await runPage.waitForSelector('tr.dispatch-row .pill:text-is("ok")', { timeout: DEADLINE });
    await untilInPage(runPage, 'document.querySelectorAll("tr.dispatch-row .pill").length === 3', DEADLINE);
    await check(runPage);
    expect(await runPage.locator("main").textContent()).toContain("1.5k");
    await runPage.close();

    const rawPage = await openPage(`/runs/${run}/dispatches/${exec.dispatchId}`);
    await rawPage.waitForSelector("ol.events li", { timeout: DEADLINE });
    await check(rawPage);
    const events = (await rawPage.locator("ol.events").textContent()) ?? "";
    for (const p of payloads) expect(events).toContain(p);
    expect(events).toContain("red done");
    expect(events).not.toContain("\u001b");
    expect(events).toContain("bad\ufffd\ufffd");
    expect(events).toMatch(/x{2000} … \(9998000 more characters\)/);
    expect(await rawPage.locator(".brief").textContent()).toBe(`Brief ${payloads[0]}`);
    expect(await rawPage.locator(".stderr").textContent()).toBe(payloads[1]);
    await rawPage.close();

    const mdPage = await openPage(`/runs/${run}/dispatches/${codex.dispatchId}`);
    await mdPage.waitForSelector(".reply h3", { timeout: DEADLINE });
    await check(mdPage);
    expect(await mdPage.locator(".reply h3").textContent()).toBe("Done <script>window.__pwned='h'</script>");
    expect(await mdPage.locator(".reply pre code").textContent()).toBe(
      "<script>window.__pwned='code'</script>",
    );
    expect(await mdPage.locator(".reply a").getAttribute("href")).toBe("https://example.com/x");
    expect(await mdPage.locator(".reply .unsafe-link").textContent()).toBe("a link");
    expect(await mdPage.locator(".reply strong").textContent()).toBe("bold");
    expect(await mdPage.locator("table.tools td.tool").first().textContent()).toContain(payloads[1]);
    const spec = (await mdPage.locator(".part-specjson pre").textContent()) ?? "";
    expect(spec).toContain('"API_KEY": "[redacted]"');
    expect(spec).not.toContain("sekrit-value");
    expect(await mdPage.locator(".usage").textContent()).toContain("input 1.2k (cached 200), output 300");
    await screenshot(mdPage, "dispatch");
    await mdPage.close();

    // An account's window named by a CLI, and a declared account's folder: both hostile.
    const home = env.CATHERD_HOME as string;
    seedAccountWindows(home, "codex", "default", [
      { limit: payloads[0], window: payloads[1], usedPercent: 10, status: "allowed", resetsAt: null },
    ]);
    fs.writeFileSync(
      path.join(home, "accounts.json"),
      JSON.stringify({
        schema: 1,
        accounts: [
          { backend: "codex", name: "evil", dir: `/tmp/${payloads[2]}`, addedAt: new Date().toISOString() },
        ],
      }),
    );
    const runsPage = await openPage("/");
    await runsPage.waitForSelector('.account[data-account="codex/evil"]', { timeout: DEADLINE });
    await check(runsPage);
    expect(
      await runsPage.locator('.account[data-account="codex/default"] td.window-name').textContent(),
    ).toBe(`${payloads[0]}/${payloads[1]}`);
    expect(await runsPage.locator('.account[data-account="codex/evil"] .account-dir').textContent()).toBe(
      ` /tmp/${payloads[2]} `,
    );
    await runsPage.close();

    const patchPage = await openPage(`/runs/${run}/dispatches/${patcher.dispatchId}`);
    await patchPage.waitForSelector("pre.diff .d-add", { timeout: DEADLINE });
    await check(patchPage);
    expect(await patchPage.locator("pre.diff .d-add").last().textContent()).toBe(`+${payloads[1]}\n`);
    await patchPage.close();
  });
});
