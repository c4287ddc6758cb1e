import * as path from "node:path";
import { CatherdError } from "../domain/errors.js";
import { requireId } from "../domain/ids.js";
import { parseDuration } from "../domain/text/duration.js";
import { agentDispatchId } from "../folder/dispatch-id-of.js";
import { FILES, isDispatchFolder } from "../folder/layout.js";
import { readFolderJson } from "../folder/read.js";
import { resolveExecutable } from "../infra/which.js";

// A `catherd lock` command line, checked whole before anything is taken (specs/lock.md, "The verb"): a
// bad count, class or duration, no command, or a command that cannot be found is E_INPUT_INVALID, and
// no slot is asked for.

/** The class a lock takes a slot of when none is named. */
export const DEFAULT_CLASS = "heavy";
/** No machine has this many heavy slots: a larger count is a typo. */
export const MAX_SLOTS = 4096;
/** The variable holding the machine's slot count (kept in agents' environments, src/domain/env.ts). */
export const SLOTS_VARIABLE = "CATHERD_LOCK_SLOTS";

export interface LockRequest {
  cls: string;
  /** The count given by --slots, null without. */
  slots: number | null;
  /** The count CATHERD_LOCK_SLOTS gives, null when unset: remembered in the class for takers given none. */
  envSlots: number | null;
  /** Give up after this long without a slot (E_LOCK_BUSY); null: wait as long as it takes. */
  waitMs: number | null;
  /** The executable, resolved on PATH, and its arguments. */
  cmd: string;
  args: string[];
  /** The command line as people read it. */
  label: string;
}

export interface LockInput {
  slots: string | undefined;
  cls: string | undefined;
  wait: string | undefined;
  positionals: readonly string[];
  rest: readonly string[];
  env: NodeJS.ProcessEnv;
}

/** Checks a lock's command line; throws E_INPUT_INVALID naming what is wrong. */
export function lockRequest(input: LockInput): LockRequest {
  if (input.positionals.length > 0) {
    throw new CatherdError("E_INPUT_INVALID", `unexpected argument ${JSON.stringify(input.positionals[0])}`, {
      fix: `put the command after --: catherd lock -- ${input.positionals.join(" ")}`,
    });
  }
  const cls = requireId("--class", input.cls ?? DEFAULT_CLASS);
  const slots = input.slots === undefined ? null : slotCountOf("--slots", input.slots);
  const envText = input.env[SLOTS_VARIABLE];
  const envSlots = envText === undefined || envText === "" ? null : slotCountOf(SLOTS_VARIABLE, envText);
  const waitMs = input.wait === undefined ? null : parseDuration("--wait", input.wait);
  const [command, ...args] = input.rest;
  if (command === undefined || command === "") {
    throw new CatherdError("E_INPUT_INVALID", "no command to run after --", {
      fix: "catherd lock -- npm test",
    });
  }
  const cmd = resolveExecutable(command, input.env.PATH ?? "");
  if (cmd === null) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `command ${JSON.stringify(command)} is not found${command.includes("/") ? "" : " on PATH"} (or is not executable)`,
      { fix: "check the command's name, or give its path" },
    );
  }
  return { cls, slots, envSlots, waitMs, cmd, args, label: labelOf(input.rest) };
}

/** A slot count: a whole number from 1 to MAX_SLOTS. */
function slotCountOf(field: string, text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_SLOTS) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `${field} ${JSON.stringify(text.slice(0, 40))} is not a whole number from 1 to ${MAX_SLOTS}`,
      { fix: `give ${field} as the number of commands of the class that may run at once, e.g. 2` },
    );
  }
  return Number(text);
}

/** "npm test", "node scripts/build.mjs --fast": the command line, at most 200 characters. */
export function labelOf(argv: readonly string[]): string {
  const text = argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(" ");
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** The dispatch a lock runs under: its id and folder, from the agent's environment. */
export interface DispatchLink {
  id: string;
  dir: string;
}

/**
 * The dispatch whose agent runs this lock: CATHERD_DISPATCH names it, CATHERD_DISPATCH_DIR its folder
 * (both set by its supervisor). Null outside a dispatch, or when the folder is not that dispatch's.
 */
export function dispatchLinkOf(env: NodeJS.ProcessEnv): DispatchLink | null {
  const id = env.CATHERD_DISPATCH;
  const dir = env.CATHERD_DISPATCH_DIR;
  if (id === undefined || id === "" || dir === undefined || !path.isAbsolute(dir)) return null;
  if (!isDispatchFolder(dir)) return null;
  const spec = readFolderJson(dir, FILES.spec);
  if (agentDispatchId({ dir, spec: spec.kind === "ok" ? spec.value : null }) !== id) return null;
  return { id, dir };
}
