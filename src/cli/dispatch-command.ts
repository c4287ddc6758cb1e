import * as fs from "node:fs";
import { backendFor, backendNamed } from "../backends/registry.js";
import { admit } from "../dispatch/admit.js";
import { launchSupervisor } from "../dispatch/launch.js";
import { withLockHint } from "../dispatch/lock-hint.js";
import { launchPromoted, queuePositions } from "../dispatch/queue.js";
import { checkReadiness } from "../dispatch/readiness.js";
import { MAX_BRIEF_BYTES, validateDispatch } from "../dispatch/request.js";
import { CatherdError } from "../domain/errors.js";
import { ACCESS_LEVELS, BACKEND_IDS, type QueueBlocker } from "../domain/vocab.js";
import { catherdHome, runName } from "../infra/paths.js";
import { type Command, listOption, type ParsedInput, stringOption } from "./kit.js";

export interface Dispatched {
  dispatched: {
    run: string;
    name: string;
    dispatchId: string;
    dir: string;
    backend: string;
    admittedAt: string;
    /** Null while it waits in the queue: its supervisor starts when it is promoted. */
    supervisorPid: number | null;
    queued: boolean;
    /** Its place in the run's queue (1 = next), null when it was not queued. */
    position: number | null;
    /** Why it waits (queued.json `blockedBy`), null when it was not queued. */
    blockedBy: QueueBlocker | null;
    /** With --worktree: where the agent works, created by the supervisor before the agent starts. */
    worktree: { path: string; branch: string; base: string } | null;
  };
}

const USAGE = `usage: catherd dispatch --backend <${BACKEND_IDS.join("|")}> [options] [-- extra args]

  --name <n>            name of the dispatch (default: <backend>-<suffix>)
  --run <r>             run to admit it into (default: $CATHERD_RUN, else default)
  --cwd <dir>           working folder of the agent (default: here)
  --brief <text> | --brief-file <path|-> | brief on stdin
  --model <m>  --effort <e>  --access read-only|workspace-write|full  --thread <id>
  --owns <a/,b.ts>      paths this dispatch owns; a live dispatch owning an overlapping path is refused
  --max-parallel <n>    cap of live dispatches in the run (remembered in run.json)
  --max-parallel-backend <backend>=<n>
                        cap of live dispatches of one backend in the run (repeatable; remembered)
  --queue               where a cap or an overlapping --owns would refuse it, wait in the run's queue:
                        it starts, oldest first, as soon as nothing blocks it (exit 0 at once)
  --fallback <backend[:model]>[,…]
                        when it ends on a quota, rate limit, outage, login or model, try these next
  --retry-within <d>    a rate limit that names a time within this retries the same CLI then (≤ 24h)
  --idle 15m  --wall 90m  --kill-grace 10s
  --memory <size>       cap on the memory of all its processes, e.g. 2G (where cgroups are available)
  --max-procs <n>       cap on how many processes it runs at once (where cgroups are available)
  --env K=V             an explicit override for the agent (repeatable; written to spec.json)
  --pass-env NAME       the agent gets this variable's value from here (repeatable; only the name is
                        written, never the value)
  --worktree            run in a new git worktree of --cwd's repository, on branch catherd/<name>-<suffix>
  --base <ref>          the worktree's starting point (default: HEAD)
  --keep-tmp            keep the agent's private temp folder (<dir>/tmp) after it ends
  --lock-hint           add a line to the brief: run test suites and builds through catherd lock
  --bin <path>          the CLI's executable (default: $CATHERD_<BACKEND>_BIN, else PATH)
  --json                print {dispatched: {…}}`;

export const dispatchCommand: Command<Dispatched> = {
  name: "dispatch",
  usage: USAGE,
  options: {
    backend: {
      type: "string",
      description: "the agent CLI to run, or exec for any command (required)",
      choices: BACKEND_IDS,
    },
    name: { type: "string", description: "name of the dispatch (default: <backend>-<suffix>)" },
    run: { type: "string", description: "run to admit it into (default: $CATHERD_RUN, else default)" },
    cwd: { type: "string", description: "working folder of the agent (default: the current folder)" },
    model: { type: "string", description: "the model the CLI should use" },
    effort: { type: "string", description: "reasoning effort, for CLIs that take one" },
    access: {
      type: "string",
      description: "what the CLI may do: read-only, workspace-write or full",
      choices: ACCESS_LEVELS,
    },
    "max-parallel": {
      type: "string",
      description: "cap of live dispatches in the run (remembered in run.json)",
      integer: true,
    },
    "max-parallel-backend": {
      type: "string",
      multiple: true,
      description: "<backend>=<n>: cap of live dispatches of one backend in the run (remembered in run.json)",
    },
    queue: {
      type: "boolean",
      description:
        "where a cap or an overlapping owns would refuse it, wait in the run's queue (it starts as soon as nothing blocks it)",
    },
    fallback: {
      type: "string",
      multiple: true,
      description:
        "backend[:model],…: when an attempt ends on a quota, rate limit, outage, login or model, the next attempt runs on the next of these",
    },
    "retry-within": {
      type: "string",
      description:
        "when a rate limit names a time within this (e.g. 10m, at most 24h), retry the same CLI then, before falling back",
    },
    env: {
      type: "string",
      multiple: true,
      description: "NAME=value, an explicit override for the agent (written to spec.json; no secrets)",
    },
    brief: { type: "string", description: "the brief (prompt) as text" },
    "brief-file": { type: "string", description: "a file holding the brief (- for stdin)" },
    thread: { type: "string", description: "continue this thread/session id of the CLI" },
    owns: {
      type: "string",
      description: "paths this dispatch owns, comma separated (a/,b.ts); a live overlapping owner is refused",
    },
    idle: { type: "string", description: "stop after this long without output, e.g. 15m" },
    wall: { type: "string", description: "stop after this long in all, e.g. 90m" },
    "kill-grace": { type: "string", description: "between SIGTERM and SIGKILL, e.g. 10s" },
    memory: {
      type: "string",
      description: "cap on the memory of the agent and all it starts, e.g. 2G (where catherd gets a cgroup)",
    },
    "max-procs": {
      type: "string",
      description: "cap on the processes of the agent and all it starts (where catherd gets a cgroup)",
      integer: true,
    },
    bin: { type: "string", description: "the CLI's executable (default: $CATHERD_<BACKEND>_BIN, else PATH)" },
    "pass-env": {
      type: "string",
      multiple: true,
      description:
        "NAME: the agent gets this variable's value from here (only the name is written, never the value)",
    },
    worktree: {
      type: "boolean",
      description: "run in a new git worktree of cwd's repository, on branch catherd/<name>-<suffix>",
    },
    base: { type: "string", description: "the worktree's starting point (default: HEAD)" },
    "keep-tmp": {
      type: "boolean",
      description: "keep the agent's private temp folder (<dir>/tmp) after it ends",
    },
    "lock-hint": {
      type: "boolean",
      description:
        "add one line to the brief telling the agent to run test suites and builds through catherd lock",
    },
  },
  async handler(input, { standby, stdinIsOurs }) {
    const request = validateDispatch({
      backend: stringOption(input, "backend"),
      name: stringOption(input, "name"),
      run: runName(stringOption(input, "run")),
      cwd: stringOption(input, "cwd"),
      model: stringOption(input, "model"),
      effort: stringOption(input, "effort"),
      access: stringOption(input, "access"),
      maxParallel: stringOption(input, "max-parallel"),
      maxParallelBackend: listOption(input, "max-parallel-backend"),
      queue: input.values.queue === true,
      env: listOption(input, "env"),
      brief: withLockHint(
        await readBrief(input, stdinIsOurs),
        input.values["lock-hint"] === true,
        stringOption(input, "backend"),
      ),
      thread: stringOption(input, "thread"),
      owns: stringOption(input, "owns"),
      idle: stringOption(input, "idle"),
      wall: stringOption(input, "wall"),
      killGrace: stringOption(input, "kill-grace"),
      memory: stringOption(input, "memory"),
      maxProcs: stringOption(input, "max-procs"),
      bin: stringOption(input, "bin"),
      worktree: input.values.worktree === true,
      base: stringOption(input, "base"),
      passEnv: listOption(input, "pass-env"),
      keepTmp: input.values["keep-tmp"] === true,
      fallback: listOption(input, "fallback"),
      retryWithin: stringOption(input, "retry-within"),
      rest: input.positionals.length > 0 ? unexpected(input.positionals) : input.rest,
      environment: process.env,
    });
    // Readiness before admission: a CLI that cannot start, or is too old, fails here, before any write.
    // The CLI and every rung of its --fallback ladder, checked at once.
    const checks = [
      { backend: request.backend, bin: request.bin },
      ...(request.chain?.rungs ?? []).map((rung) => ({ backend: backendFor(rung.backend), bin: rung.bin })),
    ];
    const ready = await Promise.all(checks.map((c) => checkReadiness(c.backend, c.bin, catherdHome())));
    const problem = ready.find((r) => r.problem !== null)?.problem;
    if (problem != null) throw problem;
    const admitted = await admit(request, catherdHome(), () => new Date());
    // Queued ones promoted on the way start too; a queued newcomer leaves the standby to the first of them.
    const [first, ...others] = admitted.promoted;
    const promotions = launchPromoted(others);
    let supervisorPid: number | null = null;
    if (admitted.queued === null) supervisorPid = await launchSupervisor(admitted.dir, { standby });
    if (first !== undefined) {
      await launchSupervisor(first, { standby: admitted.queued === null ? null : standby }).catch(() => null);
    }
    await promotions;
    const position =
      admitted.queued === null ? null : (queuePositions(admitted.run).get(admitted.dispatchId) ?? null);
    const plan = admitted.spec.worktree;
    const data: Dispatched = {
      dispatched: {
        run: request.run,
        name: admitted.name,
        dispatchId: admitted.dispatchId,
        dir: admitted.dir,
        backend: request.backend.id,
        admittedAt: admitted.admit.admittedAt,
        supervisorPid,
        queued: admitted.queued !== null,
        position,
        blockedBy: admitted.queued?.blockedBy ?? null,
        worktree: plan === null ? null : { path: plan.path, branch: plan.branch, base: plan.base },
      },
    };
    const what = `${admitted.name} (${admitted.dispatchId}, ${request.backend.id}) → ${admitted.dir}`;
    const where = plan === null ? "" : `\nworktree ${plan.path} on branch ${plan.branch}`;
    return {
      data,
      text:
        admitted.queued === null
          ? `dispatched ${what}${where}`
          : `queued ${what}${where}\n  position ${position ?? "?"}, blocked by ${admitted.queued.blockedBy}; it starts as soon as nothing blocks it`,
    };
  },
};

function unexpected(positionals: string[]): never {
  throw new CatherdError("E_INPUT_INVALID", `unexpected argument ${JSON.stringify(positionals[0])}`, {
    fix: "put the command or extra CLI arguments after --",
  });
}

/**
 * The brief from --brief, --brief-file (a path, or - for stdin), or stdin when it is not a terminal.
 * Without `stdinIsOurs` (under MCP stdin carries the protocol) stdin is never read.
 */
async function readBrief(input: ParsedInput, stdinIsOurs: boolean): Promise<Buffer | null> {
  const text = stringOption(input, "brief");
  const file = stringOption(input, "brief-file");
  if (text !== undefined && file !== undefined) {
    throw new CatherdError("E_INPUT_INVALID", "--brief and --brief-file are both given", {
      fix: "give one of them",
    });
  }
  if (text !== undefined) return Buffer.from(text, "utf8");
  if (file === "-") {
    if (!stdinIsOurs) {
      throw new CatherdError("E_INPUT_INVALID", "--brief-file - reads stdin, which is not available here", {
        fix: "give the brief as text (brief) or the path of a file (briefFile)",
      });
    }
    return readStdin();
  }
  if (file !== undefined) {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (stat === undefined || !stat.isFile()) {
      throw new CatherdError("E_INPUT_INVALID", `--brief-file ${file} is not a readable file`, {
        fix: "give the path of a text file",
      });
    }
    if (stat.size > MAX_BRIEF_BYTES) return Buffer.alloc(MAX_BRIEF_BYTES + 1);
    return fs.readFileSync(file);
  }
  // Where the brief is optional (exec): an open, silent stdin must not hang the dispatcher.
  const backend = backendNamed(stringOption(input, "backend") ?? "");
  if (!stdinIsOurs || process.stdin.isTTY === true || backend?.needsBrief === false) return null;
  return readStdin();
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size <= MAX_BRIEF_BYTES) chunks.push(buffer);
  }
  // Over the limit: drain the rest and let validation refuse it (never a brief cut short silently).
  if (size > MAX_BRIEF_BYTES) return Buffer.alloc(MAX_BRIEF_BYTES + 1);
  return Buffer.concat(chunks);
}
