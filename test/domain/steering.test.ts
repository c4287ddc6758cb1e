import { describe, expect, it } from "vitest";
import {
  type QuestionItem,
  questionStep,
  type ResponseFile,
  responseStep,
} from "../../src/domain/steering/questions.js";
import {
  BRIEF,
  type InboxItem,
  initialSteer,
  keptOpenMs,
  lookInbox,
  notGiven,
  observeLine,
  type SteerConfig,
  type SteerState,
  type SteerWorld,
  steerSignals,
  takeAsks,
  undelivered,
} from "../../src/domain/steering/steer-decisions.js";
import type { AskFact, LineFacts } from "../../src/domain/watch/facts.js";

// The supervisor's decisions in a steerable dispatch's conversation (specs/steering.md, "The seam"), one
// row per rule, on a fake clock: `now` is the loop's (monotonic ms), WALL the wall clock's.

const WALL = Date.parse("2026-12-02T06:00:00.000Z");
const config = (over: Partial<SteerConfig> = {}): SteerConfig => ({
  joins: "mid-turn",
  canEnd: true,
  settings: { keepOpenMs: null, onQuestion: null },
  brief: "fix the test",
  ...over,
});
/** A conversation whose brief was taken and whose first turn has ended. */
const idle = (over: Partial<SteerState> = {}): SteerState => ({
  ...initialSteer("fix the test", 0),
  briefTaken: true,
  ...over,
});
const item = (id: string, over: Partial<InboxItem> = {}): InboxItem => ({
  id,
  state: "queued",
  message: { text: `text of ${id}`, interrupt: false },
  torn: null,
  ...over,
});
const interrupting = (id: string) => item(id, { message: { text: `text of ${id}`, interrupt: true } });
const give = (id: string, text = `text of ${id}`, interrupt = false) => ({
  kind: "give",
  id,
  text,
  interrupt,
});
const moved = (id: string, from: string, to: string, why?: string) => ({
  kind: "move",
  id,
  from,
  to,
  ...(why === undefined ? {} : { why }),
});
const line = (facts: Partial<LineFacts>): LineFacts => ({ progress: true, ...facts });
const final = { isError: false, message: null };
const ask = (n: number): AskFact => ({
  kind: "permission",
  asks: "$ npm test",
  tool: "Bash",
  input: { command: "npm test" },
  request: { request_id: `r${n}` },
});
const world = (over: Partial<SteerWorld> = {}): SteerWorld => ({
  queued: false,
  pending: false,
  questionDue: null,
  wallMs: WALL,
  ...over,
});
const question = (over: Partial<QuestionItem> = {}): QuestionItem => ({
  question: { id: "q1", kind: "permission", answerBy: new Date(WALL + 60_000).toISOString() },
  answer: null,
  deliveredAt: null,
  ...over,
});
const answer = (over: Partial<ResponseFile> = {}): ResponseFile => ({
  schema: 1,
  id: "q1",
  allow: true,
  text: null,
  why: null,
  by: "person",
  at: "t",
  ...over,
});
const WAIT = { policy: "wait", waitMs: 60_000 } as const;

interface Row {
  rule: string;
  run: () => unknown;
  expected: unknown;
}
const table = (rows: Row[]) => {
  for (const row of rows) it(row.rule, () => expect(row.run()).toEqual(row.expected));
};

describe("which message goes to the CLI next, and when (lookInbox)", () => {
  table([
    {
      rule: "the brief goes first, before any message",
      run: () => lookInbox(initialSteer("fix the test", 0), config(), [item("m1")], 0).actions,
      expected: [give(BRIEF, "fix the test")],
    },
    {
      rule: "a message waits while the brief is given and not yet taken",
      run: () => lookInbox({ ...initialSteer("fix", 0), given: [BRIEF] }, config(), [item("m1")], 0).actions,
      expected: [],
    },
    {
      rule: "a dispatch without a brief gives its messages at once",
      run: () => lookInbox(initialSteer(null, 0), config({ brief: null }), [item("m1")], 0).actions,
      expected: [give("m1")],
    },
    {
      rule: "a CLI that takes messages mid-turn gets one at once, its turn running",
      run: () => lookInbox(idle({ turnOpen: true }), config(), [item("m1")], 0).actions,
      expected: [give("m1")],
    },
    {
      rule: "a CLI that takes messages at a turn's end gets none while its turn runs",
      run: () => lookInbox(idle({ turnOpen: true }), config({ joins: "turn-end" }), [item("m1")], 0).actions,
      expected: [],
    },
    {
      rule: "a CLI that takes messages at a turn's end gets one once the turn has ended",
      run: () => lookInbox(idle(), config({ joins: "turn-end" }), [item("m1")], 0).actions,
      expected: [give("m1")],
    },
    {
      rule: "--interrupt stops the running turn first, then gives the message",
      run: () => lookInbox(idle({ turnOpen: true }), config(), [interrupting("m1")], 0),
      expected: {
        state: idle({ turnOpen: true, interrupting: "interrupt-m1", given: ["m1"] }),
        actions: [{ kind: "interrupt", requestId: "interrupt-m1" }, give("m1", "text of m1", true)],
      },
    },
    {
      rule: "--interrupt with no turn running interrupts nothing",
      run: () => lookInbox(idle(), config(), [interrupting("m1")], 0).actions,
      expected: [give("m1", "text of m1", true)],
    },
    {
      rule: "--interrupt does not wait for the turn's end, whatever the CLI",
      run: () =>
        lookInbox(idle({ turnOpen: true }), config({ joins: "turn-end" }), [interrupting("m1")], 0).actions,
      expected: [{ kind: "interrupt", requestId: "interrupt-m1" }, give("m1", "text of m1", true)],
    },
    {
      rule: "messages go in the inbox's order, each given once",
      run: () => lookInbox(idle({ given: ["m1"] }), config(), [item("m1"), item("m2"), item("m3")], 0),
      expected: { state: idle({ given: ["m1", "m2", "m3"] }), actions: [give("m2"), give("m3")] },
    },
    {
      rule: "a message no longer queued is not given (delivered, acted or failed)",
      run: () =>
        lookInbox(
          idle(),
          config(),
          [
            item("m1", { state: "delivered" }),
            item("m2", { state: "acted" }),
            item("m3", { state: "failed" }),
          ],
          0,
        ).actions,
      expected: [],
    },
    {
      rule: "a file that is not a message is failed, saying why, and the next one goes on",
      run: () =>
        lookInbox(idle(), config(), [item("m1", { message: null, torn: "it is gone" }), item("m2")], 0)
          .actions,
      expected: [
        moved("m1", "queued", "failed", "the message file is not a message: it is gone"),
        give("m2"),
      ],
    },
    {
      rule: "a message given ends an ended turn's wait for one, counting the wait",
      run: () => lookInbox(idle({ waitingSince: 100, waitedMs: 50 }), config(), [item("m1")], 400).state,
      expected: idle({ waitingSince: null, waitedMs: 350, given: ["m1"] }),
    },
    {
      rule: "a message the closed channel refused is given again at the next look",
      run: () => {
        const first = lookInbox(idle(), config(), [item("m1")], 0);
        return lookInbox(notGiven(first.state, "m1"), config(), [item("m1")], 10).actions;
      },
      expected: [give("m1")],
    },
  ]);
});

describe("when a message counts delivered and acted (observeLine)", () => {
  table([
    {
      rule: "an echo marks the message delivered, opens a turn and waits for its first act",
      run: () => observeLine(idle({ given: ["m1"] }), line({ taken: "u1" }), "m1", 10),
      expected: {
        state: idle({ turnOpen: true, awaitingAct: ["m1"] }),
        actions: [moved("m1", "queued", "delivered")],
        facts: line({ taken: "u1" }),
      },
    },
    {
      rule: "a failure before the brief was taken (the CLI could not open its session) ends the conversation: nothing given will be taken",
      run: () => {
        const failed = line({ final: { isError: true, message: "no rollout found" } });
        const step = observeLine({ ...initialSteer("fix", 0), given: [BRIEF, "m1"] }, failed, null, 10);
        return [
          step.state,
          step.actions,
          steerSignals(step.state, config({ canEnd: false }), world(), 20).signals.ended,
        ];
      },
      expected: [idle({ given: [] }), [], true],
    },
    {
      rule: "an echo of the brief marks it taken, with no receipt",
      run: () => observeLine({ ...initialSteer("fix", 0), given: [BRIEF] }, line({ taken: "u" }), BRIEF, 10),
      expected: { state: idle({ turnOpen: true }), actions: [], facts: line({ taken: "u" }) },
    },
    {
      rule: "an echo counts for every message given before it (a CLI that merges them)",
      run: () => observeLine(idle({ given: ["m1", "m2", "m3"] }), line({ taken: "u2" }), "m2", 10),
      expected: {
        state: idle({ turnOpen: true, given: ["m3"], awaitingAct: ["m1", "m2"] }),
        actions: [moved("m1", "queued", "delivered"), moved("m2", "queued", "delivered")],
        facts: line({ taken: "u2" }),
      },
    },
    {
      rule: "an echo of a message not waiting to be taken (echoed again) counts for itself alone",
      run: () => observeLine(idle({ given: ["m2"] }), line({ taken: "u1" }), "m1", 10),
      expected: {
        state: idle({ turnOpen: true, given: ["m2"], awaitingAct: ["m1"] }),
        actions: [moved("m1", "queued", "delivered")],
        facts: line({ taken: "u1" }),
      },
    },
    {
      rule: "an echo of no message the dispatch knows changes nothing",
      run: () => observeLine(idle({ given: ["m1"] }), line({ taken: "u9" }), null, 10),
      expected: { state: idle({ given: ["m1"] }), actions: [], facts: line({ taken: "u9" }) },
    },
    {
      rule: "an echo ends an ended turn's wait for a message, counting the wait",
      run: () => observeLine(idle({ waitingSince: 100 }), line({ taken: "u1" }), "m1", 700).state.waitedMs,
      expected: 600,
    },
    ...(
      [
        ["a model's words", { reply: { text: "ok", mode: "message" } }],
        ["a tool call", { toolsOpened: [{ id: "t1", label: "$ ls" }] }],
        ["a usage report", { usage: { scope: "turn", tokens: { input: 1, cached: 0, output: 1 } } }],
        ["a final", { final }],
      ] as const
    ).map(([what, facts]) => ({
      rule: `${what} after a take marks it acted`,
      run: () =>
        observeLine(
          idle({ turnOpen: true, awaitingAct: ["m1"] }),
          line(facts as Partial<LineFacts>),
          null,
          20,
        ).actions,
      expected: [moved("m1", "delivered", "acted")],
    })),
    {
      rule: "a line that is not the CLI working (a retry, a thread) leaves a taken message delivered",
      run: () =>
        observeLine(
          idle({ turnOpen: true, awaitingAct: ["m1"] }),
          line({ thread: "s1", progress: false }),
          null,
          20,
        ).actions,
      expected: [],
    },
    {
      rule: "a final ends the turn",
      run: () => observeLine(idle({ turnOpen: true }), line({ final }), null, 20).state.turnOpen,
      expected: false,
    },
    {
      rule: "the final of a turn an interrupt stopped is taken out of the stream, and the turn goes on",
      run: () =>
        observeLine(
          idle({ turnOpen: true, interrupting: "interrupt-m1" }),
          line({
            final: { isError: true, message: null },
            error: { kind: null, message: "x", status: null, words: "cli", retryAfter: null },
          }),
          null,
          20,
        ),
      expected: {
        state: idle({ turnOpen: true }),
        actions: [{ kind: "interrupted", requestId: "interrupt-m1" }],
        facts: line({ describe: "turn interrupted" }),
      },
    },
    {
      rule: "an ask is kept for the next look",
      run: () => observeLine(idle(), line({ asks: ask(1) }), null, 20).state.asks,
      expected: [ask(1)],
    },
  ]);
});

describe("after a supervisor restart finds messages in flight (an adopter, from initialSteer)", () => {
  const adopter = () => initialSteer("fix the test", 0);
  table([
    {
      rule: "an echo in the backlog of a message the dead supervisor gave marks it delivered",
      run: () => observeLine(adopter(), line({ taken: "u1" }), "m1", 0).actions,
      expected: [moved("m1", "queued", "delivered")],
    },
    {
      rule: "the brief echoed in the backlog is not given again; what is still queued is given again",
      run: () => {
        const read = observeLine(adopter(), line({ taken: "u0" }), BRIEF, 0);
        const done = observeLine(read.state, line({ final }), null, 0);
        return lookInbox(done.state, config(), [item("m1", { state: "acted" }), item("m2")], 10).actions;
      },
      expected: [give("m2")],
    },
    {
      rule: "a backlog without the brief's echo gives the brief again (the CLI skips it if it had it)",
      run: () => lookInbox(adopter(), config(), [item("m1")], 0).actions,
      expected: [give(BRIEF, "fix the test")],
    },
  ]);
});

describe("what the CLI asks becomes a question (takeAsks)", () => {
  table([
    {
      rule: "each ask becomes q<n>, after the questions already asked",
      run: () =>
        takeAsks(idle({ asked: 2, asks: [ask(1)] }), [], WAIT, WALL).questions.map((q) => q.question.id),
      expected: ["q3"],
    },
    {
      rule: "an ask seen again (an adopter reading the backlog) is the question already written",
      run: () => takeAsks(idle({ asks: [ask(1)] }), [{ question: { request: ask(1).request } }], WAIT, WALL),
      expected: { state: idle(), questions: [] },
    },
    {
      rule: "the same ask twice in one look is one question",
      run: () => takeAsks(idle({ asks: [ask(1), ask(1), ask(2)] }), [], WAIT, WALL).questions.length,
      expected: 2,
    },
    {
      rule: "under --on-question wait it is to be answered by the wait's end, and someone is told",
      run: () => takeAsks(idle({ asks: [ask(1)] }), [], WAIT, WALL).questions,
      expected: [
        {
          question: {
            id: "q1",
            ...ask(1),
            askedAt: "2026-12-02T06:00:00.000Z",
            answerBy: "2026-12-02T06:01:00.000Z",
          },
          notify: true,
        },
      ],
    },
    {
      rule: "under --on-question allow or deny it is answered at once, and nobody is told",
      run: () =>
        takeAsks(idle({ asks: [ask(1)] }), [], { policy: "deny", waitMs: 0 }, WALL).questions.map((q) => [
          q.question.answerBy,
          q.notify,
        ]),
      expected: [["2026-12-02T06:00:00.000Z", false]],
    },
  ]);
});

describe("a question's answer, and its policy's deadline (questionStep)", () => {
  const by = WALL + 60_000;
  table([
    {
      rule: "a question nobody answered waits until its answerBy",
      run: () => questionStep(question(), WAIT, by - 1),
      expected: { kind: "wait", until: by },
    },
    {
      rule: "the policy answers once its wait is over, to the millisecond",
      run: () => questionStep(question(), WAIT, by),
      expected: {
        kind: "policy",
        answer: {
          id: "q1",
          allow: false,
          text: null,
          why: "nobody answered within 60 s (--on-question wait)",
          by: "policy",
          at: "2026-12-02T06:01:00.000Z",
        },
      },
    },
    {
      rule: "without a policy a question past its answerBy waits on",
      run: () => questionStep(question(), null, by + 1),
      expected: { kind: "wait", until: by },
    },
    {
      rule: "an answer is given as written, the policy's deadline passed or not",
      run: () => questionStep(question({ answer: answer() }), WAIT, by + 1),
      expected: { kind: "give", answer: answer(), until: by },
    },
    {
      rule: "an answer that does not fit its question is given as a deny, saying why",
      run: () => responseStep(question({ answer: answer({ text: "no" }) })),
      expected: {
        kind: "give",
        answer: answer({
          allow: false,
          text: null,
          why: "denied by catherd: a permission is answered by allow or deny, not by a text",
        }),
        until: by,
      },
    },
    {
      rule: "an answer given to the CLI is settled",
      run: () => questionStep(question({ answer: answer(), deliveredAt: "t" }), WAIT, by + 1),
      expected: { kind: "settled" },
    },
  ]);
});

describe("where the conversation stands for the rules (steerSignals)", () => {
  const signalsOf = (state: SteerState, over: Partial<SteerWorld> = {}, now = 1_000, c = config()) =>
    steerSignals(state, c, world(over), now);
  table([
    {
      rule: "a turn ended with nothing held ends the conversation: the CLI is asked to end, once",
      run: () => {
        const first = signalsOf(idle());
        return [first.signals, first.actions, signalsOf(first.state, {}, 2_000).actions];
      },
      expected: [
        {
          ended: true,
          asking: false,
          waitingSince: null,
          waitedMs: 0,
          keepOpenMs: null,
          questionDueAt: null,
          endRequestedAt: 1_000,
        },
        [{ kind: "end-session" }],
        [],
      ],
    },
    ...(
      [
        ["the brief not yet taken", initialSteer("fix", 0), {}],
        ["a turn running", idle({ turnOpen: true }), {}],
        ["a message given and not yet taken", idle({ given: ["m1"] }), {}],
        ["a message taken and not yet acted on", idle({ awaitingAct: ["m1"] }), {}],
        ["a message queued", idle(), { queued: true }],
        ["a line pending in the channel", idle(), { pending: true }],
        ["a question open", idle(), { questionDue: WALL + 5_000 }],
      ] as const
    ).map(([what, state, over]) => ({
      rule: `a turn has not ended while it holds ${what}`,
      run: () => [signalsOf(state, over).signals.ended, signalsOf(state, over).actions],
      expected: [false, []],
    })),
    {
      rule: "--keep-open: an ended turn waits from the first look, and its end is asked when the window is over",
      run: () => {
        const c = config({ settings: { keepOpenMs: 5_000, onQuestion: null } });
        const first = signalsOf(idle(), {}, 1_000, c);
        const before = signalsOf(first.state, {}, 5_999, c);
        const over = signalsOf(before.state, {}, 6_000, c);
        return [first.signals.waitingSince, before.actions, over.actions, keptOpenMs(over.state, 7_000)];
      },
      expected: [1_000, [], [{ kind: "end-session" }], 6_000],
    },
    {
      rule: "a protocol with no end line is never asked: its signals carry no endRequestedAt",
      run: () => {
        const step = signalsOf(idle(), {}, 1_000, config({ canEnd: false }));
        return ["endRequestedAt" in step.signals, step.actions];
      },
      expected: [false, []],
    },
    {
      rule: "a question's policy deadline, on the wall clock, is placed on the loop's",
      run: () => signalsOf(idle(), { questionDue: WALL + 5_000 }, 1_000).signals.questionDueAt,
      expected: 6_000,
    },
    {
      rule: "a question's policy deadline already past is due now",
      run: () => signalsOf(idle(), { questionDue: WALL - 5_000 }, 1_000).signals.questionDueAt,
      expected: 1_000,
    },
    {
      rule: "a wait that is over counts in keptOpenMs, and so does the current one",
      run: () => keptOpenMs(idle({ waitedMs: 300, waitingSince: 1_000 }), 1_500),
      expected: 800,
    },
  ]);
});

describe("the end of the dispatch (undelivered)", () => {
  const inbox = [item("m1", { state: "acted" }), item("m2"), item("m3", { state: "delivered" })];
  table([
    {
      rule: "what is still queued at a cancel is failed: the dispatch was cancelled",
      run: () => undelivered(inbox, true),
      expected: [moved("m2", "queued", "failed", "the dispatch was cancelled")],
    },
    {
      rule: "what is still queued at any other end is failed: it ended before it was delivered",
      run: () => undelivered(inbox, false),
      expected: [moved("m2", "queued", "failed", "the dispatch ended before it was delivered")],
    },
  ]);
});
