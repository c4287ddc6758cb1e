import * as path from "node:path";
import { execBackend } from "../backends/exec.js";
import { AGENT_DEFAULTS } from "../backends/line-parsing.js";
import { startDispatch } from "../dispatch/dispatch.js";
import { validateFollowUp } from "../dispatch/follow-up/follow-up-request.js";
import { type AnswerSchemaSource, answerInput, MAX_REPAIRS } from "../dispatch/request/answer-input.js";
import { type RawDispatchInput, validateDispatch } from "../dispatch/request/dispatch-request.js";
import { withLockHint } from "../dispatch/request/lock-hint.js";
import { withOutcomeContract } from "../dispatch/request/outcome-contract.js";
import { RUN_PLACEMENTS } from "../dispatch/request/placement.js";
import { MAX_KEEP_OPEN_MS } from "../dispatch/request/steer-input.js";
import { SPEC_DEFAULTS } from "../domain/defaults.js";
import { CatherdError } from "../domain/errors.js";
import { SANDBOX_MODES } from "../domain/sandbox/sandbox.js";
import { compactDuration } from "../domain/text/duration.js";
import { ACCESS_LEVELS, BACKEND_IDS, ENGINES, PLACEMENTS, type QueueBlocker } from "../domain/vocab.js";
import type { Submitted } from "../engines/engine.js";
import { ENGINE_OPTIONS } from "../engines/engine-registry.js";
import { catherdHome, runName } from "../infra/paths.js";
import { readBrief } from "./brief-input.js";
import { type Command, listOption, type ParsedInput, stringOption } from "./command-io.js";

/** The input key under which the MCP dispatch tool passes `answerSchema`, the schema inline, as JSON text. */
export const INLINE_ANSWER_SCHEMA = "answer-schema-inline";

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
    /**
     * The job an engine took its supervisor as (--placement slurm): queued in the engine with its reason,
     * or running on its node. Null for a local dispatch, and for one waiting in the run's queue.
     */
    placement: Submitted | null;
  };
}

export const dispatchCommand: Command<Dispatched> = {
  name: "dispatch",
  synopsis: `--backend <${BACKEND_IDS.join("|")}>`,
  positionals: "own",
  summary:
    "Admits a brief (or, for exec, a command after --) into a run and starts its detached supervisor; " +
    "returns once the supervisor is up (or, placed on Slurm, submitted as a job), or at once when the " +
    "dispatch waits in the run's queue. The brief " +
    "comes from --brief, --brief-file, or stdin. Arguments after -- go to the CLI (for exec: the command). " +
    "Rules and outcomes: specs/dispatch.md.",
  json: "{dispatched: {run, name, dispatchId, dir, backend, admittedAt, supervisorPid, queued, position, blockedBy, worktree, placement}}",
  options: {
    backend: {
      type: "string",
      value: "<backend>",
      description: "the agent CLI to run, or exec for any command",
      choices: BACKEND_IDS,
      default: "required; with --follow-up, its turn's",
    },
    name: {
      type: "string",
      value: "<n>",
      description: "name of the dispatch",
      default: "<backend>-<suffix>",
    },
    run: {
      type: "string",
      value: "<r>",
      description: "run to admit it into",
      default: "$CATHERD_RUN, else default",
    },
    cwd: {
      type: "string",
      value: "<dir>",
      description: "working folder of the agent",
      default: "the current folder",
    },
    brief: { type: "string", value: "<text>", description: "the brief (prompt) as text" },
    "brief-file": {
      type: "string",
      value: "<path|->",
      description: "a file holding the brief; - reads it from stdin",
      toolDescription: "the path of a file holding the brief",
    },
    model: {
      type: "string",
      value: "<m>",
      description: "the model the CLI should use",
      default: "the CLI's own",
    },
    effort: { type: "string", value: "<e>", description: "reasoning effort, for CLIs that take one" },
    access: {
      type: "string",
      value: "<level>",
      description: "what the CLI may do",
      choices: ACCESS_LEVELS,
      default: "the CLI's own",
    },
    thread: { type: "string", value: "<id>", description: "continue this thread (session) id of the CLI" },
    "follow-up": {
      type: "string",
      value: "<name>",
      description:
        "continue the conversation of this recorded dispatch of the run as its next turn: same name, CLI, model, effort, access, folder or worktree, and thread",
    },
    owns: {
      type: "string",
      value: "<a/,b.ts>",
      description:
        "paths this dispatch owns, comma separated; a live dispatch owning an overlapping one refuses it",
      list: "comma",
    },
    idle: {
      type: "string",
      value: "<d>",
      description: "stop after this long without output",
      default: `${compactDuration(AGENT_DEFAULTS.idleMs)} for an agent CLI, ${compactDuration(execBackend.defaults.idleMs)} for exec`,
    },
    wall: {
      type: "string",
      value: "<d>",
      description: "stop after this long in all",
      default: `${compactDuration(AGENT_DEFAULTS.wallMs)} for an agent CLI, ${compactDuration(execBackend.defaults.wallMs)} for exec`,
    },
    "kill-grace": {
      type: "string",
      value: "<d>",
      description: "between SIGTERM and SIGKILL at the stop",
      default: compactDuration(SPEC_DEFAULTS.killGraceMs),
    },
    "max-parallel": {
      type: "string",
      value: "<n|none>",
      description: "cap of live dispatches in the run, remembered in run.json; none removes it",
      default: "the run's, else none",
    },
    "max-parallel-backend": {
      type: "string",
      value: "<backend>=<n>",
      multiple: true,
      description: "cap of live dispatches of one backend in the run (remembered in run.json)",
    },
    "run-budget": {
      type: "string",
      value: "<tokens=n,usd=n,minutes=n|none>",
      description:
        "what the whole run may spend, remembered in run.json (given again it replaces; none removes it): a spent run admits nothing more, starts nothing from its queue, and its live dispatches are stopped",
      default: "the run's, else none",
    },
    queue: {
      type: "boolean",
      description:
        "where a cap or an overlapping --owns would refuse it, wait in the run's queue: it starts, oldest first, as soon as nothing blocks it",
    },
    fallback: {
      type: "string",
      value: "<backend[:model]>[,…]",
      multiple: true,
      description:
        "when an attempt ends on a quota, rate limit, outage, login or model, the next attempt runs on the next of these",
    },
    "retry-within": {
      type: "string",
      value: "<d>",
      description:
        "when a rate limit names a time within this (at most 24h), retry the same CLI then, before falling back",
    },
    memory: {
      type: "string",
      value: "<size>",
      description: "cap on the memory of the agent and all it starts, e.g. 2G (where catherd gets a cgroup)",
      default: "none",
    },
    "max-procs": {
      type: "string",
      value: "<n>",
      description: "cap on the processes of the agent and all it starts (where catherd gets a cgroup)",
      integer: true,
      default: "none",
    },
    env: {
      type: "string",
      value: "<NAME=value>",
      multiple: true,
      description: "an explicit override for the agent (written to spec.json: no secrets)",
    },
    "max-tokens": {
      type: "string",
      value: "<n>",
      description:
        "stop the agent once it has used this many tokens, input (cached included) plus output: 50000, 2M",
      default: "no cap",
    },
    "max-cost": {
      type: "string",
      value: "<usd>",
      description:
        "stop the agent once it has spent this many US dollars at list prices (an estimate on a subscription), e.g. 5",
      default: "no cap",
    },
    "pass-env": {
      type: "string",
      value: "<NAME>",
      multiple: true,
      description:
        "the agent gets this variable's value from here (only the name is written, never the value)",
    },
    worktree: {
      type: "boolean",
      description: "run in a new git worktree of --cwd's repository, on branch catherd/<name>-<suffix>",
    },
    base: { type: "string", value: "<ref>", description: "the worktree's starting point", default: "HEAD" },
    "keep-tmp": {
      type: "boolean",
      description: "keep the agent's private temp folder (<dir>/tmp) after it ends",
    },
    placement: {
      type: "string",
      value: "<where>",
      description:
        "where the supervisor runs: on this host, or as a Slurm job (the run's folder on storage every node shares)",
      choices: PLACEMENTS,
      default: "the run's (--run-placement), else $CATHERD_PLACEMENT, else local",
    },
    "run-placement": {
      type: "string",
      value: "<where>",
      description:
        "the placement of this and the run's later dispatches (remembered in run.json); none forgets it",
      choices: RUN_PLACEMENTS,
    },
    sandbox: {
      type: "string",
      value: "<fence>",
      description:
        "the fence catherd runs the agent in: files (it writes only its workplace, its temp folder and its CLI's state; secrets hidden), files+net (and reaches only the allowed hosts, through catherd's proxy)",
      choices: SANDBOX_MODES,
      default: "the run's (--run-sandbox), else $CATHERD_SANDBOX, else off",
    },
    "run-sandbox": {
      type: "string",
      value: "<fence>",
      description:
        "the fence of this and the run's later dispatches, with this dispatch's --allow-net (remembered in run.json); none forgets it",
      choices: [...SANDBOX_MODES, "none"],
    },
    "allow-write": {
      type: "string",
      value: "<path>",
      multiple: true,
      description:
        "a folder or file a fenced agent may write beside its workplace (outside the catherd home)",
    },
    "deny-read": {
      type: "string",
      value: "<path>",
      multiple: true,
      description:
        "a path hidden from a fenced agent beside the deny list (~/.ssh, ~/.aws, …: specs/sandbox.md)",
    },
    "allow-net": {
      type: "string",
      value: "<host[:port]>",
      multiple: true,
      description:
        "a host a files+net agent may reach (port 443 unless given; *.example.com for subdomains, never a public suffix's like *.com; 127.0.0.1:PORT for a loopback port), beside its provider's endpoints",
    },
    ...Object.fromEntries(
      ENGINES.map((engine) => [
        ENGINE_OPTIONS[engine].flag,
        {
          type: "string",
          value: "<option>",
          multiple: true,
          description: ENGINE_OPTIONS[engine].description,
        } as const,
      ]),
    ),
    bin: {
      type: "string",
      value: "<path>",
      description: "the CLI's executable",
      default:
        "$CATHERD_<BACKEND>_BIN (CATHERD_CODEX_BIN, CATHERD_CLAUDE_BIN, CATHERD_OPENCODE_BIN, CATHERD_GEMINI_BIN), else the CLI on PATH",
    },
    notify: {
      type: "string",
      value: "<cmd>",
      description:
        "a shell command run once when the dispatch is recorded (a chain: when it ends), with CATHERD_RECORD, CATHERD_NAME, CATHERD_STATUS, CATHERD_KIND, CATHERD_OUTCOME set and the record's JSON on stdin; its output goes to notify.log",
    },
    "run-notify": {
      type: "string",
      value: "<cmd|none>",
      description: "the same for every dispatch of the run, remembered in run.json; none removes it",
    },
    "lock-hint": {
      type: "boolean",
      description:
        "add one line to the brief telling the agent to run test suites and builds through catherd lock",
    },
    outcome: {
      type: "boolean",
      description:
        "add a short contract to the brief asking the agent to end with `STATUS: complete|partial|blocked|refused — why`, read into the record's outcome",
    },
    "answer-schema": {
      type: "string",
      value: "<file>",
      description:
        "a JSON Schema the agent's final answer must be valid against (draft 2020-12; draft-07 or 2019-09 when its $schema names them): catherd checks it, records it as `answer` and answer.json, and `result --answer` prints it",
    },
    steerable: {
      type: "boolean",
      description:
        "start the agent so that catherd can talk to it while it runs: catherd send, catherd answer (claude-code; specs/steering.md)",
    },
    "keep-open": {
      type: "string",
      value: "<duration>",
      description: `steerable: an ended turn waits this long for another message before the dispatch ends (neither idle nor wall time; at most ${compactDuration(MAX_KEEP_OPEN_MS)})`,
    },
    "on-question": {
      type: "string",
      value: "<policy>",
      description: `steerable: the agent's permission asks and questions come to catherd (questions/, catherd answer); allow or deny answers them at once, \`wait 10m\` gives a person that long (at most ${compactDuration(MAX_KEEP_OPEN_MS)}), then denies`,
    },
    repair: {
      type: "string",
      value: "<n>",
      integer: true,
      description: `with --answer-schema: turns on the same thread, with the validator's errors, for an answer that does not fit (0: none; at most ${MAX_REPAIRS})`,
      default: "1",
    },
  },
  async handler(input, { standbys, stdinIsOurs }) {
    const schemaSource = answerSchemaSource(input);
    if (input.values.outcome === true && schemaSource !== null) {
      // Where the CLI keeps to the schema itself (codex, Claude) the final message can hold nothing else,
      // and for the others a STATUS line after the value would make it no JSON: the two cannot both hold.
      throw new CatherdError("E_INPUT_INVALID", "--outcome and --answer-schema cannot be given together", {
        fix: "leave out --outcome and put the worker's status in the schema (e.g. a required `status` property)",
      });
    }
    const answer = await answerInput(schemaSource, stringOption(input, "repair"));
    const followUp = stringOption(input, "follow-up");
    const validate = (raw: RawDispatchInput) =>
      followUp === undefined ? validateDispatch(raw) : validateFollowUp(raw, followUp);
    const request = validate({
      backend: stringOption(input, "backend"),
      name: stringOption(input, "name"),
      run: runName(stringOption(input, "run")),
      cwd: stringOption(input, "cwd"),
      model: stringOption(input, "model"),
      effort: stringOption(input, "effort"),
      access: stringOption(input, "access"),
      maxParallel: stringOption(input, "max-parallel"),
      maxParallelBackend: listOption(input, "max-parallel-backend"),
      runBudget: stringOption(input, "run-budget"),
      queue: input.values.queue === true,
      env: listOption(input, "env"),
      brief: withOutcomeContract(
        withLockHint(
          await readBrief(input, stdinIsOurs),
          input.values["lock-hint"] === true,
          stringOption(input, "backend"),
        ),
        input.values.outcome === true,
        stringOption(input, "backend"),
      ),
      outcome: input.values.outcome === true,
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
      maxTokens: stringOption(input, "max-tokens"),
      maxCost: stringOption(input, "max-cost"),
      notify: stringOption(input, "notify"),
      runNotify: stringOption(input, "run-notify"),
      placement: stringOption(input, "placement"),
      runPlacement: stringOption(input, "run-placement"),
      engineOptions: Object.fromEntries(
        ENGINES.map((engine) => [engine, listOption(input, ENGINE_OPTIONS[engine].flag)]),
      ),
      answer,
      steerable: input.values.steerable === true,
      keepOpen: stringOption(input, "keep-open"),
      onQuestion: stringOption(input, "on-question"),
      sandbox: stringOption(input, "sandbox"),
      runSandbox: stringOption(input, "run-sandbox"),
      allowWrite: listOption(input, "allow-write"),
      denyRead: listOption(input, "deny-read"),
      allowNet: listOption(input, "allow-net"),
      rest: input.positionals.length > 0 ? unexpected(input.positionals) : input.rest,
      environment: process.env,
    });
    const { admitted, supervisorPid, submitted, position } = await startDispatch(request, {
      home: catherdHome(),
      ...(standbys === undefined ? {} : { standbys }),
    });
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
        placement: submitted,
      },
    };
    const what = `${admitted.name} (${admitted.dispatchId}, ${request.backend.id}) → ${admitted.dir}`;
    const where =
      (plan === null ? "" : `\nworktree ${plan.path} on branch ${plan.branch}`) +
      (submitted === null ? "" : `\n  ${submittedText(submitted)}`) +
      (request.followUp == null
        ? ""
        : `\n  follows up ${request.followUp.dispatchId} on its thread ${request.thread}`);
    return {
      data,
      text:
        admitted.queued === null
          ? `dispatched ${what}${where}`
          : `queued ${what}${where}\n  position ${position ?? "?"}, blocked by ${admitted.queued.blockedBy}; it starts as soon as nothing blocks it`,
    };
  },
};

/**
 * Where --answer-schema comes from: a file (relative to this process's folder), or the object the MCP
 * tool was given inline (INLINE_ANSWER_SCHEMA, JSON text: the command line has no such flag).
 */
function answerSchemaSource(input: ParsedInput): AnswerSchemaSource | null {
  const inline = stringOption(input, INLINE_ANSWER_SCHEMA);
  if (inline !== undefined) return { inline: JSON.parse(inline) as unknown };
  const file = stringOption(input, "answer-schema");
  return file === undefined ? null : { file: path.resolve(file) };
}

/** "slurm job 12 queued: Licenses", "slurm job 12 running on node4". */
function submittedText(job: Submitted): string {
  const what = `${job.engine} job ${job.jobId}${job.cluster === null ? "" : ` (cluster ${job.cluster})`}`;
  if (job.state === "running") return `${what} running${job.node === null ? "" : ` on ${job.node}`}`;
  return `${what} queued: ${job.reason ?? "waiting for the scheduler"}`;
}

function unexpected(positionals: string[]): never {
  throw new CatherdError("E_INPUT_INVALID", `unexpected argument ${JSON.stringify(positionals[0])}`, {
    fix: "put the command or extra CLI arguments after --",
  });
}
