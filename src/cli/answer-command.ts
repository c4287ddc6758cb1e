import { answerQuestion } from "../dispatch/steer/answer-question.js";
import { CatherdError } from "../domain/errors.js";
import { type Command, RUN_OPTION, stringOption } from "./command-io.js";
import { dispatchDirOf, refOf } from "./resolve.js";

/** What `answer --json` prints. */
export interface AnsweredData {
  answered: {
    name: string | null;
    dispatchId: string;
    id: string;
    allow: boolean;
    text: string | null;
    why: string | null;
  };
}

export const answerCommand: Command<AnsweredData> = {
  name: "answer",
  synopsis: '<name|id|dir> <question> ["text"]',
  positionals: "own",
  summary:
    "Answers what a steerable agent asked (dispatched with --on-question; its questions are in questions/ and in " +
    "catherd show): --allow or --deny a permission (--why says why, and the agent reads it), or give a question's " +
    "answer as text. The first answer stands — yours, or the policy's when its wait is over — and reaches the " +
    "agent once (specs/steering.md).",
  json: "{answered: {name, dispatchId, id, allow, text, why}}",
  options: {
    run: RUN_OPTION,
    allow: { type: "boolean", description: "allow the permission asked" },
    deny: { type: "boolean", description: "deny it" },
    why: { type: "string", value: "<text>", description: "why, for the agent to read" },
  },
  async handler(input) {
    const ref = refOf(input, "answer");
    const [, id, text, ...extra] = input.positionals;
    const fix = 'catherd answer NAME q1 --allow | --deny [--why …] | "text"';
    if (id === undefined)
      throw new CatherdError("E_INPUT_INVALID", "missing the question's id (q1, q2, …)", { fix });
    if (extra.length > 0)
      throw new CatherdError("E_INPUT_INVALID", `unexpected arguments: ${extra.join(" ")}`, { fix });
    const allow = input.values.allow === true;
    const deny = input.values.deny === true;
    if ([allow, deny, text !== undefined].filter(Boolean).length !== 1) {
      throw new CatherdError("E_INPUT_INVALID", "give exactly one answer: --allow, --deny, or a text", {
        fix,
      });
    }
    const dir = dispatchDirOf(input, ref);
    const answered = answerQuestion(dir, id, {
      allow: !deny,
      text: text ?? null,
      why: stringOption(input, "why") ?? null,
      by: `catherd answer (pid ${process.pid})`,
    });
    const a = answered.answer;
    const what = a.text !== null ? `answered ${JSON.stringify(a.text)}` : a.allow ? "allowed" : "denied";
    return {
      data: {
        answered: {
          name: answered.name,
          dispatchId: answered.dispatchId,
          id,
          allow: a.allow,
          text: a.text,
          why: a.why,
        },
      },
      text: `${answered.name ?? answered.dispatchId} ${id} (${answered.asks}): ${what}`,
    };
  },
};
