import type { Backend } from "../backends/types.js";
import { conversationOf, type Turn } from "../dispatch/follow-up/conversation.js";
import type { DispatchView } from "../dispatch/read/inspect.js";
import { type LockActivity, lockActivityOf, lockActivityText } from "../dispatch/read/lock-activity.js";
import { queuedText } from "../dispatch/read/queue-text.js";
import { queuePositions } from "../dispatch/read/queued.js";
import { type QueueInfo, queueInfo } from "../dispatch/read/rows.js";
import { readDispatch } from "../dispatch/reader.js";
import { shortCommand } from "../domain/check/check.js";
import { statusWords } from "../domain/ending/record-words.js";
import { netRuleText } from "../domain/sandbox/sandbox.js";
import type { ExitFile, SpecFile } from "../domain/schemas.js";
import { compactDuration, formatDuration } from "../domain/text/duration.js";
import { cutChars, inertText } from "../domain/text/inert-text.js";
import { redactEnv } from "../domain/text/redact.js";
import { formatSize } from "../domain/text/size.js";
import { backendOf } from "../folder/backend.js";
import { humanLine } from "../folder/human-line.js";
import { FILES, fileIn, runOf } from "../folder/layout.js";
import { refusalsIn } from "../folder/sandbox-log.js";
import { resolveSpec } from "../folder/spec.js";
import { readSteering, type SteeringView } from "../folder/steering-view.js";
import { systemClock } from "../infra/clock.js";
import { tailLines } from "../infra/tail.js";
import { type Command, RUN_OPTION } from "./command-io.js";
import { conversationLine } from "./conversation-text.js";
import { leftBehindLines } from "./left-behind.js";
import { conversationShowLines, paint } from "./render.js";
import { dispatchDirOf, refOf } from "./resolve.js";
import { checkLines, errorLines, outcomeLines } from "./result-command.js";
import { spendLines } from "./spend-text.js";

const TAIL_LINES = 20;

export interface ShownDispatch {
  dispatch: Omit<DispatchView, "problems"> & {
    problems: { code: string; message: string }[];
    /** For a queued dispatch: its place in the queue and what holds it back. */
    queue: QueueInfo | null;
    /** A `catherd lock` of its agent waiting for a heavy slot or running in one. */
    heavy: LockActivity | null;
    events: string[];
    stderr: string[];
    /** Every turn of its conversation (dispatch --follow-up), first to last; one for a dispatch never followed up. */
    conversation: Turn[];
  };
  /**
   * A steerable dispatch's talk (specs/steering.md): its messages with their states and what it asked with
   * the answers (readSteering); null for a dispatch not started steerable.
   */
  steering: SteeringView | null;
}

export const showCommand: Command<ShownDispatch> = {
  name: "show",
  synopsis: "<name|id|dir>",
  positionals: 1,
  summary:
    "Everything about one dispatch: admit, spec (secrets redacted), supervisor, process, exit, record, " +
    "and the tail of its events (as human lines) and of its stderr.",
  json: "{dispatch: {…every file of the folder, read, with its queue place, events and stderr}, steering: {messages, questions, waiting} | null}",
  options: {
    run: RUN_OPTION,
  },
  async handler(input) {
    const ref = refOf(input, "show");
    const view = await readDispatch(dispatchDirOf(input, ref));
    const run = runOf(view.dir);
    const backend = backendOf(view);
    const events = tailLines(fileIn(view.dir, FILES.events), 400)
      .flatMap((line) => humanLine(backend, line) ?? [])
      .slice(-TAIL_LINES);
    const stderr = tailLines(fileIn(view.dir, FILES.stderr), TAIL_LINES);
    const dispatch = {
      ...view,
      spec: view.spec === null ? null : { ...view.spec, env: redactEnv(view.spec.env) },
      problems: view.problems.map((p) => ({ code: p.code, message: p.message })),
      queue: queueInfo(view, run === null ? new Map() : queuePositions(run)),
      heavy: view.record === null ? lockActivityOf(view.dir) : null,
      events,
      stderr,
      conversation: conversationOf(view.dir),
    };
    const talk = view.spec?.steer === undefined ? null : readSteering(view.dir, view.state);
    return {
      data: { dispatch, steering: talk },
      text: renderShow(dispatch, talk, systemClock.wallNow().getTime()),
    };
  },
};

/** `cgroup, cpu 12.3 s, peak memory 410M, 1 OOM kill`: what the containment counted, where it did. */
function containmentLine(exit: ExitFile): string {
  const parts: string[] = [exit.containment ?? "none"];
  if (exit.cpuSeconds !== null) parts.push(`cpu ${exit.cpuSeconds} s`);
  if (exit.peakMemoryBytes !== null) parts.push(`peak memory ${formatSize(exit.peakMemoryBytes)}`);
  if (exit.oomKills !== null && exit.oomKills > 0) {
    parts.push(`${exit.oomKills} OOM kill${exit.oomKills === 1 ? "" : "s"}`);
  }
  return parts.join(", ");
}

/**
 * The limits it runs under, as a person would give them, with the defaults a hand-written spec left to
 * catherd marked: "idle 10m (default), wall 2h (default), kill grace 10s (default)".
 */
function limitsLine(file: SpecFile, backend: Backend, dir: string): string {
  const spec = resolveSpec(file, backend, dir);
  const one = (name: string, ms: number, given: number | undefined) =>
    `${name} ${compactDuration(ms)}${given === undefined ? " (default)" : ""}`;
  return [
    one("idle", spec.idleMs, file.idleMs),
    one("wall", spec.wallMs, file.wallMs),
    one("stall notice", spec.stallMs, file.stallMs),
    one("kill grace", spec.killGraceMs, file.killGraceMs),
  ].join(", ");
}

type Shown = ShownDispatch["dispatch"];

/** `show` as text: the dispatch's head lines, then a section per file it has, then the tails. */
function renderShow(d: Shown, talk: SteeringView | null, nowMs: number): string {
  const out = [
    ...headLines(d, talk, nowMs),
    ...(d.admit === null ? [] : section("admitted", admittedLines(d.admit))),
    ...(d.spec === null ? [] : section("spec", specLines(d, d.spec))),
    ...(d.proc === null ? [] : section("process", processLines(d, d.proc))),
    ...(d.exit === null ? [] : section("exit", exitLines(d.exit))),
    ...(d.record === null ? [] : section("record", recordLines(d, d.record, nowMs))),
    ...(talk === null ? [] : section("steering", steeringLines(talk, backendOf(d).steer?.waits ?? null))),
    // The agent's own lines: made inert, then cut (never the other way round: see inert-text.ts).
    ...(d.events.length === 0 ? [] : section("last events", d.events.map(agentLine))),
    ...(d.stderr.length === 0 ? [] : section("stderr", d.stderr.map(agentLine))),
  ];
  return `${out.join("\n")}\n`;
}

/** A section: a blank line, its title in bold, its lines. */
function section(title: string, lines: readonly string[]): string[] {
  return ["", paint(title, "bold"), ...lines];
}

function agentLine(line: string): string {
  return `  ${cutChars(inertText(line), 76)}`;
}

/** Name, id, state and folder; then what is wrong, what it waits for, where it runs. */
function headLines(d: Shown, talk: SteeringView | null, nowMs: number): string[] {
  const out: string[] = [];
  out.push(`${paint(d.admit?.name ?? "(by hand)", "bold")} ${d.dispatchId}  ${d.state}`);
  out.push(`folder: ${d.dir}`);
  for (const p of d.problems) out.push(paint(`! ${p.code}: ${p.message}`, "red"));
  if (d.queue !== null) out.push(`${queuedText(d.queue)}, since ${d.queue.since}`);
  if (d.heavy !== null) out.push(lockActivityText(d.heavy, nowMs));
  if (d.state === "verifying") out.push("the agent has ended; its check runs (verify.log), then the record");
  if (d.undecided !== null) out.push(`? ${d.undecided}`);
  // What it waits for first: an answer nobody has given.
  for (const q of talk?.waiting ?? []) {
    out.push(paint(`waiting for an answer to ${q.id} until ${q.answerBy}`, "yellow"));
  }
  const conversation = conversationLine(d.conversation, d.dispatchId);
  if (conversation !== null) out.push(conversation);
  if (d.placement !== null) {
    const p = d.placement;
    out.push(
      `placed: ${p.engine} job ${p.jobId}${p.cluster === null ? "" : ` on cluster ${p.cluster}`}, submitted ${p.submittedAt}${p.node === null ? "" : `, node ${p.node}`}`,
    );
  }
  return out;
}

function admittedLines(admit: NonNullable<Shown["admit"]>): string[] {
  return [
    `${admit.admittedAt} into run ${admit.run}, backend ${admit.backend}${admit.model === null ? "" : `, model ${admit.model}`}`,
    `cwd ${admit.cwd}${admit.owns.length > 0 ? `, owns ${admit.owns.join(",")}` : ""}`,
  ];
}

/** The command, its environment (secrets redacted already), its worktree, its limits and caps, its sandbox. */
function specLines(d: Shown, spec: NonNullable<Shown["spec"]>): string[] {
  const out = [cutChars(inertText(`${spec.cmd} ${spec.args.join(" ")}`), 400)];
  const env = Object.entries(spec.env).map(([k, v]) => `${k}=${v}`);
  if (env.length > 0) out.push(`env ${env.join(" ")}`);
  const passed = spec.passEnv ?? [];
  if (passed.length > 0) out.push(`passed by name (values never written): ${passed.join(" ")}`);
  const worktree = spec.worktree ?? null;
  if (worktree !== null)
    out.push(`worktree ${worktree.path} on ${worktree.branch} from ${worktree.base.slice(0, 12)}`);
  out.push(limitsLine(spec, backendOf(d), d.dir));
  const caps = [
    spec.memoryBytes == null ? null : `memory ${formatSize(spec.memoryBytes)}`,
    spec.maxProcs == null ? null : `max procs ${spec.maxProcs}`,
    spec.maxTokens == null ? null : `max tokens ${spec.maxTokens}`,
    spec.maxCostUsd == null ? null : `max cost $${spec.maxCostUsd}`,
  ].filter((c) => c !== null);
  if (caps.length > 0) out.push(`limits: ${caps.join(", ")}`);
  const sandbox = spec.sandbox;
  if (sandbox !== undefined) out.push(sandboxLine(sandbox, refusalsIn(d.dir).denied));
  const check = spec.verify;
  if (check !== undefined) {
    out.push(
      `check: --verify ${JSON.stringify(shortCommand(check.command))}, time limit ${compactDuration(check.timeoutMs)}, repairs ${check.repairs} (verify.log)`,
    );
  }
  return out;
}

/** "sandbox: --sandbox files+net, reaching api.openai.com:443; refused 2 (sandbox.log)". */
function sandboxLine(sandbox: NonNullable<SpecFile["sandbox"]>, refused: number): string {
  const hosts =
    sandbox.mode === "files+net"
      ? `, reaching ${sandbox.allowNet.map(netRuleText).join(", ") || "nothing"}`
      : "";
  return `sandbox: --sandbox ${sandbox.mode}${sandbox.workplace === "read" ? ", workplace read-only" : ""}${hosts}; refused ${refused} (sandbox.log)`;
}

function processLines(d: Shown, proc: NonNullable<Shown["proc"]>): string[] {
  const out = [
    `pid ${proc.pid} (group ${proc.pgid}) started ${proc.startedAt}${d.supervisor === null ? "" : `, supervisor pid ${d.supervisor.pid}`}`,
  ];
  const adoptions = d.exit?.adoptions ?? d.supervisor?.adoptions ?? 0;
  if (adoptions > 0) {
    out.push(
      `adopted ${adoptions === 1 ? "once" : `${adoptions} times`}: a supervisor died and a new one took over${d.supervisor === null ? "" : ` (last at ${d.supervisor.startedAt})`}`,
    );
  }
  return out;
}

function exitLines(exit: ExitFile): string[] {
  const out = [
    `${exit.reason}, code ${exit.code ?? "-"}, signal ${exit.signal ?? "-"}, ${exit.durationMs === null ? "?" : compactDuration(exit.durationMs)}`,
    `stop: term ${exit.stop.term}, kill ${exit.stop.kill}, swept ${exit.stop.swept}`,
  ];
  if (exit.containment !== null) out.push(`containment: ${containmentLine(exit)}`);
  if (exit.error !== null) out.push(`error ${exit.error.code}: ${inertText(exit.error.message)}`);
  if (exit.kind != null) out.push(`kind: ${exit.kind} (the supervisor's account)`);
  return out;
}

function recordLines(d: Shown, record: NonNullable<Shown["record"]>, nowMs: number): string[] {
  const out = [
    statusWords(record.status, record.reason),
    ...outcomeLines(record),
    ...checkLines(record),
    ...spendLines(record, d.spec),
    ...errorLines(record, nowMs),
  ];
  const waited = record.slotWaitMs ?? 0;
  if (waited > 0)
    out.push(`waited ${formatDuration(waited)} for heavy slots (not counted against idle or wall)`);
  if (record.changedFiles !== null) out.push(`changed: ${record.changedFiles.join(", ") || "nothing"}`);
  if (record.replyPath !== null) out.push(`reply: ${record.replyPath}`);
  out.push(...leftBehindLines(record, d.spec, d.admit));
  return out;
}

/** `queuedWhy`: why a queued message waits, for a CLI that takes messages only between turns. */
function steeringLines(talk: SteeringView, queuedWhy: string | null): string[] {
  const lines = conversationShowLines(talk.messages, talk.questions, queuedWhy);
  return lines.length === 0 ? ["no messages sent, no questions asked"] : lines;
}
