import { randomBytes } from "node:crypto";
import * as readline from "node:readline";
import { BRIDGE_LINE, parseBridgeOp } from "../../domain/steering/opencode-bridge-wire.js";
import { Bridge, type Out } from "./bridge.js";
import { type BridgeArgs, parseBridgeArgs } from "./bridge-args.js";
import { followEvents } from "./event-stream.js";
import { ServeClient } from "./serve-client.js";
import { type ServeProcess, startServe } from "./serve-process.js";

// catherd's opencode bridge (the program dist/bin/opencode-bridge.js, specs/steering.md "The seam"): the
// agent process of a steerable opencode dispatch. Its stdin is the dispatch's channel, one op a line; its
// stdout the stream file. It starts `opencode serve` as its child, opens the session, and carries the ops
// out over HTTP until an `end` op, the end of its input, a signal, or its server's death; it stops the
// server before it exits: 0 after an end, 143 on SIGTERM, 1 when it cannot go on (a `bridge.failed` line).

/** How long the server may take to say it listens: seconds usually, up to ~50 s on a loaded machine. */
const SERVE_START_MS = 120_000;
/** How often the bridge polls the server's status and asks. */
const POLL_MS = 300;

const out: Out = (line) => {
  process.stdout.write(`${JSON.stringify(line)}\n`);
};

/** Runs the bridge; resolves with its exit code. */
export async function runBridge(argv: readonly string[]): Promise<number> {
  let args: BridgeArgs;
  try {
    args = parseBridgeArgs(argv);
  } catch (error) {
    out({ type: BRIDGE_LINE.failed, message: `catherd's opencode bridge: ${(error as Error).message}` });
    return 1;
  }
  const password = randomBytes(24).toString("base64url");
  const started = Date.now();
  let serve: ServeProcess;
  try {
    serve = await startServe({
      bin: args.bin,
      args: args.serveArgs,
      env: serveEnv(args, password),
      cwd: process.cwd(),
      deadlineMs: SERVE_START_MS,
    });
  } catch (error) {
    out({ type: BRIDGE_LINE.failed, message: (error as Error).message });
    return 1;
  }
  out({ type: BRIDGE_LINE.server, ms: Date.now() - started });
  const code = await converse(new ServeClient(serve.url, password), args, serve);
  await serve.stop();
  return code;
}

function serveEnv(args: BridgeArgs, password: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, OPENCODE_SERVER_PASSWORD: password };
  if (args.permission !== null) env.OPENCODE_PERMISSION = args.permission;
  return env;
}

/** The conversation, from the session's opening to what ends it; its exit code. */
async function converse(client: ServeClient, args: BridgeArgs, serve: ServeProcess): Promise<number> {
  const bridge = new Bridge(client, args, out);
  const stopped = new AbortController();
  const ended = new Promise<number>((resolve) => {
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
      process.once(signal, () => {
        stopped.abort();
        resolve(143);
      });
    }
    void serve.exited.then(({ code, signal }) => {
      // The server's end the bridge asked for is no failure.
      if (stopped.signal.aborted) return;
      out({ type: BRIDGE_LINE.failed, message: `opencode serve exited (${signal ?? `code ${code}`})` });
      resolve(1);
    });
  });
  try {
    await Promise.race([bridge.open(), ended]);
  } catch (error) {
    stopped.abort();
    out({ type: BRIDGE_LINE.failed, message: (error as Error).message });
    return 1;
  }
  void followEvents(client, (event) => bridge.onEvent(event), stopped.signal);
  const poller = setInterval(() => void bridge.poll(), POLL_MS);
  const code = await Promise.race([readOps(bridge, stopped), ended]);
  clearInterval(poller);
  return code;
}

/** Reads the ops in order, each carried out before the next; 0 at an `end` op or the end of the input. */
async function readOps(bridge: Bridge, stopped: AbortController): Promise<number> {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.trim().length === 0) continue;
    const op = parseBridgeOp(line);
    if (op === null) {
      process.stderr.write(`catherd's opencode bridge: not an op, ignored: ${line.slice(0, 200)}\n`);
      continue;
    }
    if (op.op === "end") stopped.abort();
    await bridge.perform(op);
    if (op.op === "end") return 0;
  }
  stopped.abort();
  return 0;
}
