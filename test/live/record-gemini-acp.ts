import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { waitFor } from "../helpers/wait.js";
import { binOf, CLIS } from "./harness.js";
import type { MockModelServer } from "./mock-model-server.js";

// How test/fixtures/recorded/gemini-acp/ was made: the pinned gemini (scripts/live/install-clis.sh) run as
// `gemini --acp` against the mock model's `steer` scenario (and the failure scenarios), driven over stdio
// JSON-RPC the way catherd's gemini protocol drives it (src/backends/gemini-steer.ts). Each exchange is
// stored as `<name>.in.jsonl` (what the client wrote, in order), `<name>.out.jsonl` (gemini's stdout) and
// `<name>.stderr` (its stderr). Run: CATHERD_RECORD_GEMINI_ACP=<out dir> npm run record:gemini-acp (the
// recording, test/live/record-gemini-acp.record.ts), which cleans the lines as it saves them: the temporary
// folder becomes /home/dev/rec and the mock's port PORT, as in the other recorded streams.

/** One ACP conversation with a real gemini: what was written and what came back, as lines. */
export class AcpSession {
  readonly written: string[] = [];
  readonly read: string[] = [];
  stderr = "";
  private readonly child: ChildProcess;
  private buffer = "";
  private exitCode: number | null | undefined;

  constructor(env: Record<string, string>, cwd: string, args: readonly string[] = []) {
    this.child = spawn(binOf("gemini"), ["--acp", "--skip-trust", ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stdout?.setEncoding("utf8");
    this.child.stdout?.on("data", (chunk: string) => {
      this.buffer += chunk;
      const lines = this.buffer.split("\n");
      this.buffer = lines.pop() ?? "";
      this.read.push(...lines.filter((l) => l.length > 0));
    });
    this.child.stderr?.setEncoding("utf8");
    this.child.stderr?.on("data", (chunk: string) => {
      this.stderr += chunk;
    });
    this.child.once("exit", (code) => {
      this.exitCode = code;
    });
  }

  send(message: Record<string, unknown>): void {
    const line = JSON.stringify(message);
    this.written.push(line);
    this.child.stdin?.write(`${line}\n`);
  }

  /** The first message read after the first `after` that `match` accepts, waited for. */
  async next(
    what: string,
    match: (m: Record<string, unknown>) => boolean,
    after = 0,
  ): Promise<Record<string, unknown>> {
    return waitFor(what, () => this.messages().slice(after).find(match), 90_000);
  }

  messages(): Record<string, unknown>[] {
    return this.read.map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  /** How it exited (undefined: still running). */
  get exited(): number | null | undefined {
    return this.exitCode;
  }

  /** Closes gemini's stdin (it exits) and waits for its exit. */
  async end(): Promise<void> {
    if (this.exitCode !== undefined) return;
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    this.child.stdin?.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
  }

  /**
   * Saves the exchange, cleaned: `root` becomes /home/dev/rec, the mock's port PORT, the recording user's
   * home (in gemini's stack traces: where the live CLIs are installed) /home/dev.
   */
  save(dir: string, name: string, clean: { root: string; port: string }): void {
    const tidy = (text: string) =>
      text
        .split(clean.root)
        .join("/home/dev/rec")
        .split(`:${clean.port}/`)
        .join(":PORT/")
        .split(`${os.homedir()}/`)
        .join("/home/dev/");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${name}.in.jsonl`), tidy(`${this.written.join("\n")}\n`));
    fs.writeFileSync(path.join(dir, `${name}.out.jsonl`), tidy(`${this.read.join("\n")}\n`));
    fs.writeFileSync(path.join(dir, `${name}.stderr`), tidy(this.stderr));
  }
}

/** gemini's HOME (settings: an API key's auth) pointed at the mock's `scenario`, and a work folder. */
export function acpPlace(
  server: MockModelServer,
  scenario: string,
): { env: Record<string, string>; cwd: string; root: string } {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "catherd-rec-")));
  const cwd = path.join(root, "work");
  fs.mkdirSync(cwd, { recursive: true });
  const env = CLIS.gemini.configure({ home: root, baseUrl: server.baseUrl(scenario) });
  return { env: { ...env, GEMINI_API_KEY: "dummy" }, cwd, root };
}

export const isResponse = (id: unknown) => (m: Record<string, unknown>) =>
  m.id === id && m.method === undefined;
export const isUpdate = (kind: string) => (m: Record<string, unknown>) =>
  m.method === "session/update" &&
  (m.params as { update?: { sessionUpdate?: string } } | undefined)?.update?.sessionUpdate === kind;
export const isMethod = (method: string) => (m: Record<string, unknown>) => m.method === method;
