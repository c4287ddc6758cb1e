import type { ErrorFact, RetryFact } from "../ending/failure.js";
import type { QuotaWindow } from "../spend/quota.js";
import type { UsageReport } from "../spend/usage.js";

// What one line of an agent's output says, as far as the supervisor and the record care.

/** record.json's `tokens`, schema 1's summary of `usage`: `input` includes `cached` (and cache writes). */
export interface Tokens {
  input: number;
  cached: number;
  output: number;
}

export const ZERO_TOKENS: Tokens = Object.freeze({ input: 0, cached: 0, output: 0 });

/** What a CLI asks its caller (specs/steering.md, "Questions"). `request` is what its answer must carry. */
export interface AskFact {
  kind: "permission" | "question";
  asks: string;
  tool: string | null;
  input: unknown;
  request: Record<string, unknown>;
}

/** A tool call the agent opened; it keeps the agent "busy" until closed. */
export interface ToolOpen {
  id: string;
  label: string;
}

/** The CLI's terminal event. `isError` is the CLI's own verdict (its error flag wins over its subtype). */
export interface FinalFact {
  isError: boolean;
  message: string | null;
  /** The CLI's structured answer for a JSON Schema it was given (Claude's `structured_output`); absent: none. */
  structured?: unknown;
}

/**
 * The facts a backend reads from one line (`parse`). Every field but `progress` is optional; a line
 * that says nothing a backend understands is `{ progress: true }`.
 */
export interface LineFacts {
  /** Whether the line resets the quiet stretch. Retry lines and retry stack traces are not progress. */
  progress: boolean;
  thread?: string;
  toolsOpened?: readonly ToolOpen[];
  toolsClosed?: readonly string[];
  /** A provider retry: the CLI is waiting on its model provider, not working. */
  retry?: RetryFact;
  final?: FinalFact;
  /**
   * The CLI goes on after a final event it printed (opencode continues a compacted session): that final
   * no longer ends the dispatch.
   */
  continues?: boolean;
  /** What the line says about tokens and dollars (usage.ts says how each scope is counted). */
  usage?: UsageReport;
  /** The provider's rate-limit windows the line reports (quota.ts): what quota.json keeps. */
  quota?: readonly QuotaWindow[];
  /** The line carries usage that does not add up (negative, not a number, absurd): why it was ignored. */
  usageIgnored?: string;
  /**
   * Text of the agent's answer: `replace` sets the reply (an empty text clears it: a tool call makes what
   * came before narration), `append` extends it (streamed deltas), `message` adds a whole message as a
   * paragraph of its own, `result` is what the CLI calls its result: it replaces the reply unless the
   * messages gathered so far already end with it.
   */
  reply?: { text: string; mode: "replace" | "append" | "message" | "result" };
  /** A failure the CLI or its provider reported (not a retry): the record's kind and message come from these. */
  error?: ErrorFact;
  /** The CLI took a user message from its input: the uuid it was sent with (its echo of it). */
  taken?: string;
  /**
   * A turn of the CLI's session started (`running`) or ended, by its id: what a session protocol needs to
   * aim a message at the running turn (codex's app-server). The watch reads one thing of it: a turn's end
   * closes every tool call still open.
   */
  turn?: { id: string; running: boolean };
  /**
   * The CLI answered a request of catherd's, by the request's id: took it (`ok`) or refused it (a JSON-RPC
   * answer): what a session protocol needs to give a message once. No rule of the watch reads it.
   */
  answered?: { id: string; ok: boolean };
  /**
   * The CLI withdrew an ask of its own, by the `id` of its `request` (codex's serverRequest/resolved):
   * its question is closed unanswered.
   */
  withdrawn?: string | number;
  /** The CLI asks its caller (a permission, a question): what steering turns into questions/<id>.json. */
  asks?: AskFact;
  /** A short human line for `status` and `logs`: "$ npm test", "edit src/a.ts", "retrying 2/5". */
  describe?: string;
}

export const PROGRESS: LineFacts = Object.freeze({ progress: true });
export const NEUTRAL: LineFacts = Object.freeze({ progress: false });
