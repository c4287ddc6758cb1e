import { type ChildProcess, spawn } from "node:child_process";
import * as net from "node:net";
import * as readline from "node:readline";

// `opencode serve` as the bridge's child: on loopback, on a port picked free here (its own `--port 0`
// tries 4096 first, which another dispatch's server may hold), with a password only the bridge knows.
// It stays in the bridge's process group (and so in the dispatch's group and cgroup): whatever ends the
// dispatch ends it too. It says it is up with a line "opencode server listening on http://HOST:PORT".

/** What starts the server: its executable, arguments after `serve`, environment and folder. */
export interface ServeStart {
  bin: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** How long it may take to say it listens (opencode takes seconds, and far more on a loaded machine). */
  deadlineMs: number;
}

/** A running server: its base URL, how it exits, and how to stop it. */
export interface ServeProcess {
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

const LISTENING = /listening on (http:\/\/[^\s]+)/;
/** How long the server has after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 5_000;

/** A loopback port nobody listens on now (the server takes it a moment later). */
export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => resolve());
  });
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no loopback port to listen on");
  return address.port;
}

/** Starts the server and waits for its "listening on" line, within the deadline; its output goes to stderr. */
export async function startServe(start: ServeStart): Promise<ServeProcess> {
  const port = await freePort();
  const args = ["serve", "--hostname", "127.0.0.1", "--port", String(port), ...start.args];
  const child = spawn(start.bin, args, { cwd: start.cwd, env: start.env, stdio: ["ignore", "pipe", "pipe"] });
  child.stderr?.pipe(process.stderr, { end: false });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
    child.once("error", () => resolve({ code: 127, signal: null }));
  });
  const url = await listeningUrl(child, exited, start.deadlineMs);
  return { url, exited, stop: () => stopServe(child, exited) };
}

function listeningUrl(
  child: ChildProcess,
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>,
  deadlineMs: number,
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const timer = setTimeout(() => {
      void stopServe(child, exited);
      reject(new Error(`opencode serve did not say it listens within ${Math.round(deadlineMs / 1000)} s`));
    }, deadlineMs);
    lines.on("line", (line) => {
      process.stderr.write(`${line}\n`);
      const m = LISTENING.exec(line);
      if (m?.[1] === undefined) return;
      clearTimeout(timer);
      resolve(m[1].replace(/\/$/, ""));
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`opencode serve exited before it listened (${signal ?? `code ${code}`})`));
    });
  });
}

/** SIGTERM, a grace, then SIGKILL; resolves once the server has exited. */
async function stopServe(
  child: ChildProcess,
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}
