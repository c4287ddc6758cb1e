import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import * as fs from "node:fs";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { CLI_MAIN } from "./folders.js";
import { connectClient, type McpSession } from "./mcp.js";
import { isAlive } from "./processes.js";
import { waitFor } from "./wait.js";

// `catherd mcp` as a real process: through the SDK's StdioClientTransport, or through a bare JSON-RPC
// client on its pipes when a test needs the exit status or to cut the pipe at an exact moment.

const servers = new Set<number>();

/** Kills (by pid) every server a test started that is still running; says how many there were. */
export function reapServers(): number {
  let left = 0;
  for (const pid of servers) {
    if (isAlive(pid)) {
      left += 1;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
  }
  servers.clear();
  return left;
}

/** The SDK's client on `catherd mcp` over stdio, and the server's pid. */
export async function stdioSession(env: NodeJS.ProcessEnv): Promise<McpSession & { pid: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_MAIN, "mcp"],
    env: env as Record<string, string>,
    stderr: "pipe",
  });
  const session = await connectClient(transport, async () => {});
  const pid = transport.pid;
  if (pid === null) throw new Error("catherd mcp did not start");
  servers.add(pid);
  return { ...session, pid };
}

/** A server on bare pipes: JSON-RPC messages in, lines out. */
export interface RawServer {
  child: ChildProcessWithoutNullStreams;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  send(message: Record<string, unknown>): void;
  /** The first message from the server that `match` accepts (waiting for it with a deadline). */
  receive(
    match: (message: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** Whether a message `match` accepts has come already. */
  received(match: (message: Record<string, unknown>) => boolean): boolean;
  stderr(): string;
}

/** Starts `catherd mcp` and completes the initialize handshake. */
export async function rawServer(env: NodeJS.ProcessEnv): Promise<RawServer> {
  const child = spawn(process.execPath, [CLI_MAIN, "mcp"], { env, stdio: ["pipe", "pipe", "pipe"] });
  if (child.pid !== undefined) servers.add(child.pid);
  const messages: Record<string, unknown>[] = [];
  let buffered = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
      messages.push(JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>);
      buffered = buffered.slice(nl + 1);
    }
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  child.stdin.on("error", () => {});
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>(
    (resolve) => {
      child.once("exit", (code, signal) => resolve({ code, signal, at: Date.now() }));
    },
  );
  const server: RawServer = {
    child,
    exited,
    send: (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`),
    receive: (match, timeoutMs = 20_000) =>
      waitFor(`a message from catherd mcp (stderr: ${stderr})`, () => messages.find(match), timeoutMs),
    received: (match) => messages.some(match),
    stderr: () => stderr,
  };
  server.send({
    id: 0,
    method: "initialize",
    params: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "catherd-raw-test", version: "1" },
    },
  });
  await server.receive((m) => m.id === 0);
  server.send({ method: "notifications/initialized" });
  return server;
}

/** Whether process `pid` holds an inotify watch on the inode of `path` (fs.watch on a folder, on Linux). */
export function watchesInode(pid: number, path: string): boolean {
  const ino = fs.statSync(path).ino.toString(16);
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fdinfo`);
  } catch {
    return false;
  }
  return fds.some((fd) => {
    try {
      return new RegExp(`^inotify wd:\\S+ ino:${ino} `, "m").test(
        fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8"),
      );
    } catch {
      return false;
    }
  });
}
