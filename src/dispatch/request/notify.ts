import { checked } from "../../domain/checked.js";
import { CatherdError } from "../../domain/errors.js";
import { notifyCommandSchema } from "../../domain/schemas.js";
import type { Concern } from "./concern.js";
import { shownValue } from "./text.js";

// --notify and --run-notify (specs/cli.md, "Notifications: `--notify` and `--run-notify`"): a shell command run once when the
// dispatch (a chain: the chain) is recorded; --run-notify remembers one for every dispatch of the run.

export interface RawNotifyInput {
  notify?: string | undefined;
  runNotify?: string | undefined;
}

export interface NotifyRequest {
  /** `--notify`: run once when the dispatch (a chain: the chain) is recorded; absent or null: none. */
  notify?: string | null;
  /** `--run-notify`: remembered in run.json; null removes it (`none`); absent: run.json's stays. */
  runNotify?: string | null;
}

export const notify = {
  options: {
    notify: {
      type: "string",
      value: "<cmd>",
      description:
        "a shell command run once when the dispatch is recorded (a chain: when it ends), with CATHERD_RECORD, CATHERD_NAME, CATHERD_STATUS, CATHERD_KIND, CATHERD_OUTCOME, CATHERD_VERIFY set and the record's JSON on stdin; its output goes to notify.log",
    },
    "run-notify": {
      type: "string",
      value: "<cmd|none>",
      description: "the same for every dispatch of the run, remembered in run.json; none removes it",
    },
  },
  validate: (raw) => ({
    notify: raw.notify === undefined ? null : notifyCommand("--notify", raw.notify),
    ...(raw.runNotify === undefined
      ? {}
      : { runNotify: raw.runNotify === "none" ? null : notifyCommand("--run-notify", raw.runNotify) }),
  }),
  toAdmit: ({ notify }) => (notify == null ? {} : { notify }),
} satisfies Concern<RawNotifyInput, NotifyRequest>;

/** A notification command: a shell command line (`sh -c`), at most 8 KiB, no NUL. */
function notifyCommand(field: string, text: string): string {
  return checked(
    notifyCommandSchema.refine((v) => v.trim() !== ""),
    text,
    () =>
      new CatherdError(
        "E_INPUT_INVALID",
        `${field} ${shownValue(text)}: it is a shell command line of at most 8 KiB, not blank, without NUL`,
        {
          fix: `give ${field} a shell command, e.g. ${field} 'notify-send "catherd: $CATHERD_NAME $CATHERD_STATUS"'`,
        },
      ),
  );
}
