import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { waitFor } from "../helpers/wait.js";
import { binOf, codexConfigToml } from "./harness.js";
import type { MockModelServer } from "./mock-model-server.js";

// How test/fixtures/recorded/codex-app-server/ was made: the pinned codex (scripts/live/install-clis.sh)
// run as `codex app-server` against the mock model's `steer` scenario (and the failure scenarios), driven
// over stdio JSON-RPC the way catherd's codex protocol drives it. Each exchange is stored as
// `<name>.in.jsonl` (what the client wrote, in order) and `<name>.out.jsonl` (the server's stdout).
// Run: CATHERD_RECORD_APP_SERVER=<out dir> npm run record:codex-app-server (the recording,
// test/live/record-codex-app-server.record.ts); then the temporary folders in the lines are replaced by
// /home/dev/rec and the mock's port by PORT, as in the other recorded streams.

/** One app-server conversation: what was written and what came back, as lines. */
export class AppServerSession {
  readonly written: string[] = [];
  readonly read: string[] = [];
  private readonly child: ChildProcess;
  private buffer = "";

  constructor(env: Record<string, string>, cwd: string) {
    this.child = spawn(binOf("codex"), ["app-server"], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "ignore"],
    });
    this.child.stdout?.setEncoding("utf8");
    this.child.stdout?.on("data", (chunk: string) => {
      this.buffer += chunk;
      const lines = this.buffer.split("\n");
      this.buffer = lines.pop() ?? "";
      this.read.push(...lines.filter((l) => l.length > 0));
    });
  }

  send(message: Record<string, unknown>): void {
    const line = JSON.stringify(message);
    this.written.push(line);
    this.child.stdin?.write(`${line}\n`);
  }

  /** The first message read that `match` accepts, waited for. */
  async next(
    what: string,
    match: (m: Record<string, unknown>) => boolean,
    after = 0,
  ): Promise<Record<string, unknown>> {
    return waitFor(what, () => this.messages().slice(after).find(match), 60_000);
  }

  messages(): Record<string, unknown>[] {
    return this.read.map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  /** Closes the server's stdin (it exits) and waits for its exit. */
  async end(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.stdin?.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
  }

  save(dir: string, name: string): void {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${name}.in.jsonl`), `${this.written.join("\n")}\n`);
    fs.writeFileSync(path.join(dir, `${name}.out.jsonl`), `${this.read.join("\n")}\n`);
  }
}

/** A CODEX_HOME pointed at the mock's `scenario`, a HOME and a work folder, under one temp root. */
export function appServerPlace(
  server: MockModelServer,
  scenario: string,
): { env: Record<string, string>; cwd: string; root: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "catherd-rec-"));
  const codexHome = path.join(root, "codex-home");
  const home = path.join(root, "home");
  const cwd = path.join(root, "work");
  for (const dir of [codexHome, home, cwd]) fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(codexHome, "config.toml"), codexConfigToml(server.baseUrl(scenario)));
  return { env: { CODEX_HOME: codexHome, HOME: home, MOCK_API_KEY: "dummy" }, cwd, root };
}

export const isResponse = (id: string) => (m: Record<string, unknown>) =>
  m.id === id && m.method === undefined;
export const isMethod = (method: string) => (m: Record<string, unknown>) => m.method === method;
