import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait.js";

// catherd's opencode bridge (src/infra/opencode-bridge/), the built program, against the stand-in for
// `opencode serve` (test/fixtures/fake-opencode-serve.mjs), which fails where the real one fails: slow to
// start, its event stream closed a moment into each turn, a prompt mid-turn joined after the tool.

const BRIDGE = path.join(ROOT, "dist/bin/opencode-bridge.js");
const FAKE = path.join(ROOT, "test/fixtures/fake-opencode-serve.mjs");
const started: Run[] = [];

/** Each bridge a test left running is ended (its server with it), else killed with its server. */
afterEach(async () => {
  for (const run of started.splice(0)) {
    const { child } = run;
    if (child.exitCode === null && child.signalCode === null) {
      run.write('{"op":"end","id":"end"}');
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await run.exited;
      clearTimeout(timer);
    }
    const pidFile = path.join(run.dir, "serve.pid");
    if (fs.existsSync(pidFile)) killPid(run.servePid());
  }
});

class Run {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  readonly dir = tempDir();
  private text = "";

  constructor(args: string[] = [], env: NodeJS.ProcessEnv = {}) {
    this.child = spawn(process.execPath, [BRIDGE, FAKE, ...args], {
      cwd: this.dir,
      env: {
        ...process.env,
        XDG_DATA_HOME: path.join(this.dir, "data"),
        FAKE_OPENCODE_LOG: path.join(this.dir, "model.log"),
        FAKE_OPENCODE_PID: path.join(this.dir, "serve.pid"),
        ...env,
      },
      stdio: ["pipe", "pipe", "ignore"],
    });
    started.push(this);
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
    this.child.stdout?.setEncoding("utf8");
    this.child.stdout?.on("data", (chunk: string) => {
      this.text += chunk;
    });
  }

  write(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  prompt(n: number, text: string): void {
    const uuid = `0000000${n}-0000-8000-8000-00000000000${n}`;
    this.write(JSON.stringify({ op: "prompt", id: `prompt:${uuid}`, uuid, text }));
  }

  lines(): Record<string, unknown>[] {
    return this.text
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  /** Waits for the `times`-th line of `type`. */
  until(type: string, times = 1, timeoutMs = 20_000): Promise<Record<string, unknown>> {
    return waitFor(
      `${type} ×${times}`,
      () => this.lines().filter((l) => l.type === type)[times - 1],
      timeoutMs,
    );
  }

  seen(): string[] {
    const file = path.join(this.dir, "model.log");
    if (!fs.existsSync(file)) return [];
    return fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => (JSON.parse(l) as { text: string }).text);
  }

  servePid(): number {
    return Number(fs.readFileSync(path.join(this.dir, "serve.pid"), "utf8"));
  }
}

describe("catherd's opencode bridge", () => {
  it("opens a session, gives a prompt, says the turn's end from its polls though the event stream closed mid-turn, and ends at `end`", async () => {
    const run = new Run();
    run.prompt(1, "[tool:1000] work");
    const idle = await run.until("bridge.idle");
    expect(idle.error).toBeNull();
    const types = run.lines().map((l) => l.type);
    expect(types.slice(0, 2)).toEqual(["bridge.server", "bridge.session"]);
    expect(types).toContain("bridge.busy");
    // The tool's end came after the stream was closed (300 ms into the turn): the bridge opened it again.
    const tool = run.lines().filter((l) => JSON.stringify(l).includes('"status":"completed"'));
    expect(tool).toHaveLength(1);
    const echo = run.lines().find((l) => l.type === "message.updated");
    expect(JSON.stringify(echo)).toContain("00000001000080008000000000000001");
    run.write('{"op":"end","id":"end"}');
    expect(await run.exited).toBe(0);
    expect(isAlive(run.servePid())).toBe(false);
  });

  it("gives a message once however often it is given, and a prompt mid-tool joins that turn", async () => {
    const run = new Run();
    run.prompt(1, "[tool:wait] fix the test");
    await waitFor("the tool to run", () =>
      run.lines().some((l) => JSON.stringify(l).includes('"status":"running"')) ? true : undefined,
    );
    run.prompt(2, "also the docs");
    run.prompt(2, "also the docs");
    await run.until("bridge.idle");
    expect(
      run
        .lines()
        .filter((l) => l.type === "bridge.answer")
        .map((l) => [l.id, l.ok]),
    ).toEqual([
      ["prompt:00000001-0000-8000-8000-000000000001", true],
      ["prompt:00000002-0000-8000-8000-000000000002", true],
      ["prompt:00000002-0000-8000-8000-000000000002", true],
    ]);
    expect(run.seen()).toEqual(["[tool:wait] fix the test", "also the docs"]);
    expect(run.lines().filter((l) => l.type === "bridge.idle")).toHaveLength(1);
  });

  it("waits for a server slow to start", async () => {
    const run = new Run([], { FAKE_OPENCODE_START_MS: "2000" });
    const server = await run.until("bridge.server");
    expect(server.ms).toBeGreaterThanOrEqual(2000);
    await run.until("bridge.session");
  });

  it("fails, exit 1, on a follow-up's session that does not exist, and stops its server", async () => {
    const run = new Run(["--session", "ses_0000000000000000000000bogus"]);
    const failed = await run.until("bridge.failed");
    expect(failed.message).toBe("Session not found: ses_0000000000000000000000bogus");
    expect(await run.exited).toBe(1);
    expect(isAlive(run.servePid())).toBe(false);
  });

  it("rejects an ask itself when the dispatch takes no questions, and passes it on when it does", async () => {
    const permission = JSON.stringify({ bash: "ask" });
    const plain = new Run(["--permission", permission]);
    plain.prompt(1, "RUN echo no > no.txt");
    await plain.until("bridge.idle");
    expect(plain.lines().some((l) => l.type === "bridge.rejected")).toBe(true);
    expect(fs.existsSync(path.join(plain.dir, "no.txt"))).toBe(false);
    const asking = new Run(["--permission", permission, "--asks"]);
    asking.prompt(1, "RUN echo yes > yes.txt");
    const asked = await asking.until("permission.asked");
    const id = (asked.properties as { id: string }).id;
    asking.write(JSON.stringify({ op: "reply", id: `reply:${id}`, permission: id, reply: "once" }));
    await asking.until("bridge.idle");
    expect(fs.readFileSync(path.join(asking.dir, "yes.txt"), "utf8")).toBe("yes\n");
  });

  it("ends with 143 on SIGTERM, its server stopped first; a line that is not an op is ignored", async () => {
    const run = new Run();
    await run.until("bridge.session");
    run.write("not json");
    run.prompt(1, "hello");
    await run.until("bridge.idle");
    const serve = run.servePid();
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(143);
    expect(isAlive(serve)).toBe(false);
  });
});
