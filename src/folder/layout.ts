import * as fs from "node:fs";
import * as path from "node:path";
import { type RunPaths, runPathsOfRunDir } from "../infra/paths.js";

// The files of one dispatch folder (specs/dispatch-folder.md) and where a folder sits in a home. Every
// module that touches a dispatch folder names its files through here.

/** Every file a dispatch folder can hold, by role. */
export const FILES = {
  brief: "brief.md",
  spec: "spec.json",
  admit: "admit.json",
  queued: "queued.json",
  promoted: "promoted.json",
  /** The account it runs on (specs/quota.md), written before its supervisor starts. */
  account: "account.json",
  /** The hand-over of a chain to its next attempt is done (specs/dispatch.md, "The failover ladder"). */
  next: "next.json",
  supervisor: "supervisor.json",
  supervisorLock: "supervisor.lock",
  adoptLock: "adopt.lock",
  proc: "proc.json",
  events: "events.jsonl",
  stderr: "stderr.log",
  /** Usage the supervisor read from the CLI's own usage log (codex's rollout, gemini's session file). */
  usage: "usage.jsonl",
  thread: "thread.json",
  /** The provider's rate-limit windows as the CLI last reported them (specs/dispatch-folder.md). */
  quota: "quota.json",
  activity: "activity.json",
  stall: "stall.json",
  cancel: "cancel",
  exit: "exit.json",
  record: "record.json",
  reply: "reply.md",
  /** --answer-schema as copied at admission (specs/dispatch.md, "An answer that fits a schema"). */
  answerSchema: "answer-schema.json",
  /** The final answer, parsed and valid against answer-schema.json (specs/record.md, "The answer"). */
  answer: "answer.json",
  /** The check's run (`--verify`; specs/dispatch.md, "Checks and races"), and what it printed. */
  check: "verify.json",
  checkLog: "verify.log",
  /** The check's exit status, written by the shell that ran it (so that an adopter learns it). */
  checkExit: "verify.exit",
  seen: "seen",
  supervisorLog: "supervisor.log",
  supervisorOut: "supervisor.out",
  /**
   * Where an engine placed the supervisor: the job (specs/placement.md). An engine may keep files of its
   * own in the folder beside it (Slurm's job output, slurm.out): they are its engine's, in src/engines/.
   */
  placement: "placement.json",
  patch: "changes.patch",
  /** The claim of the dispatch's notification (--notify, --run-notify): its commands run once. */
  notify: "notify.json",
  /** What the notification commands printed, and how each ended. */
  notifyLog: "notify.log",
  /** When events.jsonl reached each size, as the supervisor read it: the time of every event line. */
  eventTimes: "events.times",
  /** The agent's private temp folder (TMPDIR), removed after the stop unless the spec keeps it. */
  tmp: "tmp",
  /** Room the supervisor keeps back while the agent runs, for exit.json on a full disk. */
  diskReserve: "disk-reserve",
  /**
   * A steerable dispatch's input channel (specs/steering.md): a FIFO the agent holds open for reading and
   * writing (so that a supervisor's death is not the end of its input), which the supervisor writes.
   */
  channel: "agent.in",
  /** Messages sent to the running agent, one file each, and the supervisor's receipts beside them. */
  inbox: "inbox",
  /** Held by a sender while it picks a message's id and puts its file in place: ids appear in order. */
  inboxLock: "inbox.lock",
  /** What the agent asked its caller, one file each, and the one answer each got. */
  questions: "questions",
  /** What the sandbox refused (specs/sandbox.md): a JSON line per refusal, after its `fence` line that says the sandbox. */
  sandboxLog: "sandbox.log",
  /** The sandbox as its supervisor raised it: where its proxy listens, so that an adopter listens there again. */
  sandboxFile: "fence.json",
  /** bubblewrap's status of the sandboxed agent (--json-status-fd): its pid, then its exit code. */
  sandboxStatus: "fence-status.json",
  /** Where a `catherd lock` of the agent reports (specs/lock.md): writable inside a sandbox, unlike the folder. */
  lockReports: "locks",
  /** Empty: the supervisor met a full disk and could not write exit.json even through its reserve. */
  diskFull: "disk-full",
} as const;
export type FolderFile = (typeof FILES)[keyof typeof FILES];

/** The path of one file of the folder `dir`. */
export function fileIn(dir: string, file: FolderFile): string {
  return path.join(dir, file);
}

/** A folder is a dispatch folder when it holds spec.json (a hand-written one) or admit.json. */
export function isDispatchFolder(dir: string): boolean {
  return fs.existsSync(fileIn(dir, FILES.spec)) || fs.existsSync(fileIn(dir, FILES.admit));
}

/** Where a dispatch folder sits: `<home>/runs/<run>/dispatches/<name>/<dispatchId>`. */
export interface FolderPlace {
  /** `<home>/runs/<run>`. */
  runDir: string;
  run: string;
  name: string;
  dispatchId: string;
}

/** The place of a folder laid out in a home, or null for a folder anywhere else (one written by hand). */
export function placeOf(dir: string): FolderPlace | null {
  const parts = path.resolve(dir).split(path.sep);
  const at = parts.length - 3;
  if (at < 2 || parts[at] !== "dispatches" || parts[at - 2] !== "runs") return null;
  return {
    runDir: parts.slice(0, at).join(path.sep),
    run: parts[at - 1] as string,
    name: parts[at + 1] as string,
    dispatchId: parts[at + 2] as string,
  };
}

/** The run a folder is laid out in, or null for a folder anywhere else. */
export function runOf(dir: string): RunPaths | null {
  const place = placeOf(dir);
  return place === null ? null : runPathsOfRunDir(place.runDir);
}
