import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dispatchFolders } from "./helpers/cli.js";
import { fakeCli, recordedLines } from "./helpers/fake-cli.js";
import { CLI_MAIN, ROOT, reapAll, tempDir } from "./helpers/folders.js";
import { makeRepo } from "./helpers/git.js";
import { FAKE_CLAUDE } from "./helpers/steering.js";
import { waitFor } from "./helpers/wait.js";

// Every shell example of the README, run as written (specs/testing.md, "The README's examples"): each
// ```sh block is split into its commands, and each command runs in bash — `set -o pipefail` — and must
// exit 0, in a home and a HOME of its own, with catherd's built CLI as `catherd` on PATH. The agents are
// stand-ins: `catherd demo`'s simulated agent as codex, test/fixtures' fake Claude Code (stream-json) and
// a recorded gemini run; the outside commands the examples name (npm, cargo, make, curl, notify-send) are
// fakes that succeed, so that nothing runs the gate inside itself or leaves the machine. A block the table
// below does not know fails: a new example is run, or skipped with its reason, never forgotten.

const README = path.join(ROOT, "README.md");
const SIMULATED_AGENT = path.join(ROOT, "dist/bin/simulated-agent.js");

/** One ```sh block of the README: its section heading, its place among the section's blocks, its commands. */
interface Example {
  key: string;
  commands: string[];
}

/** The ```sh blocks of a Markdown text, each keyed "‹heading› #n". */
function shellExamples(markdown: string): Example[] {
  const examples: Example[] = [];
  const counts = new Map<string, number>();
  let heading = "(top)";
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const title = /^#{2,4} (.*)$/.exec(line);
    if (title !== null) heading = (title[1] as string).trim();
    if (line.trim() !== "```sh") continue;
    const body: string[] = [];
    const indent = line.indexOf("```");
    for (i++; i < lines.length && (lines[i] as string).trim() !== "```"; i++) {
      body.push((lines[i] as string).slice(indent));
    }
    const n = (counts.get(heading) ?? 0) + 1;
    counts.set(heading, n);
    examples.push({ key: `${heading} #${n}`, commands: commandsOf(body) });
  }
  return examples;
}

/** A block's lines as shell commands: a line ending in `\` goes on, a heredoc runs to its delimiter. */
function commandsOf(lines: readonly string[]): string[] {
  const commands: string[] = [];
  let current: string[] = [];
  let heredoc: string | null = null;
  for (const line of lines) {
    current.push(line);
    if (heredoc !== null) {
      if (line === heredoc) heredoc = null;
    } else {
      const opened = /<<-?\s*['"]?(\w+)['"]?/.exec(line.replace(/#.*$/, ""));
      if (opened !== null) heredoc = opened[1] as string;
      else if (line.endsWith("\\")) continue;
    }
    if (heredoc !== null) continue;
    const command = current.join("\n");
    current = [];
    if (command.trim() !== "" && !command.trim().startsWith("#")) commands.push(command);
  }
  if (current.length > 0) commands.push(current.join("\n"));
  return commands;
}

/** Where an example runs and what it needs. */
interface Plan {
  /** Why it cannot run here; it is listed, not run. */
  skip?: string;
  /** Programs it runs that a machine may lack: without one it is skipped, saying so (as the browser tests). */
  needs?: string[];
  /** Runs in a git repository (its `--worktree`), else in a plain folder. */
  repo?: boolean;
  /** Variables for its stand-ins. */
  env?: Record<string, string>;
  /** Before its command n (from 0), waits for what a person would see first. */
  before?: Record<number, (home: string) => Promise<unknown>>;
  /** Each command serves until stopped: it must print this line, then it is stopped (SIGTERM). */
  serves?: RegExp;
}

/** A dispatch's folder under the home's default run, once it exists (its newest attempt). */
function folderOf(home: string, name: string): string | undefined {
  const latest = path.join(home, "runs/default/dispatches", name, "latest");
  if (!fs.existsSync(latest)) return undefined;
  return path.join(path.dirname(latest), fs.readFileSync(latest, "utf8").trim());
}

const questionAsked = (home: string) =>
  waitFor("the agent's question q1", () => {
    const dir = folderOf(home, "deps");
    return dir !== undefined && fs.existsSync(path.join(dir, "questions/q1.json")) ? true : undefined;
  });

/**
 * Every ```sh block of the README, by key; a group runs its examples one after the other in one home (a
 * later one reads what an earlier one dispatched), the groups at once.
 */
const GROUPS: Record<string, Plan>[] = [
  { "Quick start #1": {} },
  {
    "Using it #1": {},
    "Spending #1": {},
    "Spending #2": {},
    "Spending #3": {},
  },
  { "Asking for an answer #1": { needs: ["jq"] } },
  { "Checking the work #1": { repo: true } },
  { "Following up #1": { repo: true } },
  // npm is a stand-in that succeeds: every attempt's check passes, the first to pass wins.
  { "Racing attempts #1": { repo: true } },
  // A first turn that works long enough to be talked to and interrupted, as a real one would.
  { "Talking to a running agent #1": { env: { FAKE_CLAUDE_FIRST_TURN: "[tool:30000]" } } },
  {
    "Talking to a running agent #2": {
      env: { FAKE_CLAUDE_FIRST_TURN: "[ask]" },
      before: { 1: questionAsked },
    },
  },
  { "Sandboxing agents #1": { repo: true } },
  { "Subscription windows and accounts #1": {}, "Subscription windows and accounts #2": {} },
  // The token is base64url: it may begin with "-", which \w does not match.
  { "The dashboard #1": { serves: /catherd ui: http:\/\/127\.0\.0\.1:\d+\/\S*\?token=[\w-]+/ } },
  { "Notifications #1": {} },
  { "Heavy commands #1": {} },
  { "Supervising a folder by hand #1": {} },
  {
    "Beyond one machine: a Slurm cluster #1": {
      skip: "it needs a Slurm cluster: npm run test:slurm runs placement against a real one (test/slurm/)",
    },
  },
  {
    "Beyond one machine: another host over ssh #1": {
      skip: "it needs another host over ssh: npm run test:ssh runs placement against a real sshd (test/ssh/)",
    },
  },
  {
    "The live contract suite #1": {
      skip: "it is the live suite itself: the real CLIs, downloaded (about 1.1 GB), run by .ci/run",
    },
  },
];

/** The stand-ins for what the examples run besides catherd: each succeeds and does nothing else. */
const FAKES: Record<string, string> = {
  // `npm install` and `npm test` are this checkout's install and gate, which run this test.
  npm: "exit 0",
  npx: 'if [ "$1" = catherd ]; then shift; exec catherd "$@"; fi; echo "npx $*: not a stand-in" >&2; exit 1',
  cargo: "exit 0",
  make: "exit 0",
  curl: "cat >/dev/null; exit 0",
  "notify-send": "exit 0",
};

/** A bin folder holding `catherd` and the fakes, and the stand-in agents, for one group's home. */
function standIns(dir: string): { bin: string; env: Record<string, string> } {
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin);
  const node = process.execPath;
  const write = (name: string, body: string) =>
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  write("catherd", `exec '${node}' '${CLI_MAIN}' "$@"`);
  write("simulated-codex", `exec '${node}' '${SIMULATED_AGENT}' "$@"`);
  for (const [name, body] of Object.entries(FAKES)) write(name, body);
  const gemini = fakeCli(dir, "gemini", [{ lines: recordedLines("gemini", "text"), exit: 0 }]);
  return {
    bin,
    env: {
      CATHERD_CODEX_BIN: path.join(bin, "simulated-codex"),
      CATHERD_CLAUDE_BIN: FAKE_CLAUDE,
      CATHERD_GEMINI_BIN: gemini,
      CATHERD_SIMULATED_PACE: "0.1",
    },
  };
}

interface Ran {
  code: number | null;
  output: string;
}

/**
 * Runs one command in bash, in a process group of its own, with a deadline; with `serves`, until it prints
 * that line, then stops the group (bash and what it runs, not the supervisors catherd detached).
 */
function runCommand(
  command: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; serves?: RegExp | undefined },
) {
  return new Promise<Ran>((resolve, reject) => {
    const child: ChildProcess = spawn("bash", ["-c", `set -o pipefail\n${command}`], {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const stop = (signal: NodeJS.Signals) => {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, signal);
    };
    let output = "";
    let served = false;
    const timer = setTimeout(() => {
      stop("SIGKILL");
      reject(new Error(`${command}\ndid not finish within 60 s; it printed:\n${output}`));
    }, 60_000);
    const heard = (data: Buffer) => {
      output += data.toString();
      if (!served && options.serves?.test(output) === true) {
        served = true;
        stop("SIGTERM");
      }
    };
    child.stdout?.on("data", heard);
    child.stderr?.on("data", heard);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code: served ? 0 : code, output });
    });
  });
}

/** Each dispatch of the home recorded (each supervisor ends by itself), or the test fails naming it. */
async function everyDispatchRecorded(home: string): Promise<string[]> {
  const dirs = dispatchFolders(home);
  await waitFor(
    "every dispatch of the examples to be recorded",
    () => (dirs.every((d) => fs.existsSync(path.join(d, "record.json"))) ? true : undefined),
    60_000,
  ).catch((error: Error) => {
    const open = dirs.filter((d) => !fs.existsSync(path.join(d, "record.json")));
    throw new Error(`${error.message}: ${open.join(", ")}`);
  });
  return dirs.map((d) => path.basename(d));
}

/** The ids of every dispatch the examples made, reaped once the file is done. */
const made: string[] = [];

afterAll(() => {
  expect(reapAll(made.splice(0)), "processes left running").toBe(0);
});

const examples = shellExamples(fs.readFileSync(README, "utf8"));
const planned = new Map(GROUPS.flatMap((group) => Object.entries(group)));

/** A group's examples, in one home, one command after the other. */
async function runGroup(group: Record<string, Plan>, keys: readonly string[]): Promise<void> {
  const root = tempDir("catherd-readme-");
  const home = path.join(root, "catherd");
  const { bin, env: agents } = standIns(root);
  const work = path.join(root, "work");
  if (keys.some((key) => group[key]?.repo === true)) {
    makeRepo(work, { "src/parser.ts": "export const parse = (s: string) => s;\n" });
  } else fs.mkdirSync(work);
  const base: NodeJS.ProcessEnv = {
    ...process.env,
    ...agents,
    ...ISOLATED_GIT,
    HOME: root,
    CATHERD_HOME: home,
    CATHERD_RUN: "",
    CI: "1",
    PATH: `${bin}:${process.env.PATH ?? ""}`,
  };
  try {
    for (const key of keys) {
      const plan = group[key] as Plan;
      const example = examples.find((e) => e.key === key);
      if (example === undefined) throw new Error(`the README has no example ${key}`);
      const env = { ...base, ...plan.env };
      for (const [n, command] of example.commands.entries()) {
        await plan.before?.[n]?.(home);
        const ran = await runCommand(command, { cwd: work, env, serves: plan.serves });
        expect(ran.code, `${key}: ${command}\n${ran.output}`).toBe(0);
      }
    }
  } finally {
    made.push(...(await everyDispatchRecorded(home)));
  }
}

const ISOLATED_GIT = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "Readme Example",
  GIT_AUTHOR_EMAIL: "readme@example.invalid",
  GIT_COMMITTER_NAME: "Readme Example",
  GIT_COMMITTER_EMAIL: "readme@example.invalid",
};

/** Where `program` is not on PATH: why an example that runs it is skipped here; else undefined. */
function missing(program: string): string | undefined {
  const found = (process.env.PATH ?? "")
    .split(":")
    .some((dir) => dir !== "" && fs.existsSync(path.join(dir, program)));
  return found ? undefined : `${program} is not installed here (apt-get install ${program}; .ci/run does)`;
}

for (const group of GROUPS) {
  for (const plan of Object.values(group)) {
    const lacking = (plan.needs ?? []).map(missing).find((why) => why !== undefined);
    if (lacking !== undefined) plan.skip ??= lacking;
  }
}

const runnable = GROUPS.map((group) => ({
  group,
  keys: Object.keys(group).filter((key) => group[key]?.skip === undefined),
})).filter(({ keys }) => keys.length > 0);

/** Each group's run, all started at once before the first test (they wait on processes, not the CPU). */
const runs = new Map<string, Promise<void>>();

describe("the README's shell examples", () => {
  beforeAll(() => {
    for (const { group, keys } of runnable) {
      const run = runGroup(group, keys);
      run.catch(() => undefined); // reported by its own test
      runs.set(keys.join(", "), run);
    }
  });

  it("are each run below, or skipped with a reason", () => {
    expect(examples.map((e) => e.key).sort()).toEqual([...planned.keys()].sort());
    for (const [key, plan] of planned)
      if (plan.skip !== undefined) console.log(`skipped ${key}: ${plan.skip}`);
  });

  for (const { keys } of runnable) {
    const title = keys.join(", ");
    it(`${title}: every command exits 0`, () => runs.get(title));
  }
});
