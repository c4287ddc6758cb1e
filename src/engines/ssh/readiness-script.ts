import type { CliLogin } from "../../domain/cli-login.js";
import type { CliAsked } from "../engine.js";
import { shellQuote } from "./quote.js";
import type { Marker } from "./shared.js";
import { findingLines } from "./start.js";

// The readiness script (specs/placement.md, "Readiness on the host"): one POSIX sh script that a host's
// `sh -s` reads from ssh's stdin — nothing on a command line a `ps` there shows — and that answers, one
// line each, everything a dispatch placed there needs: the host's name, whether it reads the marker
// written into catherd's home here, node and catherd as the start script finds them (findingLines), and
// each CLI asked: found (at this host's path, else on the login PATH), its version's last lines and exit
// code, its login. Every line it prints starts with ANSWER_MARK; whatever else the host prints (a
// profile's banner) is not read. Values are cut to one line of VALUE_CHARS there; the parser bounds
// them again. A variable's value is never printed, only its name. Pure.

/** The first word of every line the script prints. */
export const ANSWER_MARK = "catherd-ready";
/** The longest value the script prints on a line (a path, a line of a CLI's words). */
export const VALUE_CHARS = 300;
/** The last lines of a CLI's `--version` kept. */
export const VERSION_LINES = 6;
/** How long one `--version` (node's, a CLI's) may take there, where the host has `timeout`. */
export const VERSION_TIMEOUT_S = 10;

/** What the script asks: the marker to read, the supervisor's paths here, the CLIs. */
export interface ScriptRequest {
  marker: Marker;
  supervisor: { node: string; program: string };
  clis: readonly CliAsked[];
}

/** The whole script, ending with the `end` line that proves it ran to its end. */
export function readinessScript(request: ScriptRequest): string {
  return [
    `say() { printf '%s %s\\n' ${ANSWER_MARK} "$*"; }`,
    `one() { printf '%s\\n' "$1" | head -n 1 | tr -d '\\r' | cut -c1-${VALUE_CHARS}; }`,
    `if command -v timeout >/dev/null 2>&1; then bound="timeout ${VERSION_TIMEOUT_S}"; else bound=; fi`,
    'say host "$(one "$(uname -n)")"',
    `if [ "$(head -n 1 ${shellQuote(request.marker.path)} 2>/dev/null)" = ${shellQuote(request.marker.token)} ]; then say shared ok; else say shared no; fi`,
    ...findingLines(request.supervisor),
    'if [ -n "$node" ] && [ -x "$node" ]; then',
    '  v=$($bound "$node" --version </dev/null 2>/dev/null | head -n 1 | tr -cd "A-Za-z0-9.+-" | cut -c1-40)',
    `  say node "$found" "\${v:-unknown}" "$(one "$node")"`,
    "else say node missing; fi",
    'if [ -n "$program" ] && [ -f "$program" ]; then say catherd "$found" "$(one "$program")"; else say catherd missing; fi',
    ...request.clis.flatMap((cli, i) => [...cliLines(i, cli), ...loginLines(i, cli.login)]),
    "say end",
    "",
  ].join("\n");
}

/** CLI `i`: found at this host's path, else its name on the login PATH; then its version there. */
function cliLines(i: number, cli: CliAsked): string[] {
  const args = cli.versionArgs.map(shellQuote).join(" ");
  const version = [
    `  out=$( { NO_COLOR=1 $bound "$bin" ${args} </dev/null 2>&1; printf '\\ncatherd-code %s\\n' "$?"; } | cut -c1-${VALUE_CHARS} | tail -n ${VERSION_LINES + 1})`,
    `  printf '%s\\n' "$out" | while IFS= read -r l; do case $l in "catherd-code "*) say cli ${i} code "\${l#catherd-code }" ;; "") ;; *) say cli ${i} said "$l" ;; esac; done`,
  ];
  return [
    `bin=${shellQuote(cli.here ?? "")}; via=here`,
    `if [ -z "$bin" ] || [ ! -x "$bin" ] || [ -d "$bin" ]; then via=PATH; bin=$(command -v ${shellQuote(cli.name)}) || bin=; fi`,
    "case $bin in /*) ;; *) bin= ;; esac",
    `if [ -z "$bin" ]; then say cli ${i} missing; else`,
    `  say cli ${i} at "$via" "$(one "$bin")"`,
    ...(cli.versionArgs.length === 0 ? [] : version),
    "fi",
  ];
}

/**
 * CLI `i`'s login there: the first login file that exists and is not empty (in the folder its variable
 * names where the host sets it, else under HOME), else the first of its variables set, else none.
 */
function loginLines(i: number, login: CliLogin | null): string[] {
  if (login === null) return [];
  const files = login.files.flatMap((file) => [
    `if [ -n "\${${variable(file.variable)}:-}" ]; then f="$${file.variable}"/${shellQuote(file.path)}; else f="$HOME"/${shellQuote(file.underHome)}; fi`,
    `if [ -z "$login" ] && [ -s "$f" ]; then login="file $(one "$f")"; fi`,
  ]);
  const variables = login.variables.map(
    (name) => `if [ -z "$login" ] && [ -n "\${${variable(name)}:-}" ]; then login="variable ${name}"; fi`,
  );
  return ["login=", ...files, ...variables, `say cli ${i} login "\${login:-none}"`];
}

/** `name` when it is a variable's name; else a TypeError (the names come from the backend modules). */
function variable(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new TypeError(`${name} is not a variable's name`);
  return name;
}
