import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { CLI_MAIN, readJson } from "../helpers/folders.js";
import { waitFor } from "../helpers/wait.js";
import { binOf, CLIS, checkPrerequisites, codexConfigToml, dispatcherEnv, type LiveCli } from "./harness.js";
import {
  FINAL_MARKER,
  type MockModelServer,
  SCRIPTED_MARKER,
  startMockModelServer,
} from "./mock-model-server.js";

// The whole loop with real programs on both sides (issue 13): a real orchestrator CLI, configured with
// `catherd mcp` as its MCP server exactly as the README says, whose model (the mock) calls catherd's
// dispatch, then wait, then result; the worker is another real CLI on its own mock script. The
// orchestrator's final answer must hold the worker's reply, and nothing may be left running.

type Orchestrator = "claude" | "codex";

interface LoopRun {
  root: string;
  catherdHome: string;
  server: MockModelServer;
  orchestrator: ChildProcess | null;
}

let current: LoopRun | null = null;

afterEach(async (context) => {
  const run = current;
  current = null;
  if (run === null) return;
  const pid = run.orchestrator?.pid;
  if (pid !== undefined) {
    try {
      process.kill(-pid, "SIGKILL"); // its own process group, created by this test
    } catch {
      // gone
    }
  }
  for (const p of processesOfHome(run.catherdHome)) {
    try {
      process.kill(p, "SIGKILL");
    } catch {
      // gone
    }
  }
  await run.server.close();
  const failed = context.task.result?.state === "fail";
  if (failed || process.env.CATHERD_LIVE_KEEP === "1") process.stderr.write(`kept ${run.root}\n`);
  else fs.rmSync(run.root, { recursive: true, force: true });
});

/** Pids of every process whose environment names this CATHERD_HOME: the MCP server, supervisors, workers. */
function processesOfHome(catherdHome: string): number[] {
  const mark = `CATHERD_HOME=${catherdHome}\0`;
  const pids: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2)[0] === "Z") continue;
      if (`${fs.readFileSync(`/proc/${entry}/environ`, "utf8")}\0`.includes(mark)) pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

/** A process as a failure message shows it: its command line, and whether it carries CATHERD_DISPATCH. */
function commandLineOf(pid: number): string {
  try {
    const dispatch = /(?:^|\0)(CATHERD_DISPATCH=[^\0]*)/.exec(
      fs.readFileSync(`/proc/${pid}/environ`, "utf8"),
    );
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").slice(0, 200);
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const [ppid, pgid, sid] = stat.slice(stat.lastIndexOf(")") + 4).split(" ");
    return `${cmdline} (ppid ${ppid}, pgid ${pgid}, sid ${sid}, ${dispatch?.[1] ?? "no CATHERD_DISPATCH"})`;
  } catch {
    return "(gone)";
  }
}

/** The worker each orchestrator dispatches: the other CLI. */
const WORKER: Record<Orchestrator, LiveCli> = { claude: "codex", codex: "claude" };

/** How the MCP server is started: the built catherd, `catherd mcp`. */
const MCP_COMMAND = { command: process.execPath, args: [CLI_MAIN, "mcp"] };

const PROMPT = "Dispatch a worker through catherd, wait for it, and report its reply.";

/** The argv and environment of the orchestrator, registered with catherd as the README says. */
function orchestratorSetup(
  cli: Orchestrator,
  home: string,
  baseUrl: string,
  base: NodeJS.ProcessEnv,
): { args: string[]; env: NodeJS.ProcessEnv } {
  if (cli === "claude") {
    const config = { mcpServers: { catherd: { ...MCP_COMMAND, alwaysLoad: true } } };
    return {
      args: [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        PROMPT,
        "--mcp-config",
        JSON.stringify(config),
        "--strict-mcp-config",
        "--allowedTools",
        "mcp__catherd",
      ],
      env: {
        ...base,
        HOME: home,
        ANTHROPIC_BASE_URL: baseUrl,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
      },
    };
  }
  const codexHome = path.join(home, "codex-home");
  fs.mkdirSync(codexHome, { recursive: true });
  fs.writeFileSync(
    path.join(codexHome, "config.toml"),
    codexConfigToml(baseUrl, [
      "[mcp_servers.catherd]",
      `command = ${JSON.stringify(MCP_COMMAND.command)}`,
      `args = ${JSON.stringify(MCP_COMMAND.args)}`,
      // Codex passes an MCP server only HOME, LANG, PATH, SHELL, TERM unless named here (README).
      'env_vars = ["CATHERD_HOME", "CATHERD_RUN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"]',
      "required = true",
      "tool_timeout_sec = 330",
      'default_tools_approval_mode = "approve"',
      "",
    ]),
  );
  return {
    args: ["exec", "--json", "--skip-git-repo-check", PROMPT],
    env: { ...base, CODEX_HOME: codexHome },
  };
}

/** The orchestrator's final answer from its event stream (claude: result.result; codex: its last message). */
function finalAnswer(cli: Orchestrator, stdout: string): string | null {
  let answer: string | null = null;
  for (const line of stdout.split("\n")) {
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (cli === "claude" && event.type === "result" && typeof event.result === "string")
      answer = event.result;
    const item = event.item as { type?: string; text?: string } | undefined;
    if (cli === "codex" && event.type === "item.completed" && item?.type === "agent_message") {
      answer = item.text ?? null;
    }
  }
  return answer;
}

function defineLoop(orchestrator: Orchestrator): void {
  const worker = WORKER[orchestrator];
  describe(`${orchestrator} orchestrating through catherd mcp, ${worker} working`, () => {
    beforeAll(() => {
      checkPrerequisites(orchestrator);
      checkPrerequisites(worker);
    });

    it("dispatches, waits and collects through catherd's tools alone; the answer holds the worker's reply", async () => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), `catherd-live-mcp-${orchestrator}-`));
      const catherdHome = path.join(root, "catherd-home");
      const work = path.join(root, "work");
      fs.mkdirSync(work, { recursive: true });
      const server = await startMockModelServer();
      current = { root, catherdHome, server, orchestrator: null };

      const workerHome = path.join(root, "worker");
      fs.mkdirSync(workerHome, { recursive: true });
      const setup = CLIS[worker];
      const workerEnv = setup.configure({ home: workerHome, baseUrl: server.baseUrl("text") });
      const orchestratorUrl = server.script(orchestrator, {
        server: "catherd",
        calls: [
          {
            tool: "dispatch",
            input: {
              backend: setup.backend,
              name: "worker",
              bin: binOf(worker),
              cwd: work,
              access: "full",
              brief: "Say hello.",
              idle: "60s",
              wall: "3m",
              killGrace: "3s",
              ...(setup.model === null ? {} : { model: setup.model }),
              env: Object.entries(workerEnv).map(([k, v]) => `${k}=${v}`),
            },
          },
          { tool: "wait", input: { names: ["worker"], timeoutS: 120 } },
          { tool: "result", input: { name: "worker" } },
        ],
      });
      const orchestratorHome = path.join(root, "orchestrator");
      fs.mkdirSync(orchestratorHome, { recursive: true });
      const { args, env } = orchestratorSetup(
        orchestrator,
        orchestratorHome,
        orchestratorUrl,
        dispatcherEnv(catherdHome),
      );

      const child = spawn(binOf(orchestrator), args, {
        cwd: work,
        env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      current.orchestrator = child;
      let stdout = "";
      let stderr = "";
      child.stdout?.on("data", (d: Buffer) => {
        stdout += d.toString();
      });
      child.stderr?.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const exit = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => child.kill("SIGKILL"), 150_000);
        child.once("close", (code) => {
          clearTimeout(timer);
          resolve(code);
        });
      });
      // Kept with the folder of a failed test (or every test with CATHERD_LIVE_KEEP=1).
      fs.writeFileSync(path.join(root, "orchestrator.stdout"), stdout);
      fs.writeFileSync(path.join(root, "orchestrator.stderr"), stderr);
      const requests = server.requests
        .filter((r) => r.scenario === `script-${orchestrator}`)
        .map((r) => `${r.answer}${r.note === undefined ? "" : ` ${r.note}`}`);
      const context = `exit ${exit}\n--- stdout (tail)\n${stdout.slice(-3000)}\n--- stderr (tail)\n${stderr.slice(-3000)}\n--- orchestrator requests\n${requests.join("\n")}`;

      expect(exit, context).toBe(0);
      const calls = requests.filter((r) => r.startsWith("tool-call"));
      expect(calls, context).toEqual([
        "tool-call mcp__catherd.dispatch",
        "tool-call mcp__catherd.wait",
        "tool-call mcp__catherd.result",
      ]);
      const answer = finalAnswer(orchestrator, stdout);
      expect(answer, context).toContain(SCRIPTED_MARKER);
      expect(answer, context).toContain(`${FINAL_MARKER}: hello from the mock`);

      const names = path.join(catherdHome, "runs", "default", "dispatches", "worker");
      const dir = path.join(names, fs.readFileSync(path.join(names, "latest"), "utf8").trim());
      expect(readJson(path.join(dir, "record.json")), context).toMatchObject({
        backend: setup.backend,
        status: "ok",
        reply: `${FINAL_MARKER}: hello from the mock`,
      });

      // Nothing left: no process of this CATHERD_HOME (server, supervisor, worker), nor of the orchestrator.
      await waitFor(
        "every process of the run to be gone",
        () => (processesOfHome(catherdHome).length === 0 ? true : undefined),
        10_000,
      ).catch((error: unknown) => {
        const left = processesOfHome(catherdHome).map((p) => `${p} ${commandLineOf(p)}`);
        throw new Error(`${String(error)}: ${left.join("; ")}\n${context}`);
      });
      // The orchestrator's group is gone too: its last members may take a moment to be reaped (an
      // orphan is a zombie until init collects it), so it is waited for, with a deadline.
      await waitFor(
        "the orchestrator's process group to be gone",
        () => {
          try {
            process.kill(-(child.pid as number), 0);
            return undefined;
          } catch {
            return true;
          }
        },
        10_000,
      );
    });
  });
}

defineLoop("claude");
defineLoop("codex");
