import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import type { AttemptSummary } from "../../src/dispatch/read/attempts.js";
import { composeBrief } from "../../src/dispatch/request/brief.js";
import { LOCK_HINT } from "../../src/dispatch/request/lock-hint.js";
import { OUTCOME_CONTRACT } from "../../src/dispatch/request/outcome-contract.js";
import { ANSWER_CONTRACT_HEAD } from "../../src/domain/ending/answer-contract.js";
import { isolatedHome, json, runCli } from "../helpers/cli.js";
import { fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { waitForFile } from "../helpers/wait.js";

// A chain's next attempt starts from the brief as given (specs/dispatch.md, "A request's concerns"):
// brief.md's first `briefBytes` bytes, composed again for the next CLI — with real processes, a fake CLI
// that hits its quota and another that answers, handed over by the real promoter.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

const SCHEMA_TEXT = '{\n  "type": "object"\n}\n';

/** An isolated home where `first` hits its quota and `next` answers, and a schema file. */
function quotaThen(first: "codex" | "gemini", next: "codex" | "gemini" | "claude") {
  const { env: base } = isolatedHome();
  const bins = tempDir();
  const firstBin = fakeCli(bins, first, [{ lines: recordedLines(first, "quota"), exit: 1 }]);
  const nextBin = fakeCli(bins, next, [{ lines: recordedLines(next, "text"), exit: 0 }]);
  const schemaFile = path.join(bins, "answer.schema.json");
  fs.writeFileSync(schemaFile, SCHEMA_TEXT);
  const binEnv = (cli: string) => `CATHERD_${cli.toUpperCase()}_BIN`;
  return { schemaFile, env: { ...base, [binEnv(first)]: firstBin, [binEnv(next)]: nextBin } };
}

/** Dispatches the chain `name` with `brief` and `flags`, waits for it, and returns its attempts' folders. */
async function chainOf(
  env: NodeJS.ProcessEnv,
  name: string,
  brief: string,
  flags: string[],
): Promise<AttemptSummary[]> {
  await startChain(env, name, brief, flags);
  return attemptsOf(env, name);
}

/** Dispatches the chain `name`; returns its first attempt's folder. */
async function startChain(env: NodeJS.ProcessEnv, name: string, brief: string, flags: string[]) {
  const started = await runCli(["dispatch", "--name", name, "--brief", brief, "--json", ...flags], { env });
  const first = json<{ dispatched: { dispatchId: string; dir: string } }>(started).dispatched;
  dispatched.push(first.dispatchId);
  return first.dir;
}

/** Waits for the chain `name` to end; returns its two attempts. */
async function attemptsOf(env: NodeJS.ProcessEnv, name: string): Promise<AttemptSummary[]> {
  const waited = await runCli(["wait", name, "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
  expect(waited.stdout + waited.stderr).toContain(name);
  const result = json<{ attempts: AttemptSummary[] }>(await runCli(["result", name, "--json"], { env }));
  for (const a of result.attempts) dispatched.push(a.dispatchId);
  expect(result.attempts).toHaveLength(2);
  return result.attempts;
}

/** Rewrites a folder's JSON file whole (a rename: a reader sees the old file or the new). */
function rewriteJson(file: string, change: (value: Record<string, unknown>) => void): void {
  const value = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
  change(value);
  fs.writeFileSync(`${file}.new`, JSON.stringify(value, null, 2));
  fs.renameSync(`${file}.new`, file);
}

const briefOf = (attempt: AttemptSummary | undefined) =>
  fs.readFileSync(path.join(attempt?.dir ?? "", "brief.md"), "utf8");
const answer = { schema: { type: "object" }, text: SCHEMA_TEXT, repair: 0 };

describe("a chain's next attempt's brief, with real processes", () => {
  it("keeps a brief that ends with an answer contract's own words, for a CLI that appends the contract", async () => {
    const { env, schemaFile } = quotaThen("codex", "gemini");
    const given = `Find the bug; the worker before you was told:\n${ANSWER_CONTRACT_HEAD}`;
    const flags = ["--backend", "codex", "--fallback", "gemini", "--answer-schema", schemaFile];
    const [first, second] = await chainOf(env, "quoted", given, [...flags, "--repair", "0"]);
    expect(briefOf(first)).toBe(given);
    const composed = composeBrief({ brief: Buffer.from(given), answer, backend: backendFor("gemini") });
    expect(briefOf(second)).toBe(composed?.toString("utf8"));
  });

  it("gives a CLI with a schema flag of its own the brief as given, byte for byte, after one that appended the contract", async () => {
    const { env, schemaFile } = quotaThen("gemini", "codex");
    const flags = ["--backend", "gemini", "--fallback", "codex", "--answer-schema", schemaFile];
    const [first, second] = await chainOf(env, "exact", "Find the bug.", [...flags, "--repair", "0"]);
    expect(briefOf(first)).toContain(ANSWER_CONTRACT_HEAD);
    expect(briefOf(second)).toBe("Find the bug.");
    const spec = JSON.parse(fs.readFileSync(path.join(second?.dir ?? "", "spec.json"), "utf8"));
    expect(spec.briefBytes).toBe("Find the bug.".length);
  });

  it("composes --lock-hint's line and --outcome's contract once for the next CLI", async () => {
    const { env } = quotaThen("codex", "claude");
    const flags = ["--backend", "codex", "--fallback", "claude-code", "--lock-hint", "--outcome"];
    const [first, second] = await chainOf(env, "hinted", "Find.", flags);
    const expected = `Find.\n\n${LOCK_HINT}\n\n${OUTCOME_CONTRACT}\n`;
    expect(briefOf(first)).toBe(expected);
    expect(briefOf(second)).toBe(expected);
    const admit = JSON.parse(fs.readFileSync(path.join(second?.dir ?? "", "admit.json"), "utf8"));
    expect(admit).toMatchObject({
      attempt: 2,
      backend: "claude-code",
      ladder: { request: { lockHint: true } },
    });
  });

  it("takes all of brief.md as the brief as given from a folder written before briefBytes and lockHint", async () => {
    const { env: base } = isolatedHome();
    const bins = tempDir();
    const release = path.join(bins, "release");
    const quota = recordedLines("codex", "quota");
    const codex = fakeCli(bins, "codex", [{ lines: quota, exit: 1, holdAt: { line: 0, until: release } }]);
    const claude = fakeCli(bins, "claude", [{ lines: recordedLines("claude", "text"), exit: 0 }]);
    const env = { ...base, CATHERD_CODEX_BIN: codex, CATHERD_CLAUDE_BIN: claude };
    const flags = ["--backend", "codex", "--fallback", "claude-code", "--lock-hint", "--outcome"];
    const dir = await startChain(env, "older", "Find.", flags);
    // While its agent is held, the folder is made to look as an older catherd wrote it.
    await waitForFile(path.join(bins, "codex.calls"));
    rewriteJson(path.join(dir, "spec.json"), (spec) => {
      delete spec.briefBytes;
    });
    rewriteJson(path.join(dir, "admit.json"), (admit) => {
      delete (admit.ladder as { request: Record<string, unknown> }).request.lockHint;
    });
    fs.writeFileSync(release, "");
    const [first, second] = await attemptsOf(env, "older");
    const composed = `Find.\n\n${LOCK_HINT}\n\n${OUTCOME_CONTRACT}\n`;
    expect(briefOf(first)).toBe(composed);
    // The hint once, as brief.md had it; the contract appended again (specs/dispatch.md).
    expect(briefOf(second)).toBe(`${composed}\n${OUTCOME_CONTRACT}\n`);
  });
});
