// What Slurm's commands print, parsed (specs/placement.md, "Slurm"). Pure: the text in, facts out; the
// commands are run by the other modules of this folder. Every format here was read from Slurm 22.05's own output (the
// captures in test/fixtures/slurm/), not from memory.

/** A job as the engine describes it. Fields the engine left empty or "(null)" are null. */
export interface SlurmJob {
  jobId: string;
  name: string | null;
  /** JobState as Slurm spells it: PENDING, RUNNING, COMPLETED, CANCELLED, TIMEOUT, NODE_FAIL, … */
  state: string;
  /** Why it is in that state: Licenses, Resources, Priority, TimeLimit, NodeDown, …; null for None. */
  reason: string | null;
  /** The node the batch script runs (or ran) on; null while pending. */
  node: string | null;
  /** ExitCode `code:signal` of the batch script; null when not given. */
  exit: { code: number; signal: number } | null;
  submitTime: string | null;
  startTime: string | null;
  endTime: string | null;
  /** The licenses the job holds or waits for, as given to -L ("codex:1"). */
  licenses: string | null;
  stdout: string | null;
  /** Who cancelled it, where the engine says (sacct's "CANCELLED by 0"): a uid. */
  cancelledBy: string | null;
}

/** `sbatch --parsable` prints `<jobid>` or `<jobid>;<cluster>`; null for anything else. */
export function parseSubmitted(stdout: string): { jobId: string; cluster: string | null } | null {
  const line = stdout
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .at(-1);
  const m = line === undefined ? null : /^(\d+)(?:;(\S+))?$/.exec(line);
  if (m === null) return null;
  return { jobId: m[1] as string, cluster: m[2] ?? null };
}

/**
 * One line of `scontrol show … -o` as its `Key=Value` fields. Values hold `=` (TRES=cpu=1,mem=100M) and,
 * rarely, spaces (a job name given with spaces): a word that does not start a new `Key=` continues the
 * value before it. Keys are words with `:` and `/` (AllocNode:Sid, CPUs/Task).
 */
export function parseKeyValues(line: string): Record<string, string> {
  const fields: Record<string, string> = {};
  let last: string | null = null;
  for (const word of line.trim().split(" ")) {
    const m = /^([A-Za-z][A-Za-z0-9_:/]*)=(.*)$/.exec(word);
    if (m !== null) {
      last = m[1] as string;
      fields[last] = m[2] as string;
    } else if (last !== null) {
      fields[last] = `${fields[last]} ${word}`;
    }
  }
  return fields;
}

/** What Slurm prints for "nothing". */
const NOTHING = new Set(["", "(null)", "None", "NONE", "N/A", "n/a", "Unknown"]);

/** A field's value, or null where Slurm printed one of its words for "nothing". */
function orNull(value: string | undefined): string | null {
  if (value === undefined) return null;
  const v = value.trim();
  return NOTHING.has(v) ? null : v;
}

/** `0:15` → {code: 0, signal: 15}. */
export function parseExitCode(value: string | undefined): { code: number; signal: number } | null {
  const m = value === undefined ? null : /^(\d+):(\d+)$/.exec(value.trim());
  return m === null ? null : { code: Number(m[1]), signal: Number(m[2]) };
}

/** A job from one line of `scontrol show job -o <id>`; null when the line names no job. */
export function parseScontrolJob(line: string): SlurmJob | null {
  const f = parseKeyValues(line);
  const jobId = orNull(f.JobId);
  const state = orNull(f.JobState);
  if (jobId === null || state === null) return null;
  return {
    jobId,
    name: orNull(f.JobName),
    state,
    reason: orNull(f.Reason),
    node: orNull(f.BatchHost) ?? orNull(f.NodeList),
    exit: parseExitCode(f.ExitCode),
    submitTime: orNull(f.SubmitTime),
    // A pending job's StartTime is the engine's guess, and a job cancelled while pending gets the time of
    // the cancel: a start is only a start once the job has had a node.
    startTime: (orNull(f.BatchHost) ?? orNull(f.NodeList)) ? orNull(f.StartTime) : null,
    endTime: state === "PENDING" || state === "RUNNING" ? null : orNull(f.EndTime),
    licenses: orNull(f.Licenses),
    stdout: orNull(f.StdOut),
    cancelledBy: null,
  };
}

/** The squeue format catherd asks for: one job a line, fields split by `|` (job names never hold one). */
export const SQUEUE_FORMAT = "%i|%j|%T|%r|%B|%S|%e";

/** Jobs from `squeue -h -t all -o SQUEUE_FORMAT`; lines that do not fit are skipped. */
export function parseSqueue(stdout: string): SlurmJob[] {
  const jobs: SlurmJob[] = [];
  for (const line of stdout.split("\n")) {
    const parts = line.split("|");
    if (parts.length !== 7) continue;
    const [jobId, name, state, reason, batchHost, start, end] = parts.map((p) => p.trim());
    if (jobId === undefined || !/^\d+$/.test(jobId) || orNull(state) === null) continue;
    const node = orNull(batchHost);
    jobs.push({
      jobId,
      name: orNull(name),
      state: state as string,
      reason: orNull(reason),
      node,
      exit: null,
      submitTime: null,
      startTime: node === null ? null : orNull(start),
      endTime: state === "PENDING" || state === "RUNNING" ? null : orNull(end),
      licenses: null,
      stdout: null,
      cancelledBy: null,
    });
  }
  return jobs;
}

/** The sacct fields catherd asks for, in this order (`sacct -n -P -X -o …`). */
export const SACCT_FIELDS = "JobID,JobName,State,Reason,NodeList,ExitCode,Submit,Start,End";

/**
 * The job from `sacct -n -P -X -j <id> -o SACCT_FIELDS` (accounting on): `|`-separated, one line for the
 * allocation. The State of a cancelled job names who: "CANCELLED by 1000".
 */
export function parseSacct(stdout: string): SlurmJob | null {
  for (const line of stdout.split("\n")) {
    const parts = line.split("|");
    if (parts.length !== 9) continue;
    const [jobId, name, stateText, reason, nodes, exit, submit, start, end] = parts.map((p) => p.trim());
    if (jobId === undefined || !/^\d+$/.test(jobId)) continue;
    const m = /^(\S+)(?: by (\d+))?$/.exec(stateText ?? "");
    if (m === null) continue;
    const state = m[1] as string;
    const node = orNull(nodes) === "None assigned" ? null : orNull(nodes);
    return {
      jobId,
      name: orNull(name),
      state,
      reason: orNull(reason),
      node,
      exit: parseExitCode(exit),
      submitTime: orNull(submit),
      startTime: node === null ? null : orNull(start),
      endTime: state === "PENDING" || state === "RUNNING" ? null : orNull(end),
      licenses: null,
      stdout: null,
      cancelledBy: m[2] ?? null,
    };
  }
  return null;
}

/** A license as `scontrol show lic -o` prints it. */
export interface SlurmLicense {
  name: string;
  total: number;
  used: number;
  free: number;
}

/** The cluster's licenses from `scontrol show lic -o`, by name. */
export function parseLicenses(stdout: string): Record<string, SlurmLicense> {
  const licenses: Record<string, SlurmLicense> = {};
  for (const line of stdout.split("\n")) {
    const f = parseKeyValues(line);
    const name = orNull(f.LicenseName);
    if (name === null) continue;
    licenses[name] = {
      name,
      total: Number(f.Total ?? 0),
      used: Number(f.Used ?? 0),
      free: Number(f.Free ?? 0),
    };
  }
  return licenses;
}

/**
 * The line slurmstepd writes into a job's output when the engine ends it:
 * `slurmstepd-<node>: error: *** JOB 4 ON vm CANCELLED AT 2026-12-01T11:15:06 DUE TO TIME LIMIT ***`.
 * It outlives the engine's memory of the job (MinJobAge) in a cluster without accounting. `due` is the
 * engine's cause in its words (TIME LIMIT, NODE FAILURE, PREEMPTION), null for a plain cancel.
 */
export interface StepdNotice {
  jobId: string;
  node: string;
  at: string;
  due: string | null;
  /** The notice as written, between the stars. */
  words: string;
}

/** The last engine notice in a job's output, or null. */
export function parseStepdNotice(output: string): StepdNotice | null {
  let found: StepdNotice | null = null;
  const notice =
    /\*\*\* (JOB (\d+) ON (\S+) CANCELLED AT (\S+)(?: DUE TO ([A-Z][A-Z ]*?))?(?:, [^*]*?)?) \*\*\*/g;
  for (const m of output.matchAll(notice)) {
    found = {
      jobId: m[2] as string,
      node: m[3] as string,
      at: m[4] as string,
      due: m[5] ?? null,
      words: m[1] as string,
    };
  }
  return found;
}

/**
 * The engine's own words from a failed command's stderr: its `error:` lines without the program prefix,
 * the last (most specific) first — `Batch job submission failed: Invalid license specification`.
 */
export function engineWords(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .map((l) => l.replace(/^[a-z_]+(?:-\S+)?: (?:error: )?/, ""));
  return lines.length === 0 ? "" : [...lines].reverse().join("; ");
}

/** Whether a scontrol or squeue stderr says the engine does not know the job (never had it, or purged it). */
export function saysUnknownJob(stderr: string): boolean {
  return /Invalid job id specified/.test(stderr);
}

/** Whether sacct says the cluster keeps no accounting. */
export function saysAccountingDisabled(stderr: string): boolean {
  return /accounting storage is disabled/i.test(stderr);
}

/**
 * Whether a client command's stderr says Slurm is not set up on this host: no configuration found
 * (`Could not establish a configuration source`, an unreadable `slurm.conf`) or no controller answering
 * (`Unable to contact slurm controller`).
 */
export function saysUnconfigured(stderr: string): boolean {
  return /Could not establish a configuration source|fetch_config|slurm\.conf|Unable to contact slurm controller|Unable to establish (?:a )?controller/i.test(
    stderr,
  );
}
