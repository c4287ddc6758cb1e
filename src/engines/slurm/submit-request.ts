// The `sbatch` call that places a dispatch's supervisor (specs/placement.md, "Slurm"): pure, so that each
// flag is a table test. The batch script is given on stdin: sbatch keeps a copy of it, so it is a few
// lines that exec the command, never a program's whole text.

/** What a submission asks of the engine. */
export interface SubmitRequest {
  /** The job's name: says run and dispatch (`catherd.<run>.<dispatchId>`). */
  jobName: string;
  /** The file the batch script's stdout and stderr go to (in the dispatch folder, on shared storage). */
  outputPath: string;
  /** The folder the batch script starts in: the dispatch folder. */
  workDir: string;
  /** `--memory` of the dispatch; null: the partition's default. */
  memoryBytes: number | null;
  /** `--wall` of the dispatch; null: no limit of catherd's (the partition's limit holds). */
  wallMs: number | null;
  /** How long the supervisor's stop may take after the wall (its kill grace and the record). */
  graceMs: number;
  /** Licenses the job holds while it runs: `{codex: 1}` for a codex dispatch where the cluster caps codex. */
  licenses: Record<string, number>;
  /** `--slurm-opt` values, passed to sbatch as given, before the ones catherd sets. */
  extraArgs: readonly string[];
  /**
   * `--pass-env` names: exported by name (`--export=ALL,NAME`), so that their values travel only in
   * sbatch's own environment, never on its command line. The job gets the submitter's environment, as a
   * local supervisor gets the dispatcher's, whatever the site's default (`SBATCH_EXPORT`).
   */
  exportNames?: readonly string[];
  /** The command the job runs: `catherd supervise <dir>`, as argv. */
  command: readonly string[];
}

const MINUTE_MS = 60_000;

/** sbatch's --time in whole minutes (its resolution): the wall plus the grace, rounded up. */
export function timeLimitMinutes(wallMs: number, graceMs: number): number {
  return Math.max(1, Math.ceil((wallMs + graceMs) / MINUTE_MS));
}

/** sbatch's --mem: whole mebibytes, rounded up (Slurm's default unit; never below 1M). */
export function memoryMegabytes(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / (1024 * 1024)));
}

/**
 * A path as an sbatch filename pattern that means that path: `%` is a replacement symbol, written `%%`;
 * a path with a backslash is taken as it is (sbatch then replaces nothing).
 */
export function literalFilenamePattern(file: string): string {
  return file.includes("\\") ? file : file.replaceAll("%", "%%");
}

/** One word for /bin/sh, single-quoted. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The batch script: /bin/sh execs the command, so the job's processes are the command's. */
export function batchScript(command: readonly string[]): string {
  if (command.length === 0) throw new TypeError("a batch job needs a command");
  return `#!/bin/sh\nexec ${command.map(shellQuote).join(" ")}\n`;
}

/**
 * The arguments of `sbatch`, the script on its stdin. `--slurm-opt` values come first so that catherd's
 * own flags, which the folder protocol depends on (the output file, --no-requeue), win over them:
 * sbatch takes the last of a repeated flag.
 */
export function sbatchArgs(request: SubmitRequest): string[] {
  for (const [field, value] of [
    ["jobName", request.jobName],
    ["outputPath", request.outputPath],
    ["workDir", request.workDir],
  ] as const) {
    if (value === "" || /[\n\0]/.test(value)) throw new TypeError(`${field} must be one non-empty line`);
  }
  const args = [...request.extraArgs, "--parsable", `--job-name=${request.jobName}`];
  args.push(`--output=${literalFilenamePattern(request.outputPath)}`, "--open-mode=append");
  args.push(`--chdir=${request.workDir}`);
  // The engine never reruns a supervisor: an agent that may have started is catherd's to judge.
  args.push("--no-requeue");
  args.push(["--export=ALL", ...(request.exportNames ?? [])].join(","));
  if (request.memoryBytes !== null) args.push(`--mem=${memoryMegabytes(request.memoryBytes)}M`);
  if (request.wallMs !== null) args.push(`--time=${timeLimitMinutes(request.wallMs, request.graceMs)}`);
  const licenses = Object.entries(request.licenses)
    .filter(([, count]) => count > 0)
    .map(([name, count]) => `${name}:${count}`);
  if (licenses.length > 0) args.push(`--licenses=${licenses.join(",")}`);
  return args;
}
