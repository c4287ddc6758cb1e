// What the simulated agent reads of the command line catherd's codex backend gives it
// (src/backends/codex.ts `plan`): `exec [resume] --json … [--output-schema FILE] … [THREAD] -`.

/** The parts of a codex command line the simulated agent acts on. */
export interface CodexArgv {
  /** The thread `exec resume` continues; null for a new thread. */
  resume: string | null;
  /** The file `--output-schema` names: the final message is JSON valid against it. */
  outputSchema: string | null;
}

export function readCodexArgv(argv: readonly string[]): CodexArgv {
  const schemaAt = argv.indexOf("--output-schema");
  const outputSchema = schemaAt === -1 ? null : (argv[schemaAt + 1] ?? null);
  // The thread is the last argument before "-" (the prompt on stdin).
  const resumes = argv[0] === "exec" && argv[1] === "resume";
  const last = argv.at(-1) === "-" ? argv.at(-2) : argv.at(-1);
  return { resume: resumes && last !== undefined ? last : null, outputSchema };
}

/**
 * A thread id of the form codex names its threads (thread.started `thread_id`, test/fixtures/recorded/
 * codex): a UUID v7 — the milliseconds since the epoch, then random bits — so that `--follow-up` and a
 * repair turn resume it as they would codex's own. `random` gives 20 hex digits.
 */
export function codexThreadId(nowMs: number, random: string): string {
  const hex = nowMs.toString(16).padStart(12, "0").slice(-12) + random.padEnd(20, "0").slice(0, 20);
  const variant = (8 + (Number.parseInt(hex[16] ?? "0", 16) & 3)).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
