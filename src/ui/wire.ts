// What the dashboard's server sends its page (specs/ui.md, "The API"): types only, shared by the server
// (src/ui/server/) and the page (src/ui/page/). Every string in here may have been written by an agent or
// a user: the page renders each as text.

/** Tokens and cost as far as the files say (src/ui/server/usage-wire.ts reads whatever fields exist). */
export interface UsageWire {
  /** Input tokens, cached ones included. */
  input: number;
  cached: number;
  output: number;
  /** Fields beyond those three (cache writes, reasoning, …), as the record or activity names them. */
  more: Record<string, number>;
  costUsd: number | null;
  /** Where the cost comes from ("reported", "priced"), when the files say. */
  costSource: string | null;
  /** Caps the dispatch was given, by name ("tokens", "usd"), when it has any. */
  caps: Record<string, number>;
}

export interface QueueWire {
  position: number | null;
  since: string;
  blockedBy: string;
  /** What holds it back, in words ("capacity (cap 3)", "overlap: src/ (fix-tests)"). */
  blocker: string;
  notBefore: string | null;
}

export interface AttemptWire {
  dispatchId: string;
  attempt: number;
  backend: string | null;
  status: string | null;
  kind: string | null;
}

/** One row of a run: a dispatch, or a chain of attempts as its last attempt. */
export interface RowWire {
  dispatchId: string;
  name: string;
  backend: string | null;
  state: string;
  status: string | null;
  reason: string | null;
  error: { kind: string | null; message: string; retryAfter: string | null } | null;
  admittedAt: string | null;
  startedAt: string | null;
  endedAt: string | null;
  lastEvent: string | null;
  lastEventAt: string | null;
  /** When activity.json was last written: the supervisor's last word. */
  activityAt: string | null;
  openToolCalls: { label: string; openedAt: string }[];
  /** Provider retries in a row now, and in all. */
  retrying: number;
  retries: number;
  usage: UsageWire | null;
  queue: QueueWire | null;
  attempt: number;
  earlier: AttemptWire[];
  next: { backend: string; notBefore: string | null } | null;
  unread: boolean;
  problems: { code: string; message: string }[];
  /**
   * The worker's declared outcome (record.json `outcome`, `--outcome`): null when asked for and the final
   * message had none; absent when not asked for, and while it lives.
   */
  outcome?: { status: string; why: string } | null;
  /**
   * A steerable dispatch's talk, as `status --json` has it: questions nobody answered yet, its messages
   * by state, the first question waiting (live only). Null (or absent) when it is not steerable.
   */
  questions?: number | null;
  messages?: { queued: number; delivered: number; acted: number; failed: number } | null;
  asking?: { id: string; kind: string; asks: string; answerBy: string } | null;
  /** A sandboxed dispatch's sandbox (specs/sandbox.md; the row's `fence` field): its mode and what it refused; null: not sandboxed. */
  fence?: { mode: string; denied: number; firstDenied: string | null } | null;
  /**
   * Its check (`--verify`): the command, whether it passed (null: running, or no verdict), the chain's runs,
   * since when the run under way started; null (or absent): none.
   */
  check?: { command: string; passed: boolean | null; runs: number; since: string | null } | null;
  /**
   * The race it is an attempt of (admit.json `race`, specs/dispatch.md "A race"): the page shows a race as
   * one row that opens into its attempts. Null (or absent): none.
   */
  race?: { name: string; raceId: string; attempt: number } | null;
}

/** One bar of the run's timeline: one attempt, from admission to record. */
export interface BarWire {
  dispatchId: string;
  /**
   * The first attempt of its chain — or, for a turn of a conversation (dispatch --follow-up), of the
   * conversation's first turn: bars with one chain join.
   */
  chain: string;
  /** The turn it follows up (admit.json `followUpOf`): its join is drawn as a follow-up's. */
  followUpOf: string | null;
  attempt: number;
  name: string;
  state: string;
  status: string | null;
  admittedAtMs: number;
  /** When it left the queue (promoted, or its supervisor started); null: it never waited, or waits still. */
  queuedUntilMs: number | null;
  queued: boolean;
  endedAtMs: number | null;
}

export interface RunSummaryWire {
  run: string;
  live: number;
  queued: number;
  recorded: number;
  failed: number;
  tokens: number;
  costUsd: number | null;
  /** The run's budget, by name ("usd", "tokens", "minutes"), when run.json has one. */
  budget: Record<string, number>;
  lastChangedAt: string | null;
  loading: boolean;
}

export interface RunsWire {
  home: string;
  runs: RunSummaryWire[];
  now: number;
}

export interface RunWire {
  run: string;
  rows: RowWire[];
  bars: BarWire[];
  now: number;
}

/** A line of the event stream as people read it, dated when events.times has it. */
export interface EventLineWire {
  text: string;
  atMs: number | null;
  mark: "retry" | "error" | null;
}

export interface ToolCallWire {
  label: string;
  openedAtMs: number | null;
  closed: boolean;
  closedAtMs: number | null;
}

export interface UsagePointWire {
  /** Null while events.times does not date it yet. */
  atMs: number | null;
  tokens: number;
  costUsd: number | null;
}

/** A message sent to a steerable dispatch (`catherd send`), as readSteering reads it. */
export interface MessageWire {
  id: string;
  state: string;
  head: string;
  interrupt: boolean;
  sentAt: string | null;
  at: string | null;
  why: string | null;
  history: { state: string; at: string; why: string | null }[];
}

/** What a steerable dispatch asked, and the one answer it got (null: nobody has answered yet). */
export interface QuestionWire {
  id: string;
  kind: string;
  asks: string;
  askedAt: string;
  answerBy: string;
  answer: { allow: boolean; text: string | null; why: string | null; by: string; at: string } | null;
  delivered: boolean;
  /** Not answered, and the dispatch can still take an answer. */
  waiting: boolean;
}

export interface DispatchWire {
  run: string;
  row: RowWire;
  dir: string;
  brief: string | null;
  events: EventLineWire[];
  /** Event lines before those shown, left out. */
  eventsOmitted: number;
  toolCalls: ToolCallWire[];
  toolCallsOmitted: number;
  stall: { at: string; quietMs: number } | null;
  reply: string | null;
  patch: string | null;
  patchBytes: number | null;
  stderr: string[];
  usageOverTime: UsagePointWire[];
  record: unknown;
  exit: unknown;
  spec: unknown;
  notify: { claimed: boolean; log: string[] };
  /** The attempts of its chain, first to last. */
  attempts: AttemptWire[];
  /** A steerable dispatch's messages and questions (`show --json`'s `steering`); null when not steerable. */
  steering?: { messages: MessageWire[]; questions: QuestionWire[]; waiting: QuestionWire[] } | null;
  now: number;
}

/** A window of an account as its CLI last reported it (specs/quota.md). */
export interface AccountWindowWire {
  /** "claude/five_hour", "primary": its limit and name as the CLI spells them. */
  name: string;
  usedPercent: number | null;
  windowMinutes: number | null;
  resetsAt: string | null;
  /** allowed, warning, rejected; null when the CLI said none. */
  status: string | null;
  seenAt: string;
}

/** A queued dispatch an account's window holds: a link to its row. */
export interface ParkedWire {
  run: string;
  dispatchId: string;
  name: string;
}

/** An account of a CLI: its windows, whether it takes work now, and what waits for it. */
export interface AccountWire {
  backend: string;
  name: string;
  /** Its configuration folder; null for `default` (the environment's own). */
  dir: string | null;
  /**
   * open; probe: one dispatch at a time until its reset is confirmed (`window` spent, its reset passed);
   * held: out of window until `until`, `window` the one that frees last.
   */
  gate:
    | { state: "open" }
    | { state: "probe"; window: string }
    | { state: "held"; until: string; window: string };
  windows: AccountWindowWire[];
  /** Queued dispatches whose pool names it, parked for a window. */
  waiting: number;
  /** The first 20 of those, run by run. */
  parked: ParkedWire[];
}

export interface AccountsWire {
  accounts: AccountWire[];
  now: number;
}

/** What the server pushes on /api/events. */
export type PushWire =
  | { type: "runs" }
  | { type: "accounts" }
  | {
      type: "rows";
      run: string;
      rows: RowWire[];
      bars: BarWire[];
      /** Rows gone: removed, or folded into a later attempt's row. */
      removed: string[];
      /** Bars gone: their folders were removed. */
      removedBars: string[];
      now: number;
    }
  | { type: "dispatch"; run: string; dispatchId: string }
  | { type: "ended"; run: string; dispatchId: string; name: string; status: string };
