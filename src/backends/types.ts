import type { CliLogin } from "../domain/cli-login.js";
import type { EndingError, ExitFacts } from "../domain/ending/ending.js";
import type { StreamSummary } from "../domain/ending/summary.js";
import type { ModelAccount, TokenCounts } from "../domain/spend/usage.js";
import type { AccessLevel, BackendId, EndingErrorCode, Status } from "../domain/vocab.js";
import type { LineFacts } from "../domain/watch/facts.js";

/** What a dispatch asks of a backend. Paths are absolute. */
export interface PlanRequest {
  bin: string;
  briefPath: string | null;
  model: string | null;
  effort: string | null;
  access: AccessLevel | null;
  thread: string | null;
  extraArgs: readonly string[];
  /** --max-cost, for a CLI with a budget of its own to pass it to (Claude's --max-budget-usd); null: none. */
  maxCostUsd: number | null;
  /**
   * --answer-schema: the JSON Schema the final answer must fit, as the folder's answer-schema.json (its
   * path) and its text, for a CLI with a schema flag of its own (answerSchemaFlag); null: none. Absent: none.
   */
  answerSchema?: { path: string; text: string } | null;
  /**
   * `--steerable`: the CLI is started so that catherd can talk to it while it runs (specs/steering.md):
   * its input is the dispatch's channel, with `questions` its permission asks come to catherd. Absent or
   * null: not steerable. Only for a backend with `steer`. `bridge`: the program a steerable dispatch of a
   * CLI without a line protocol of its own runs as its agent, with node (opencode's, which runs `opencode
   * serve`: specs/steering.md, "The seam").
   */
  steer?: { questions: boolean; bridge?: { node: string; program: string } } | null;
  /**
   * The agent runs in catherd's sandbox (specs/sandbox.md): a CLI whose own sandbox cannot run inside it is
   * started without it (specs/backends.md, "Access levels"). Absent: false.
   */
  sandboxed?: boolean;
}

/** How to run the CLI. The brief reaches it by stdin (`stdin: "brief"`) or a file it reads, never argv. */
export interface Plan {
  cmd: string;
  args: string[];
  env: Record<string, string>;
  stdin: "brief" | "none" | "channel";
}

/** An answer to what the CLI asked, as the backend's protocol says it (questions.ts). */
export interface AskAnswer {
  allow: boolean;
  text: string | null;
  why: string | null;
}

/**
 * How catherd talks to a running CLI over its own protocol (specs/steering.md). Its input is a line
 * channel the supervisor writes (a FIFO in the dispatch folder that outlives the supervisor); what the
 * CLI says back comes in its stream, as `parse` reads it (LineFacts `taken`, `asks`, `turn`).
 */
export interface SteerProtocol {
  /** `mid-turn`: a message joins the running turn as soon as it is written; `turn-end`: after the turn. */
  joins: "mid-turn" | "turn-end";
  /** For `turn-end`: why a message sent while a turn runs stays queued, in `show`'s words. */
  waits?: string;
  /**
   * The conversation of one dispatch, made by its supervisor (an adopter makes its own and feeds it the
   * stream's backlog first): the lines of a message and an interrupt, which may depend on where the CLI's
   * session stands (codex's thread and running turn).
   */
  session(start: SessionStart): SteerSession;
  /** The line that answers an ask (`request` as `asks` gave it, `input` the tool's input). */
  responseLine(request: Readonly<Record<string, unknown>>, input: unknown, answer: AskAnswer): string;
  /**
   * The line that ends the session of an idle CLI, which then exits by itself; absent: the supervisor
   * stops it once its conversation is over.
   */
  endLine?(requestId: string): string;
  /**
   * How `doctor` checks that the CLI starts its session protocol (its launch flags change between
   * releases): the arguments that start it, the lines of a handshake, and what a line of its stdout says
   * of it (null: nothing; else answered, ok or not, in a few words). Absent: nothing to check apart from
   * `--version` (the protocol is the CLI's ordinary stream).
   */
  probe?: SessionProbe;
}

/** A session protocol's check at `doctor` (SteerProtocol.probe). */
export interface SessionProbe {
  args: readonly string[];
  lines: readonly string[];
  judge(line: string): { ok: boolean; detail: string } | null;
}

/** What a session starts from: the dispatch's command line and environment, as its plan made them. */
export interface SessionStart {
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  /** The folder the CLI runs in (spec.json's cwd), for a protocol that names it (gemini's session/new). */
  cwd?: string;
  /**
   * 0 (or absent) for the dispatch's first supervisor, which knows everything written to the channel; n for
   * its n-th adopter, which does not know what the supervisors before it wrote.
   */
  adoption?: number;
}

/**
 * A protocol's side of one dispatch's conversation. No I/O: it sees the stream's facts and says which
 * lines to write. A message it cannot give yet (its CLI's session is not ready for it) it keeps, and gives
 * in a later `due`; the message's receipt waits for the CLI's echo either way.
 */
export interface SteerSession {
  /**
   * One line's facts, in stream order, the backlog first. A session that settles part of a line itself
   * returns the facts as the rest of steering should see them (gemini's: an ask it denies at once is no
   * question; the end of a turn withdraws the ask it left open); undefined: as they came.
   */
  observe(facts: LineFacts): LineFacts | undefined;
  /**
   * Lines owed at a look before anything else (a handshake, a message kept until now); [] for none. Each
   * element goes to the channel in one write: one that holds several lines (joined by newlines) reaches the
   * CLI whole or not at all, as long as it is under the pipe's atomic size (PIPE_BUF, 4096 bytes).
   */
  due(): string[];
  /** The lines that give the CLI a user message now; `uuid` names it (the CLI echoes it when taken). */
  userLines(text: string, uuid: string): string[];
  /** The lines that stop the current turn ([] when none runs); `requestId` is the dispatch's own. */
  interruptLines(requestId: string): string[];
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
  /** Every token, in total and by model, with the CLI's own dollars where it gave them (record.ts prices the rest). */
  usage: { total: TokenCounts; models: ModelAccount[] };
  /** For anything but `ok`: an error code (exit.json's, or the exit reason), and the failure's message. */
  error: { code: EndingErrorCode; message: string } | null;
  /** For anything but `ok`: the code, the kind, the message and when to come back (domain/ending/ending.ts). */
  failure: EndingError | null;
}

/** What a backend may read to tell who bills a dispatch: its command line, environment and files. */
export interface BillingContext {
  /** spec.json's args: the CLI's command line. */
  args: readonly string[];
  /** The agent's environment (the supervisor's, with spec.json's env over it). */
  env: Readonly<Record<string, string | undefined>>;
  /** A small text file's content, or null when it cannot be read. */
  readText(path: string): string | null;
}

/**
 * Who bills a dispatch's tokens, as far as the CLI's command line and configuration say: the provider
 * (a price table's id: anthropic, openai, google…; null: unknown) and the model a stream that names
 * none ran on (null: unknown).
 */
export interface Billing {
  provider: string | null;
  model: string | null;
}

/** What a usage log's reader may look at to find the log. */
export interface UsageLogContext {
  env: Readonly<Record<string, string | undefined>>;
  /** The names in a folder, or [] when it cannot be read. */
  listDir(path: string): string[];
  /** The first line of a file, or null. */
  firstLine(path: string): string | null;
}

/** What one line of a usage log says: when (ISO, the CLI's clock), the model from then on, a report. */
export interface UsageLogLine {
  at: string | null;
  model?: string;
  facts?: Pick<LineFacts, "usage" | "usageIgnored" | "quota">;
}

/**
 * A file outside the stream where the CLI writes the usage of each model response as it comes (codex's
 * rollout, gemini's session file): finer than its stream, which reports usage once at the end. Where the
 * CLI writes its quota windows there and not in its stream (codex's rollout), they are read from it too.
 */
export interface UsageLog {
  /** The log of `thread`, or null when it is not (yet) there. */
  locate(thread: string, context: UsageLogContext): string | null;
  /** What one of its lines says; null for the lines that carry no usage (most of them). */
  parse(line: string): UsageLogLine | null;
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
  /**
   * The environment variable that names the CLI's configuration folder (CLAUDE_CONFIG_DIR, CODEX_HOME…):
   * how an account (specs/quota.md) is given to it. Absent: the backend has no accounts (exec).
   */
  accountVariable?: string;
  /**
   * Where the CLI keeps its login (the files its own login writes, the variables that stand for one): what
   * `doctor` looks for on a host a dispatch is placed on. Absent: nothing to log in to (exec).
   */
  login?: CliLogin;
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
   * Whether its output reports the tokens it spends: without, --max-tokens and --max-cost could never
   * fire, and admission refuses them (specs/dispatch.md, "Caps on spending").
   */
  reportsUsage: boolean;
  /**
   * Its stdout is text for people, not an event stream: `catherd logs` prints those lines as they are,
   * where it prints each event of a CLI as its `describe` (a one-line excerpt, also what status shows).
   */
  plainText: boolean;
  defaults: BackendDefaults;
  /**
   * Whether the CLI takes --answer-schema's schema through a flag of its own (Claude's --json-schema,
   * codex's --output-schema); false: the contract is appended to the brief (specs/backends.md).
   */
  answerSchemaFlag: boolean;
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
  /** Who bills its tokens (specs/backends.md, "Usage and cost"). Absent: unknown (exec). */
  billing?(context: BillingContext): Billing;
  /** Its usage log, where it keeps one that is finer than its stream. */
  usageLog?: UsageLog;
  /** How catherd talks to it while it runs; absent: it cannot be steered (`send` refuses). */
  steer?: SteerProtocol;
  /**
   * The CLI's executable in a plan of this backend (spec.json's cmd and args), where the plan runs it
   * through a program of catherd's (opencode's bridge); absent: the plan's command.
   */
  cliBin?(cmd: string, args: readonly string[]): string;
}
