import { z } from "zod";
import type { CliThere } from "../engine.js";
import { ANSWER_MARK, VALUE_CHARS, VERSION_LINES } from "./readiness-script.js";

// Reading the readiness script's answer (specs/placement.md, "Readiness on the host"). What a host prints is
// untrusted: only the first MAX_ANSWER_CHARS are read, only lines that start with ANSWER_MARK count (a
// profile's banner does not), each must have exactly the form the script prints and no more than
// MAX_LINE_CHARS, none may come twice, and the answer must reach its `end` line. Anything else is
// `garbled` with the reason, never a guess. Pure.

/** How much of the host's output is read: the script prints a few lines per CLI. */
export const MAX_ANSWER_CHARS = 64 * 1024;
/** The longest line of the script's own: the mark, a key, a value cut to VALUE_CHARS there. */
const MAX_LINE_CHARS = VALUE_CHARS + 64;

const via = z.enum(["here", "PATH"]);
/** A path as the script prints it: absolute, one line. */
const absolute = z.string().regex(/^\/\S/);

/** What the host said, whole. */
export interface HostAnswer {
  /** The host's own name (`uname -n`). */
  name: string;
  /** It read the marker's token at the same path. */
  shared: boolean;
  node: { via: "here" | "PATH"; version: string; path: string } | null;
  catherd: { via: "here" | "PATH"; path: string } | null;
  /** One per CLI asked, in order. */
  clis: CliThere[];
}

export type AnswerRead = { kind: "read"; answer: HostAnswer } | { kind: "garbled"; why: string };

/** The answer to a script that asked about `ids` (the CLIs, in order), or why it cannot be read. */
export function readAnswer(stdout: string, ids: readonly string[]): AnswerRead {
  const seen = new Map<string, string>();
  const said = ids.map((): string[] => []);
  for (const line of stdout.slice(0, MAX_ANSWER_CHARS).split("\n")) {
    if (!line.startsWith(`${ANSWER_MARK} `)) continue;
    if (line.length > MAX_LINE_CHARS) return garbled(`a line of ${line.length} characters`);
    const rest = line.slice(ANSWER_MARK.length + 1);
    const words = /^cli (\d{1,3}) said (.*)$/.exec(rest);
    if (words !== null) {
      const list = said[Number(words[1])];
      if (list === undefined) return garbled(`words of CLI ${words[1]}, which was not asked`);
      if (list.length >= VERSION_LINES) return garbled(`more than ${VERSION_LINES} lines of a CLI's words`);
      list.push(words[2] ?? "");
      continue;
    }
    const key = /^(cli \d{1,3} \w+|\w+)/.exec(rest)?.[1] ?? rest;
    if (seen.has(key)) return garbled(`"${key.slice(0, 40)}" twice`);
    seen.set(key, rest.slice(key.length).replace(/^ /, ""));
  }
  if (!seen.has("end")) return garbled("no end line: the answer was cut short");
  try {
    return { kind: "read", answer: answerOf(seen, ids, said) };
  } catch (error) {
    if (error instanceof z.ZodError) return garbled(error.issues[0]?.message ?? "a malformed line");
    if (error instanceof Malformed) return garbled(error.message);
    throw error;
  }
}

class Malformed extends Error {}

function garbled(why: string): AnswerRead {
  return { kind: "garbled", why };
}

/** The value of line `key`: it must be there. */
function lineValue(seen: ReadonlyMap<string, string>, key: string): string {
  const value = seen.get(key);
  if (value === undefined) throw new Malformed(`no "${key}" line`);
  return value;
}

function answerOf(seen: ReadonlyMap<string, string>, ids: readonly string[], said: string[][]): HostAnswer {
  const shared = z.enum(["ok", "no"]).parse(lineValue(seen, "shared"));
  const node = lineValue(seen, "node");
  const catherd = lineValue(seen, "catherd");
  return {
    name: z.string().min(1).parse(lineValue(seen, "host")),
    shared: shared === "ok",
    node: node === "missing" ? null : nodeOf(node),
    catherd: catherd === "missing" ? null : catherdOf(catherd),
    clis: ids.map((id, i) => cliOf(id, i, seen, said[i] ?? [])),
  };
}

/** `here v22.1.0 /usr/bin/node`. */
function nodeOf(value: string): HostAnswer["node"] {
  const [found = "", version = "", ...rest] = value.split(" ");
  return {
    via: via.parse(found),
    version: z
      .string()
      .regex(/^[A-Za-z0-9.+-]{1,40}$/)
      .parse(version),
    path: absolute.parse(rest.join(" ")),
  };
}

/** `PATH /opt/catherd/dist/bin/supervisor.js`. */
function catherdOf(value: string): HostAnswer["catherd"] {
  const [found = "", ...rest] = value.split(" ");
  return { via: via.parse(found), path: absolute.parse(rest.join(" ")) };
}

/** CLI `i`: `at <via> <path>` or `missing`; its `code` (a number, or `timeout`…); its `login`. */
function cliOf(id: string, i: number, seen: ReadonlyMap<string, string>, said: string[]): CliThere {
  const at = seen.get(`cli ${i} at`);
  const found = at === undefined ? null : catherdOf(at);
  if (found === null && !seen.has(`cli ${i} missing`)) throw new Malformed(`no line on CLI ${i}`);
  const code = seen.get(`cli ${i} code`);
  return {
    id,
    path: found?.path ?? null,
    via: found?.via ?? null,
    version: code === undefined ? null : { words: said.join("\n"), code: codeOf(code) },
    login: loginOf(seen.get(`cli ${i} login`)),
  };
}

/** An exit code 0–255; `timeout`'s own 124 is no end in time (null). */
function codeOf(value: string): number | null {
  const code = z.coerce
    .number()
    .int()
    .min(0)
    .max(255)
    .parse(/^\d{1,3}$/.test(value) ? value : "x");
  return code === 124 ? null : code;
}

/** `file <path>`, `variable <NAME>`, `none`; no line: the CLI has no login to check. */
function loginOf(value: string | undefined): CliThere["login"] {
  if (value === undefined || value === "none") return null;
  const [kind = "", ...rest] = value.split(" ");
  if (kind === "file") return { kind, where: absolute.parse(rest.join(" ")) };
  if (kind === "variable")
    return {
      kind,
      where: z
        .string()
        .regex(/^[A-Za-z_]\w*$/)
        .parse(rest.join(" ")),
    };
  throw new Malformed(`a login line that says ${JSON.stringify(value.slice(0, 40))}`);
}
