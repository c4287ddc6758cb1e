import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeAll, beforeEach } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import { findByDispatchVariable } from "../../src/infra/sweep.js";
import { dispatchedOf, dispatchFolders, runCli } from "../helpers/cli.js";
import { CLI_MAIN, readJson, SUPERVISOR_MAIN } from "../helpers/folders.js";
import { isAlive, reapDispatch } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait.js";
import { type MockModelServer, type Scenario, startMockModelServer } from "./mock-model-server.js";

// The live contract suite's plumbing: where the real CLIs are, how each one is pointed at the mock model
// server through its own configuration, how a dispatch is started through the built `catherd dispatch`,
// waited for (files polled with deadlines) and reaped. specs/live-suite.md describes it.

export type LiveCli = "codex" | "claude" | "gemini" | "opencode";

/** The cache scripts/live/install-clis.sh installs into. */
export const LIVE_CACHE = process.env.CATHERD_LIVE_CACHE ?? path.join(os.homedir(), ".cache", "catherd-live");

export function binOf(cli: LiveCli): string {
  return path.join(LIVE_CACHE, "node_modules", ".bin", cli);
}

/** Throws a readable error when the CLIs or catherd's build are missing. */
export function checkPrerequisites(cli: LiveCli): void {
  if (!fs.existsSync(CLI_MAIN) || !fs.existsSync(SUPERVISOR_MAIN)) {
    throw new Error(`catherd is not built (${CLI_MAIN} missing): run npm run build`);
  }
  if (!fs.existsSync(binOf(cli))) {
    throw new Error(`${binOf(cli)} is missing: run scripts/live/install-clis.sh (or npm run test:live)`);
  }
}

/** What the test gives a CLI's configuration: its private folder and the scenario's base URL. */
interface SetupInput {
  /** A private folder for this CLI's HOME, config and state. */
  home: string;
  /** http://127.0.0.1:PORT/s/<scenario> */
  baseUrl: string;
}

interface CliSetup {
  backend: "codex" | "claude-code" | "gemini" | "opencode";
  model: string | null;
  /** Writes config files under `home`; returns the --env overrides for the agent. */
  configure(input: SetupInput): Record<string, string>;
  /** Arguments after `--` (passed through to the CLI). */
  extraArgs(input: SetupInput): string[];
}

/**
 * Dummy keys go into the dispatcher's own environment, which the agent inherits (specs/dispatch.md §4: secrets
 * belong in the inherited environment, not in spec.json). The mock server ignores them.
 */
const INHERITED_KEYS: Record<string, string> = {
  MOCK_API_KEY: "live-dummy",
  ANTHROPIC_API_KEY: "live-dummy",
  GEMINI_API_KEY: "live-dummy",
};

export const CLIS: Record<LiveCli, CliSetup> = {
  codex: {
    backend: "codex",
    model: "mock-model",
    configure({ home, baseUrl }) {
      // CODEX_HOME with a config.toml: a model provider at the mock (codexConfigToml says why its retries).
      const codexHome = path.join(home, "codex-home");
      fs.mkdirSync(codexHome, { recursive: true });
      fs.writeFileSync(path.join(codexHome, "config.toml"), codexConfigToml(baseUrl));
      // A HOME of its own too, as the other CLIs have: codex runs its tools in a login shell
      // (`bash -lc`), which would read the machine's ~/.profile and ~/.bashrc — on this image a pyenv
      // rehash that waits a minute for a lock a killed shell left behind.
      const userHome = path.join(home, "user-home");
      fs.mkdirSync(userHome, { recursive: true });
      return { CODEX_HOME: codexHome, HOME: userHome };
    },
    extraArgs: () => [],
  },
  claude: {
    backend: "claude-code",
    model: null,
    configure({ home, baseUrl }) {
      const claudeHome = path.join(home, "claude-home");
      fs.mkdirSync(claudeHome, { recursive: true });
      return {
        HOME: claudeHome,
        ANTHROPIC_BASE_URL: baseUrl,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        // --dangerously-skip-permissions (what --access full gives) is refused as root without it.
        IS_SANDBOX: "1",
        // 5 > the supervisor's 3 consecutive retries: the supervisor, not claude, ends a provider outage.
        CLAUDE_CODE_MAX_RETRIES: "5",
        // Per-request timeout (default 300 s). Longer than the hang test's --idle, so that a request that
        // never answers shows as silence (idle-timeout) and not as timeouts and retries.
        API_TIMEOUT_MS: "60000",
      };
    },
    extraArgs: () => [],
  },
  gemini: {
    backend: "gemini",
    model: "gemini-2.5-flash",
    configure({ home, baseUrl }) {
      // Without security.auth.selectedType gemini exits 41 in headless mode.
      const geminiHome = path.join(home, "gemini-home");
      fs.mkdirSync(path.join(geminiHome, ".gemini"), { recursive: true });
      fs.writeFileSync(
        path.join(geminiHome, ".gemini", "settings.json"),
        JSON.stringify({
          security: { auth: { selectedType: "gemini-api-key" } },
          privacy: { usageStatisticsEnabled: false },
        }),
      );
      return { HOME: geminiHome, GOOGLE_GEMINI_BASE_URL: baseUrl, GEMINI_CLI_NO_RELAUNCH: "true" };
    },
    extraArgs: () => [],
  },
  opencode: {
    backend: "opencode",
    model: "mock/mock-model",
    configure({ home, baseUrl }) {
      const h = path.join(home, "opencode-home");
      fs.mkdirSync(h, { recursive: true });
      const config = {
        $schema: "https://opencode.ai/config.json",
        autoupdate: false,
        share: "disabled",
        provider: {
          mock: {
            npm: "@ai-sdk/openai-compatible",
            name: "catherd live mock",
            options: { baseURL: `${baseUrl}/v1`, apiKey: "live-dummy" },
            models: {
              "mock-model": { name: "mock-model", tool_call: true, limit: { context: 200000, output: 8192 } },
            },
          },
        },
        model: "mock/mock-model",
      };
      return {
        HOME: h,
        XDG_CONFIG_HOME: path.join(h, ".config"),
        XDG_DATA_HOME: path.join(h, ".local", "share"),
        XDG_CACHE_HOME: path.join(h, ".cache"),
        XDG_STATE_HOME: path.join(h, ".local", "state"),
        OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
        OPENCODE_DISABLE_AUTOUPDATE: "1",
        OPENCODE_DISABLE_MODELS_FETCH: "1",
        OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      };
    },
    extraArgs: () => [],
  },
};

/**
 * The dispatcher's environment: this process's, without anything that would point a CLI elsewhere
 * (provider keys and endpoints, a user's CLI homes, proxies), plus the isolated CATHERD_HOME and the
 * dummy keys.
 */
export function dispatcherEnv(catherdHome: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  const dropped =
    /^(ANTHROPIC_|CLAUDE|GEMINI_|GOOGLE_|OPENAI_|CODEX_|OPENCODE|CATHERD_|XDG_)|^(https?|all)_proxy$/i;
  for (const [key, value] of Object.entries(process.env)) {
    if (!dropped.test(key)) env[key] = value;
  }
  return {
    ...env,
    ...INHERITED_KEYS,
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
    NO_COLOR: "1",
    CATHERD_HOME: catherdHome,
  };
}

/**
 * A claude.ai subscription login against the mock, which Claude Code needs before it reads the
 * `anthropic-ratelimit-unified-*` headers (with an API key it ignores them): an OAuth token in
 * CLAUDE_CODE_OAUTH_TOKEN — a made-up one, which only the mock ever sees — inherited as secrets are, and
 * no API key. With it and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, Claude Code 2.1.197 calls nothing but
 * the Messages API; the mock is its HTTPS proxy too, so that a call to anywhere else is refused and
 * logged as unexpected instead of leaving loopback.
 */
export function subscriptionLogin(origin: string): {
  inherited: NodeJS.ProcessEnv;
  env: Record<string, string>;
} {
  return {
    inherited: { CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-catherd-live-not-a-token" },
    env: { HTTPS_PROXY: origin, https_proxy: origin },
  };
}

export interface LiveDispatch {
  cli: LiveCli;
  scenario: Scenario | string;
  dispatchId: string;
  dir: string;
  supervisorPid: number;
  root: string;
}

/** Everything one test created, so that afterEach can reap it whatever happened. */
export class LiveRun {
  readonly dispatches: LiveDispatch[] = [];
  readonly roots: string[] = [];

  /** `sandboxed`: every dispatch in `--sandbox files+net`, the mock model's loopback port allowed. */
  constructor(
    readonly server: MockModelServer,
    readonly options: { sandboxed?: boolean } = {},
  ) {}

  /** Dispatches `cli` on `scenario` through the built `catherd dispatch`, and returns at once. */
  async dispatch(
    cli: LiveCli,
    scenario: Scenario | string,
    options: {
      /** More `dispatch` flags (--max-tokens 50000). */
      flags?: string[];
      idle: string;
      wall?: string;
      killGrace?: string;
      thread?: string;
      /**
       * A second CLI on a scenario of its own, given as `--fallback`: its configuration joins the --env
       * values (the ladder repeats them for every attempt) and its executable is named by its CATHERD_<B>_BIN.
       */
      fallback?: { cli: LiveCli; scenario: Scenario };
      /** claude only: a claude.ai subscription login against the mock, not an API key (subscriptionLogin). */
      subscription?: boolean;
    },
  ): Promise<LiveDispatch> {
    const label = scenario.replace(/[^A-Za-z0-9-]/g, "-");
    const root = fs.mkdtempSync(path.join(os.tmpdir(), `catherd-live-${cli}-${label}-`));
    this.roots.push(root);
    const catherdHome = path.join(root, "catherd-home");
    const work = path.join(root, "work");
    const cliHome = path.join(root, "cli");
    fs.mkdirSync(work, { recursive: true });
    fs.mkdirSync(cliHome, { recursive: true });
    const setup = CLIS[cli];
    const input = { home: cliHome, baseUrl: this.server.baseUrl(scenario) };
    const fallback = options.fallback;
    const fallbackEnv =
      fallback === undefined
        ? {}
        : CLIS[fallback.cli].configure({ home: cliHome, baseUrl: this.server.baseUrl(fallback.scenario) });
    const login = options.subscription === true ? subscriptionLogin(this.server.origin) : null;
    const env = { ...fallbackEnv, ...setup.configure(input), ...login?.env };
    const args = [
      "dispatch",
      "--backend",
      setup.backend,
      "--name",
      `${cli}-${label}`,
      "--bin",
      binOf(cli),
      "--cwd",
      work,
      "--access",
      "full",
      "--idle",
      options.idle,
      "--wall",
      options.wall ?? "3m",
      "--kill-grace",
      options.killGrace ?? "3s",
      "--brief",
      "Run the scripted command, then report what it printed.",
      "--json",
    ];
    if (setup.model !== null) args.push("--model", setup.model);
    args.push(...(options.flags ?? []));
    if (this.options.sandboxed === true) {
      args.push(
        "--sandbox",
        "files+net",
        "--allow-net",
        `127.0.0.1:${new URL(this.server.baseUrl(scenario)).port}`,
      );
    }
    if (options.thread !== undefined) args.push("--thread", options.thread);
    if (fallback !== undefined) args.push("--fallback", CLIS[fallback.cli].backend);
    for (const [key, value] of Object.entries(env)) args.push("--env", `${key}=${value}`);
    const extra = setup.extraArgs(input);
    if (extra.length > 0) args.push("--", ...extra);
    // Each test has a home of its own, so each dispatch asks its CLI for --version (readiness): node CLIs
    // take seconds to start on a loaded machine.
    const dispatcher: NodeJS.ProcessEnv = {
      ...dispatcherEnv(catherdHome),
      ...(fallback === undefined
        ? {}
        : { [backendFor(CLIS[fallback.cli].backend).binEnv]: binOf(fallback.cli) }),
      ...login?.inherited,
    };
    if (login !== null) delete dispatcher.ANTHROPIC_API_KEY;
    const result = await runCli(args, { env: dispatcher, cwd: work, timeoutMs: 60_000 });
    if (result.code !== 0) {
      throw new Error(`catherd dispatch exited ${result.code}: ${result.stdout}${result.stderr}`);
    }
    const dispatched = dispatchedOf(result);
    const live: LiveDispatch = { cli, scenario, ...dispatched, root };
    this.dispatches.push(live);
    return live;
  }

  /**
   * Reaps whatever the test started: every process carrying CATHERD_DISPATCH=<id> (SIGKILL, by pid)
   * and the dispatch's supervisor if it is still there (only if its command line names this dispatch's
   * folder, so a recycled pid is never hit); stops the mock server; removes the folders of passed tests
   * (all are kept with CATHERD_LIVE_KEEP=1).
   * Returns how many processes had to be killed.
   */
  async reap(keepFolders: boolean): Promise<number> {
    let killed = 0;
    // From disk, not only from what `dispatch` answered: a dispatch whose answer was lost is reaped too.
    const dirs = new Set([
      ...this.dispatches.map((d) => d.dir),
      ...this.roots.flatMap((root) => dispatchFolders(path.join(root, "catherd-home"))),
    ]);
    for (const dir of dirs) {
      const supervisorPid = supervisorPidOf(dir);
      if (supervisorPid !== null && isAlive(supervisorPid) && cmdlineOf(supervisorPid).includes(dir)) {
        try {
          process.kill(supervisorPid, "SIGKILL");
          killed += 1;
        } catch {
          // gone
        }
      }
      killed += reapDispatch(path.basename(dir));
    }
    await this.server.close();
    const keep = keepFolders || process.env.CATHERD_LIVE_KEEP === "1";
    if (!keep) for (const root of this.roots) fs.rmSync(root, { recursive: true, force: true });
    return killed;
  }
}

function supervisorPidOf(dir: string): number | null {
  try {
    const pid = (readJson(path.join(dir, "supervisor.json")) as { pid?: unknown }).pid;
    return typeof pid === "number" ? pid : null;
  } catch {
    return null;
  }
}

function cmdlineOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

export interface RecordJson {
  status: string;
  reason: string;
  exitCode: number | null;
  signal: string | null;
  thread: string | null;
  tokens: { input: number; cached: number; output: number };
  costUsd: number | null;
  reply: string | null;
  replyPath: string | null;
  error: { code: string; kind?: string; message: string; retryAfter?: string | null; tail?: string[] } | null;
  secs: number;
  /** `--outcome`: the worker's declared outcome; null when asked for and missing, absent when not asked. */
  outcome?: { status: string; why: string } | null;
}

export interface ExitJson {
  reason: string;
  code: number | null;
  signal: string | null;
  sawFinal: boolean;
  retries: number;
  stop: { term: boolean; kill: boolean; swept: number };
  error: { code: string; message: string } | null;
}

/**
 * Polls <dir>/record.json until it parses, with a deadline; then waits (with a deadline) for the
 * supervisor to exit — it has nothing left to do once the record is written — and reads exit.json.
 */
export async function waitForRecord(
  d: LiveDispatch,
  timeoutMs: number,
): Promise<{ record: RecordJson; exit: ExitJson }> {
  const file = path.join(d.dir, "record.json");
  try {
    await waitFor(
      `${d.cli}/${d.scenario} record.json`,
      () => {
        try {
          return JSON.parse(fs.readFileSync(file, "utf8")) as unknown;
        } catch {
          return undefined;
        }
      },
      timeoutMs,
    );
    await waitFor(
      `${d.cli}/${d.scenario} supervisor ${d.supervisorPid} to exit after the record`,
      () => (isAlive(d.supervisorPid) ? undefined : true),
      10_000,
    );
  } catch (error) {
    throw new Error(`${String(error)}\n${diagnostics(d)}`);
  }
  return {
    record: readJson(file) as unknown as RecordJson,
    exit: readJson(path.join(d.dir, "exit.json")) as unknown as ExitJson,
  };
}

/** Processes still carrying this dispatch's CATHERD_DISPATCH, with their command lines. */
export function leftovers(d: LiveDispatch): string[] {
  return findByDispatchVariable(d.dispatchId).map((p) => `${p.pid} ${cmdlineOf(p.pid).slice(0, 200)}`);
}

function tail(file: string, lines: number): string {
  try {
    const all = fs.readFileSync(file, "utf8").split("\n");
    return all
      .slice(-lines)
      .map((l) => (l.length > 400 ? `${l.slice(0, 400)}…` : l))
      .join("\n");
  } catch {
    return "(missing)";
  }
}

/** What to print when an expectation fails: the folder's files and the requests the mock saw. */
export function diagnostics(d: LiveDispatch, server?: MockModelServer): string {
  const parts = [`dispatch folder: ${d.dir}`];
  for (const name of ["record.json", "exit.json"])
    parts.push(`--- ${name}\n${tail(path.join(d.dir, name), 60)}`);
  parts.push(`--- events.jsonl (last 15)\n${tail(path.join(d.dir, "events.jsonl"), 15)}`);
  parts.push(`--- stderr.log (last 25)\n${tail(path.join(d.dir, "stderr.log"), 25)}`);
  parts.push(`--- supervisor.log (last 10)\n${tail(path.join(d.dir, "supervisor.log"), 10)}`);
  if (server !== undefined) {
    const requests = server.requests.map(
      (r) => `${r.method} ${r.url} → ${r.answer}${r.note === undefined ? "" : ` (${r.note})`}`,
    );
    parts.push(`--- mock server requests\n${requests.join("\n")}`);
  }
  return parts.join("\n");
}

/**
 * A codex config.toml that talks to the mock at `baseUrl` (Responses wire API), with `tables` (more TOML
 * tables, e.g. an MCP server) after the provider's. request_max_retries = 0 makes each "Reconnecting… n/5"
 * round a single HTTP try (default 4 tries per round), so persistent 500s print their first three retry
 * lines within about a second; stream_max_retries keeps its default 5, more than the supervisor's 3.
 */
export function codexConfigToml(baseUrl: string, tables: readonly string[] = []): string {
  return [
    'model_provider = "mock"',
    'model = "mock-model"',
    "",
    "[model_providers.mock]",
    'name = "catherd live mock"',
    `base_url = ${JSON.stringify(`${baseUrl}/v1`)}`,
    'wire_api = "responses"',
    'env_key = "MOCK_API_KEY"',
    "request_max_retries = 0",
    "stream_max_retries = 5",
    "",
    ...tables,
    // Codex's start-up snapshot of the login shell runs the machine's profile in the background (pyenv
    // rehash, which holds a lock file); the sweep at the end of a dispatch ends it where it stands and the
    // lock stays behind, so every later login shell on the machine waits 60 s for it. The snapshot is
    // codex's own, not what a test checks.
    "[features]",
    "shell_snapshot = false",
    "",
  ].join("\n");
}

/**
 * A LiveRun for each test of the calling describe block: the CLIs' prerequisites checked once, the mock
 * model started before each test, everything the test started reaped after it, and the folders of a test
 * that failed kept (their paths said on stderr; CATHERD_LIVE_KEEP=1 keeps every test's).
 */
export function useLiveRun(
  clis: readonly LiveCli[],
  options: { sandboxed?: boolean } = {},
): { readonly run: LiveRun } {
  let run: LiveRun | null = null;
  beforeAll(() => {
    for (const cli of clis) checkPrerequisites(cli);
  });
  beforeEach(async () => {
    run = new LiveRun(await startMockModelServer(), { sandboxed: options.sandboxed === true });
  });
  afterEach(async (context) => {
    if (run === null) return;
    const failed = context.task.result?.state === "fail";
    const killed = await run.reap(failed);
    if (failed || process.env.CATHERD_LIVE_KEEP === "1") {
      for (const d of run.dispatches) process.stderr.write(`kept ${d.root} (killed ${killed} at reap)\n`);
    }
  });
  return {
    get run(): LiveRun {
      if (run === null) throw new Error("useLiveRun: no test is running");
      return run;
    },
  };
}
