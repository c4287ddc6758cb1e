import { type SendOutcome, sendOrFollowUp } from "../dispatch/send-or-follow-up.js";
import type { SentMessage } from "../dispatch/steer/send.js";
import { CatherdError } from "../domain/errors.js";
import { catherdHome, runName } from "../infra/paths.js";
import { readMessageText } from "./brief-input.js";
import { type Command, type ParsedInput, RUN_OPTION, stringOption } from "./command-io.js";
import { dispatchDirOf, refOf } from "./resolve.js";

/** What `send --json` prints: the message, or the follow-up it became. */
export interface Sent {
  sent: {
    name: string | null;
    dispatchId: string;
    dir: string;
    /** The message's id in inbox/; null when it became a follow-up. */
    id: string | null;
    state: string;
    why: string | null;
    interrupt: boolean;
    /** The dispatch had ended: the message is the brief of this follow-up turn. */
    followUp: { dispatchId: string; dir: string } | null;
  };
}

export const sendCommand: Command<Sent> = {
  name: "send",
  synopsis: '<name|id|dir> ["text"]',
  positionals: "own",
  summary:
    "Sends a message to a running steerable agent (dispatched with --steerable or --keep-open; specs/steering.md): " +
    "it joins the conversation as soon as the CLI can take it — mid-turn for claude-code — and returns at once " +
    "with the message's id. --interrupt stops the current turn first, and the message starts the next one. " +
    "The text is the argument, --file, or stdin. To a dispatch that has ended, the message is a follow-up turn " +
    "(dispatch --follow-up), and send says so.",
  json: "{sent: {name, dispatchId, dir, id, state, why, interrupt, followUp}}",
  options: {
    run: RUN_OPTION,
    file: { type: "string", value: "<path>", description: "read the message from a file" },
    interrupt: { type: "boolean", description: "stop the current turn first; the message starts the next" },
    wait: { type: "boolean", description: "return once the CLI took the message (delivered), or it failed" },
  },
  async handler(input, { stdinIsOurs }) {
    const ref = refOf(input, "send");
    const text = await messageText(input, stdinIsOurs);
    const dir = dispatchDirOf(input, ref);
    const interrupt = input.values.interrupt === true;
    const outcome = await sendOrFollowUp(
      { dir, run: runName(stringOption(input, "run")), home: catherdHome() },
      { text, interrupt, from: `catherd send (pid ${process.pid})` },
      { wait: input.values.wait === true },
    );
    if (outcome.kind === "sent") {
      return { data: { sent: sentData(outcome.sent, interrupt) }, text: sentText(outcome.sent) };
    }
    return followedUp(outcome);
  },
};

/** The message: the second argument, --file, or stdin (never two of them). */
async function messageText(input: ParsedInput, stdinIsOurs: boolean): Promise<string> {
  const [, inline, ...extra] = input.positionals;
  if (extra.length > 0) {
    throw new CatherdError("E_INPUT_INVALID", `unexpected arguments: ${extra.join(" ")}`, {
      fix: 'quote the message: catherd send NAME "the whole message"',
    });
  }
  const file = stringOption(input, "file");
  if (inline !== undefined && file !== undefined) {
    throw new CatherdError("E_INPUT_INVALID", "the message is given twice: as an argument and with --file", {
      fix: "give one of them",
    });
  }
  if (inline !== undefined) return inline;
  const text = await readMessageText(file, stdinIsOurs);
  if (text === null) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      "no message: give it as an argument, with --file, or on stdin",
      {
        fix: 'catherd send NAME "what to do next"',
      },
    );
  }
  return text;
}

function followedUp({ ended, admitted }: Extract<SendOutcome, { kind: "followed-up" }>) {
  const data: Sent = {
    sent: {
      name: admitted.name,
      dispatchId: admitted.dispatchId,
      dir: admitted.dir,
      id: null,
      state: admitted.queued ? "queued" : "started",
      why: `${ended} had ended: the message is the brief of a follow-up turn`,
      interrupt: false,
      followUp: { dispatchId: admitted.dispatchId, dir: admitted.dir },
    },
  };
  return {
    data,
    text: `${ended} had ended: the message follows it up as a new turn, ${admitted.dispatchId} → ${admitted.dir}`,
  };
}

function sentData(sent: SentMessage, interrupt: boolean): Sent["sent"] {
  return {
    name: sent.name,
    dispatchId: sent.dispatchId,
    dir: sent.dir,
    id: sent.message.id,
    state: sent.state,
    why: sent.why,
    interrupt,
    followUp: null,
  };
}

function sentText(sent: SentMessage): string {
  const who = sent.name ?? sent.dispatchId;
  const why = sent.why === null ? "" : `: ${sent.why}`;
  return `${who}: message ${sent.message.id} ${sent.state}${why}`;
}
