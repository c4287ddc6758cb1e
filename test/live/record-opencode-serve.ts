import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { CLI_MAIN } from "../helpers/folders.js";
import { waitFor } from "../helpers/wait.js";
import { binOf, CLIS } from "./harness.js";
import type { MockModelServer } from "./mock-model-server.js";

// How test/fixtures/recorded/opencode-serve/ was made: the pinned opencode (scripts/live/install-clis.sh)
// run as `opencode serve` by catherd's built bridge (dist/bin/opencode-bridge.js), against the mock
// model's `steer` scenario (and failure scenarios), fed ops the way catherd's opencode protocol writes
// them. Each exchange is `<name>.in.jsonl` (the ops written, in order) and `<name>.out.jsonl` (the
// bridge's stdout: its own lines and the server's events as opencode sent them). The temporary folders
// in the lines are replaced by /home/dev/rec and the mock's port by PORT, as in the other recorded streams.
// Run: CATHERD_RECORD_OPENCODE_SERVE=<out dir> npm run record:opencode-serve.

/** The built bridge program. */
export const BRIDGE = path.join(path.dirname(CLI_MAIN), "opencode-bridge.js");

/** One bridge run: the ops written and the lines read. */
export class BridgeRun {
  readonly written: string[] = [];
  readonly read: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;
  private buffer = "";

  constructor(args: readonly string[], place: { env: Record<string, string>; cwd: string }) {
    this.child = spawn(process.execPath, [BRIDGE, binOf("opencode"), ...args], {
      cwd: place.cwd,
      env: { ...process.env, ...place.env },
      stdio: ["pipe", "pipe", "ignore"],
    });
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
    this.child.stdout?.setEncoding("utf8");
    this.child.stdout?.on("data", (chunk: string) => {
      this.buffer += chunk;
      const lines = this.buffer.split("\n");
      this.buffer = lines.pop() ?? "";
      this.read.push(...lines.filter((l) => l.length > 0));
    });
  }

  send(op: Record<string, unknown>): void {
    const line = JSON.stringify(op);
    this.written.push(line);
    this.child.stdin?.write(`${line}\n`);
  }

  /** The index of the first line read from `after` on that `match` accepts, waited for. */
  async next(what: string, match: (m: Record<string, unknown>) => boolean, after = 0): Promise<number> {
    return waitFor(
      what,
      () => {
        const i = this.messages().findIndex((m, j) => j >= after && match(m));
        return i >= 0 ? i : undefined;
      },
      120_000,
    );
  }

  messages(): Record<string, unknown>[] {
    return this.read.map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  /** Writes `end` and waits for the bridge's exit (killed after 30 s). */
  async end(): Promise<void> {
    this.send({ op: "end", id: "end" });
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 30_000);
    await this.exited;
    clearTimeout(timer);
  }

  save(dir: string, name: string, clean: (line: string) => string): void {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${name}.in.jsonl`), `${this.written.map(clean).join("\n")}\n`);
    fs.writeFileSync(path.join(dir, `${name}.out.jsonl`), `${this.read.map(clean).join("\n")}\n`);
  }
}

/** opencode's private home pointed at the mock's `scenario` (the live suite's config), and a work folder. */
export function servePlace(server: MockModelServer, scenario: string) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "catherd-rec-"));
  const cwd = path.join(root, "work");
  fs.mkdirSync(cwd, { recursive: true });
  const env = CLIS.opencode.configure({ home: root, baseUrl: server.baseUrl(scenario) });
  const port = new URL(server.origin).port;
  const clean = (line: string) => line.replaceAll(root, "/home/dev/rec").replaceAll(`:${port}`, ":PORT");
  return { env, cwd, root, clean };
}

/** Matchers of the bridge's lines. */
export const lineOf = (type: string) => (m: Record<string, unknown>) => m.type === type;
export const toolIs = (status: string) => (m: Record<string, unknown>) => {
  const part = (m.properties as { part?: { type?: string; state?: { status?: string } } } | undefined)?.part;
  return m.type === "message.part.updated" && part?.type === "tool" && part.state?.status === status;
};
