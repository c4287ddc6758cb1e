import type { Command } from "./command-io.js";

/**
 * How an orchestrating agent uses catherd well: printed by `catherd guide` for agents on the shell, and
 * served as the MCP prompt `catherd-guide` (src/cli/mcp/mcp-server.ts). Verbs are named as both see them: the
 * shell's `catherd wait` is the MCP tool `wait`, a flag `--max-parallel` is the argument `maxParallel`.
 */
export const GUIDE = `# catherd: a guide for orchestrating agents

catherd runs coding-agent CLIs (codex, claude-code, opencode, gemini) and any command (exec) under a
detached supervisor. Each dispatch is a folder on disk, and its record is written there before anyone is
told: nothing is lost when your tool call times out, you restart, or you forget.

## The loop
1. dispatch: backend, name (short; unique among live dispatches), brief (the whole task: the worker sees
   nothing else), cwd, and owns (the paths it will change, so that two workers never edit one file).
   It returns at once; the work goes on without you.
2. wait: names (none: every live dispatch), any (return at the first record), timeoutS (MCP: default 50,
   at most 300). It returns the records that are done and, for each dispatch still running, what it is
   doing: state, its open tool call and for how long, tokens so far. Call it again: it never blocks past
   its timeout, and nothing is lost between calls.
3. result <name>: the record and the reply. Check the work itself before you build on it.
Between calls, status shows every dispatch of the run; logs <name> with since=<cursor> (the cursor of
the previous logs call) shows only what is new; cancel <name> stops one you no longer need.

## Reading a record
- status ok: the CLI ended and said it succeeded. Still check changedFiles and run the tests.
- failed: the CLI or its command failed; error.message says why, logs <name> shows the last events.
- timeout: reason idle-timeout (no output for idle; an open tool call is not idle) or wall-timeout (wall
  passed). Dispatch again with a larger idle or wall only if it was making progress.
- limit: a provider quota, rate limit or outage (reason provider-unavailable, or the CLI's own words),
  or error.kind budget: it reached its maxTokens or maxCost (reason budget); raise the cap only if the
  brief is worth more.
- cancelled: someone cancelled it. lost: its supervisor died; the folder shows how far it got.
- Also: secs, usage (tokens as billed, per model), costUsd with costSource (reported: the CLI's own;
  priced: catherd's estimate; null: unknown), thread (give it as thread to continue that session), reply
  (the agent's final answer, also in the file replyPath). Cap a brief's spending with maxTokens (every
  token billed, cached input included) and maxCost (dollars at list prices).
- outcome: give outcome=true (--outcome) to learn what the worker says of its work: its brief then asks
  it to end with STATUS: complete|partial|blocked|refused — why, and the record has outcome {status, why}
  (null: it did not say). It is the worker's word beside status, never in its place: an ok record whose
  outcome is blocked or partial is not done. A chain does not fall back after blocked or refused.

## When to queue
Without queue, a dispatch that cannot start now is refused, never half-started: E_ADMIT_CAPACITY (the
run is at maxParallel), E_ADMIT_OVERLAP (a live dispatch owns an overlapping path), or a per-backend cap.
With queue=true it is admitted as queued instead and starts by itself, oldest first, as soon as a slot or
its paths free up: fire every brief with queue, then wait. status shows each queued one with its place
and what holds it; cancel removes one from the queue. A duplicate name is refused either way
(E_ADMIT_DUPLICATE). Never retry a refused dispatch in a loop.

## When to fall back
Give fallback (e.g. "claude-code,gemini", a model after a colon) when the brief could run on another
CLI: if an attempt ends limit (quota, rate-limit, provider-down) or failed with kind auth or model, the
next CLI takes the same brief as a new attempt, by itself. retryWithin (e.g. "10m") first retries the
same CLI when a rate limit says it resets within that time. wait and result follow the chain to its last
attempt; result lists every attempt with its kind. Without fallback, a limit record will not get better
by dispatching the same brief to the same CLI at once: pick another backend or come back after
error.retryAfter. Never fall back on failed (other kinds) or timeout: another provider would not fix the
brief or the work tree; read the record and the logs first.

## Subscription windows
A CLI on a subscription stops when its five-hour or weekly window is spent. catherd keeps each account's
windows: a dispatch whose account is out of window (or used 95 %: windowHeadroom) is admitted queued,
blockedBy window with the reset time, and starts by itself then — do not dispatch it again, wait. Give
account "auto" (or "a,b") to spread work over the CLI's accounts (catherd account list): a dispatch
stopped by its account's window goes on at once on another one.

## Asking for an answer
When you need a value rather than prose, give answerSchema (--answer-schema FILE): a JSON Schema the
worker's final answer must be valid against. catherd checks it itself; the record's answer is the parsed
value (result --answer prints it alone), or null with answerErrors when it did not fit. One repair turn
on the same thread with the validator's errors comes by itself (repair, default 1); after that the record
is failed, kind answer-invalid. An answer over catherd's limits (1,000,000 characters, 64 levels deep) is
failed, kind answer-over-limit, with no repair: ask for a smaller value.

## Checking the work
When "done" must mean the tests pass, give verify (--verify "npm test"): catherd runs that command in the
worker's folder after a turn that ended ok, through a heavy slot. Exit 0: the record is ok with
verify.passed true. Red: a repair turn on the same thread gets the command, its exit code and the tail of
its output (verifyRepairs, default 2); still red, the record is failed, kind verify. A check that could not
run (not found, past verifyTimeout, no slot) is kind verify-error: fix the command, not the work. While it
runs the dispatch is verifying; wait for it as for any other.

## Talking to a running worker
Dispatch claude-code with steerable=true (--steerable) when you may want to say more while it works:
send <name> text=… joins the running turn (after the tool call it waits on), interrupt=true stops the
turn and starts the next with your message; the message is queued, then delivered (the CLI took it), then
acted (it moved on it) — show <name> lists each, and what failed says why. keepOpen (e.g. "10m") keeps an
ended turn waiting for your next message. Give onQuestion ("wait 10m", allow, deny) to have its
permission asks and questions come to you: each is a notification and a question q1, q2… in show;
answer <name> question=q1 allow=true (or deny=true with why, or text=… for a question). What nobody
answers in time is denied. send to a dispatch that has ended starts a follow-up turn on its thread.

## Heavy commands
Several agents on one machine that all run the test suite or a full build at once make every run slow
and flaky. Run your own test suites and builds as catherd lock -- <command> (catherd lock -- npm test):
at most a few run at once on the machine, the rest wait their turn, first come first served; the
command runs as it is and catherd lock exits with its status. Give lockHint (--lock-hint) to every
dispatch whose brief runs tests or builds: a line added to its brief tells the worker to do the same.
A worker's wait for a slot is not idle time and does not count against its wall; status and wait show
it ("waiting for a heavy slot (2 ahead)", "running a heavy command: npm test, 2m10s"), and its record's
slotWaitMs says how long it waited in all. catherd lock --status shows who holds the slots.

## Errors
Every error has a code (E_...) and a fix line: do what the fix says. E_INPUT_INVALID names the argument
and the values it takes.
`;

export const guideCommand: Command<{ guide: string }> = {
  name: "guide",
  synopsis: "",
  positionals: 0,
  summary:
    "How an orchestrating agent uses catherd well: the loop, reading a record, when to queue, when to fall " +
    "back, talking to a running worker, heavy commands. The MCP server serves the same text as its prompt catherd-guide.",
  json: "{guide: the text}",
  options: {},
  async handler() {
    return { data: { guide: GUIDE }, text: GUIDE };
  },
};
