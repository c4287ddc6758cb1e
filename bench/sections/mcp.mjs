// @ts-check
// The MCP `dispatch` tool's latency with the server already running (an orchestrator's usual path): from
// the request written to the server's stdin to its answer, interleaved with `node -e ''`. The server admits
// in its own process and gives the folder to the standby supervisor it holds ready (or starts one); the
// answer comes once supervisor.json names it.
import { spawn } from "node:child_process";
import * as path from "node:path";
import { finish } from "../lib/catherd.mjs";
import { AGENT, BASE_ENV, CLI, REPS } from "../lib/config.mjs";
import { timed } from "../lib/spawn.mjs";
import { fmt, stats } from "../lib/stats.mjs";
import { sleep } from "../lib/wait.mjs";

/** A `catherd mcp` server on pipes: one JSON-RPC request at a time, answered by id. */
class McpServer {
  /** @param {string} node @param {string} home @param {string} cwd */
  constructor(node, home, cwd) {
    this.child = spawn(node, [CLI, "mcp"], {
      env: { ...BASE_ENV, CATHERD_HOME: home },
      cwd,
      stdio: ["pipe", "pipe", "ignore"],
    });
    /** @type {Map<number, (message: any) => void>} */
    this.waiting = new Map();
    this.nextId = 1;
    let buffered = "";
    this.child.stdout.on("data", (/** @type {Buffer} */ chunk) => {
      buffered += chunk.toString("utf8");
      for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
        const message = JSON.parse(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        this.waiting.get(message.id)?.(message);
        this.waiting.delete(message.id);
      }
    });
  }

  /**
   * Sends one request; resolves to its answer and how long it took (ms, request written → answer read).
   * @param {string} method @param {Record<string, unknown>} params
   * @returns {Promise<{ message: any, ms: number }>}
   */
  request(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} within 60 s`)), 60_000);
      const t0 = performance.now();
      this.waiting.set(id, (message) => {
        clearTimeout(timer);
        resolve({ message, ms: performance.now() - t0 });
      });
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  }

  /** @param {string} method */
  notify(method) {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method })}\n`);
  }

  close() {
    this.child.stdin.end();
    this.child.kill("SIGTERM");
  }
}

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchMcp(ctx) {
  console.log("\n[mcp] the dispatch tool of a running `catherd mcp` (exec backend, quiet agent)");
  const home = ctx.scratch.home("mcp");
  const marks = ctx.scratch.marks("mcp");
  const server = new McpServer(ctx.node, home, ctx.scratch.workDir);
  if (server.child.pid !== undefined) ctx.reaper.own(server.child.pid);
  /** @type {import("../lib/catherd.mjs").Dispatched[]} */
  const infos = [];
  /** @type {number[]} */ const node = [];
  /** @type {number[]} */ const latency = [];
  try {
    await server.request("initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "catherd-bench", version: "1" },
    });
    server.notify("notifications/initialized");
    for (let i = -REPS.warm; i < REPS.dispatch; i++) {
      const n = await timed(ctx.node, ["-e", ""]);
      const { message, ms } = await server.request("tools/call", {
        name: "dispatch",
        arguments: {
          backend: "exec",
          name: `mcp-${i + REPS.warm}`,
          idle: "1m",
          wall: "1m",
          args: [AGENT.quiet, path.join(marks, `m-${i + REPS.warm}`)],
        },
      });
      const info = message.result?.structuredContent?.dispatched;
      if (message.result?.isError === true || info === undefined) {
        throw new Error(`the dispatch tool failed: ${JSON.stringify(message).slice(0, 400)}`);
      }
      ctx.reaper.ownDispatch(info.dispatchId);
      ctx.reaper.own(info.supervisorPid);
      infos.push(info);
      // The server starts its next standby once it has answered (src/dispatch/start/standby-reserve.ts):
      // let that start-up pass, so that the `node -e ''` measured beside the next call is not slowed by it.
      await sleep(400);
      if (i < 0) continue;
      node.push(n.ms);
      latency.push(ms);
    }
  } finally {
    server.close();
    await finish(ctx, infos);
  }
  const nodeStart = stats(node).median;
  ctx.report.row({
    key: "mcp.dispatch",
    what: "MCP dispatch tool, server running (request → answer)",
    unit: "ms",
    samples: latency,
    baseline: { name: "node -e ''", value: nodeStart },
    target: { text: "≤ 1.5× bare node start", ok: (_s, ratio) => ratio !== null && ratio <= 1.5 },
    note: `node -e '' median ${fmt(nodeStart)} ms in the same loop`,
  });
}
