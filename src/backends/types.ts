import type { LineFacts, Tokens } from "../domain/facts.js";
import type { Failure } from "../domain/failure.js";
import type { ExitFacts } from "../domain/status.js";
import type { StreamSummary } from "../domain/summary.js";
import type { AccessLevel, BackendId, EndingErrorCode, Status } from "../domain/vocab.js";

/** What a dispatch asks of a backend. Paths are absolute. */
export interface PlanRequest {
  bin: string;
  briefPath: string | null;
  model: string | null;
  effort: string | null;
  access: AccessLevel | null;
  thread: string | null;
  extraArgs: readonly string[];
}

/** How to run the CLI. The brief reaches it by stdin (`stdin: "brief"`) or a file it reads, never argv. */
export interface Plan {
  cmd: string;
  args: string[];
  env: Record<string, string>;
  stdin: "brief" | "none";
}

export interface BackendDefaults {
  idleMs: number;
  wallMs: number;
  /** How long the CLI may linger after its final event; null: never stopped for lingering. */
  graceAfterFinalMs: number | null;
}

/** The verdict of a whole dispatch, for record.json. */
export interface Outcome {
  status: Status;
  reply: string | null;
  tokens: Tokens;
  costUsd: number | null;
  /** For anything but `ok`: an error code (exit.json's, or the exit reason), and the failure's message. */
  error: { code: EndingErrorCode; message: string } | null;
  /** For anything but `ok`: the kind, the message and when to come back. */
  failure: Failure | null;
}

/** One agent CLI. No other module names a backend (specs/backends.md). */
export interface Backend {
  id: BackendId;
  /** A short name for 80-column tables ("claude" for claude-code). */
  label: string;
  /**
   * Where the command to run comes from. `cli`: the backend's own CLI — `--bin`, else `binEnv`, else
   * `defaultBin` on PATH. `args`: the first argument after `--` (any command), the rest its arguments.
   */
  command: "cli" | "args";
  /** The executable looked up on PATH when neither --bin nor `binEnv` names one ("" for `args`). */
  defaultBin: string;
  /** The environment variable that overrides the executable, e.g. CATHERD_CODEX_BIN. */
  binEnv: string;
  /** The command that installs the CLI, for `doctor` and E_BACKEND_MISSING ("" when nothing to install). */
  installHint: string;
  /** Arguments that make the CLI print its version (readiness at admission, `doctor`); empty: none. */
  versionArgs: readonly string[];
  /**
   * The oldest version of the CLI whose stream format this module knows (the version its recorded streams
   * come from); an older one is refused at admission. Null: no minimum.
   */
  minVersion: string | null;
  /** Whether a brief is required. */
  needsBrief: boolean;
  /**
   * Its stdout is text for people, not an event stream: `catherd logs` prints those lines as they are,
   * where it prints each event of a CLI as its `describe` (a one-line excerpt, also what status shows).
   */
  plainText: boolean;
  defaults: BackendDefaults;
  plan(request: PlanRequest): Plan;
  /** Facts of one stdout line (without its newline). Never throws; unknown lines are progress. */
  parse(line: string): LineFacts;
  /** Facts of one stderr line. Absent: every stderr line is progress. */
  parseStderr?(line: string): LineFacts;
  /**
   * Whether `id` has the form of this CLI's thread (session) ids, for `--thread`: null when it does, else
   * what is wrong. Absent: the backend cannot resume a thread.
   */
  checkThread?(id: string): string | null;
  finalize(summary: StreamSummary, exit: ExitFacts): Outcome;
}
