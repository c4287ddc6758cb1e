import { requireId } from "../domain/ids.js";
import { placeOf } from "../folder/layout.js";
import { systemClock } from "../infra/clock.js";
import { catherdHome } from "../infra/paths.js";
import { reportError } from "../infra/report-error.js";
import { machineCores } from "../infra/slot-identity.js";
import { DEFAULT_CLASS, lockRequest, MAX_SLOTS, SLOTS_VARIABLE } from "../lock/lock-request.js";
import { type ClassStatus, type ListedClaim, lockStatus } from "../lock/lock-status.js";
import { runLocked } from "../lock/run-locked.js";
import { type Command, stringOption } from "./command-io.js";
import { age, paint } from "./render.js";

/** What `--status --json` prints; a command run prints only the command's own output. */
export interface LockData {
  lock: { classes: ClassStatus[] } | null;
}

export const lockCommand: Command<LockData> = {
  name: "lock",
  synopsis: "[options] -- <command> [args…]",
  positionals: "own",
  summary:
    "Runs the command in one of the machine's slots for heavy commands (test suites, builds): at most <n> of " +
    "a class run at once, served first come, first served. While it waits it says so once on stderr; the " +
    "command's stdin, stdout and stderr are its own. Exits with the command's status (128 + n for a signal), " +
    "or 75 (E_LOCK_BUSY) when --wait passes without a slot. Under a dispatch, the wait is not idle time and " +
    "does not count against the wall. With --status, lists each class: its slots, holders and waiters.",
  json: "with --status, {lock: {classes: [{class, slots, defaultSlots, holders, waiters}]}}; running a command, nothing",
  options: {
    slots: {
      type: "string",
      value: "<n>",
      description: `how many commands of the class may run at once, 1-${MAX_SLOTS}`,
      integer: true,
      default: `$${SLOTS_VARIABLE}, else the count $${SLOTS_VARIABLE} last gave the class, else half the cores`,
    },
    class: { type: "string", value: "<name>", description: "the class of slots", default: DEFAULT_CLASS },
    wait: {
      type: "string",
      value: "<d>",
      description: "give up after this long without a slot (E_LOCK_BUSY, exit 75), e.g. 30m",
      default: "wait as long as it takes",
    },
    status: { type: "boolean", description: "list each class: its slots, holders and waiters" },
  },
  async handler(input) {
    const home = catherdHome();
    if (input.values.status === true) {
      const only = stringOption(input, "class");
      const classes = lockStatus(
        home,
        only === undefined ? null : requireId("--class", only),
        machineCores(),
      );
      return { data: { lock: { classes } }, text: renderStatus(classes, systemClock.wallNow().getTime()) };
    }
    const request = lockRequest({
      slots: stringOption(input, "slots"),
      cls: stringOption(input, "class"),
      wait: stringOption(input, "wait"),
      positionals: input.positionals,
      rest: input.rest,
      env: process.env,
    });
    const outcome = await runLocked(request, home, process.env, systemClock);
    if (outcome.error !== null) reportError(outcome.error, input.json);
    return { data: { lock: null }, text: "", exitCode: outcome.exitCode, silent: true };
  },
};

/** The classes' holders and waiters, each with how long it has held or waited by `now` (ms since the epoch). */
function renderStatus(classes: ClassStatus[], now: number): string {
  if (classes.length === 0) return "no lock has been taken in this catherd home\n";
  const lines: string[] = [];
  for (const c of classes) {
    lines.push(
      paint(
        `${c.class}: ${c.slots} slot${c.slots === 1 ? "" : "s"}${c.slots === c.defaultSlots ? "" : ` (--slots ${c.slots} of a holder; ${c.defaultSlots} for a taker given none)`}, ${c.holders.length} held, ${c.waiters.length} waiting`,
        "bold",
      ),
    );
    for (const h of c.holders) lines.push(claimLine("held", h, now));
    for (const w of c.waiters) lines.push(claimLine("waiting", w, now));
  }
  return `${lines.join("\n")}\n`;
}

/** "  held     pid 4242  2m10s  npm test  (fix-tests)". */
function claimLine(what: string, claim: ListedClaim, now: number): string {
  const dispatch =
    claim.dispatch === null ? "" : `  (${placeOf(claim.dispatch.dir)?.name ?? claim.dispatch.id})`;
  const unchecked = claim.unchecked ? "  [another pid namespace: not checked]" : "";
  return `  ${what.padEnd(8)} pid ${String(claim.pid).padEnd(7)} ${age(claim.since, now).padEnd(7)} ${claim.command}${dispatch}${unchecked}`;
}
