import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  MAX_BRIEF_BYTES,
  type RawDispatchInput,
  validateDispatch,
} from "../../src/dispatch/request/dispatch-request.js";
import { checkReadiness } from "../../src/dispatch/request/readiness.js";
import { exitCodeFor, isCatherdError } from "../../src/domain/errors.js";
import { systemClock } from "../../src/infra/clock.js";
import { dispatchFolders, isolatedHome, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/folders.js";

// Validation happens before anything is written (specs/dispatch.md §1). The rules are one pure function,
// validateDispatch, tested here in process; a few cases go through the real CLI, for what only the
// command line does (its own flag parsing, reading the brief from stdin or a file) and to show that a
// refusal prints one error line and a fix, and writes nothing.

const aFile = path.join(tempDir(), "a-file");
fs.writeFileSync(aFile, "x");

/** `catherd dispatch --backend exec -- true`, as the command line hands it to validation. */
const EXEC_TRUE: RawDispatchInput = {
  backend: "exec",
  run: "default",
  env: [],
  brief: null,
  rest: ["true"],
  environment: process.env,
};
const CODEX: Partial<RawDispatchInput> = { backend: "codex", bin: "/bin/true", rest: [] };

const refusals: {
  title: string;
  input: Partial<RawDispatchInput>;
  code: "E_INPUT_INVALID" | "E_BACKEND_MISSING";
  mentions: string;
}[] = [
  {
    title: "a missing backend",
    input: { backend: undefined },
    code: "E_INPUT_INVALID",
    mentions: "--backend",
  },
  {
    title: "an unknown backend",
    input: { backend: "cursor" },
    code: "E_INPUT_INVALID",
    mentions: "--backend",
  },
  { title: "a name with ..", input: { name: "a..b" }, code: "E_INPUT_INVALID", mentions: "--name" },
  { title: "a name with /", input: { name: "a/b" }, code: "E_INPUT_INVALID", mentions: "--name" },
  { title: "a name starting with -", input: { name: "-x" }, code: "E_INPUT_INVALID", mentions: "--name" },
  {
    title: "a name of 200 characters",
    input: { name: "n".repeat(200) },
    code: "E_INPUT_INVALID",
    mentions: "--name",
  },
  { title: "a run of ..", input: { run: ".." }, code: "E_INPUT_INVALID", mentions: "--run" },
  { title: "a negative duration", input: { idle: "-5m" }, code: "E_INPUT_INVALID", mentions: "--idle" },
  { title: "an absurd duration", input: { wall: "9999h" }, code: "E_INPUT_INVALID", mentions: "--wall" },
  { title: "a duration without unit", input: { idle: "15" }, code: "E_INPUT_INVALID", mentions: "--idle" },
  {
    title: "a kill grace of 1 year",
    input: { killGrace: "8760h" },
    code: "E_INPUT_INVALID",
    mentions: "--kill-grace",
  },
  { title: "a --cwd that is a file", input: { cwd: aFile }, code: "E_INPUT_INVALID", mentions: "--cwd" },
  {
    title: "a --cwd that does not exist",
    input: { cwd: "/nonexistent/x" },
    code: "E_INPUT_INVALID",
    mentions: "--cwd",
  },
  ...["0", "-5", "abc", "1e99", "1.5", "10000000000000"].map((maxTokens) => ({
    title: `--max-tokens ${maxTokens}`,
    input: { maxTokens },
    code: "E_INPUT_INVALID" as const,
    mentions: "--max-tokens",
  })),
  ...["-1", "abc", "NaN", "0", "Infinity", "1e3"].map((maxCost) => ({
    title: `--max-cost ${maxCost}`,
    input: { maxCost },
    code: "E_INPUT_INVALID" as const,
    mentions: "--max-cost",
  })),
  { title: "--env with a newline", input: { env: ["A=1\n2"] }, code: "E_INPUT_INVALID", mentions: "--env" },
  { title: "--env without =", input: { env: ["NOPE"] }, code: "E_INPUT_INVALID", mentions: "--env" },
  { title: "--env with a bad name", input: { env: ["1A=x"] }, code: "E_INPUT_INVALID", mentions: "--env" },
  {
    title: "--env setting CATHERD_DISPATCH",
    input: { env: ["CATHERD_DISPATCH=x"] },
    code: "E_INPUT_INVALID",
    mentions: "CATHERD_DISPATCH",
  },
  { title: "--owns outside the tree", input: { owns: "../x" }, code: "E_INPUT_INVALID", mentions: "--owns" },
  { title: "--owns an absolute path", input: { owns: "/etc" }, code: "E_INPUT_INVALID", mentions: "--owns" },
  {
    title: "--max-parallel 0",
    input: { maxParallel: "0" },
    code: "E_INPUT_INVALID",
    mentions: "--max-parallel",
  },
  {
    title: "--max-parallel 2.5",
    input: { maxParallel: "2.5" },
    code: "E_INPUT_INVALID",
    mentions: "--max-parallel",
  },
  { title: "an unknown --access", input: { access: "root" }, code: "E_INPUT_INVALID", mentions: "--access" },
  { title: "a two-line --model", input: { model: "a\nb" }, code: "E_INPUT_INVALID", mentions: "--model" },
  {
    title: "a --thread of 300 characters",
    input: { thread: "t".repeat(300) },
    code: "E_INPUT_INVALID",
    mentions: "--thread",
  },
  {
    title: "an agent backend without a brief",
    input: { ...CODEX },
    code: "E_INPUT_INVALID",
    mentions: "brief",
  },
  {
    title: "an empty brief",
    input: { ...CODEX, brief: Buffer.alloc(0) },
    code: "E_INPUT_INVALID",
    mentions: "brief",
  },
  {
    title: "a brief of white space",
    input: { ...CODEX, brief: Buffer.from(" \n\t\n") },
    code: "E_INPUT_INVALID",
    mentions: "white space",
  },
  {
    title: "a binary brief",
    input: { ...CODEX, brief: Buffer.from([0x89, 0x50, 0x00, 0xff, 0xfe]) },
    code: "E_INPUT_INVALID",
    mentions: "UTF-8",
  },
  {
    title: "a brief over the limit",
    input: { ...CODEX, brief: Buffer.alloc(MAX_BRIEF_BYTES + 1, 0x61) },
    code: "E_INPUT_INVALID",
    mentions: "limit",
  },
  {
    title: "--base without --worktree",
    input: { base: "main" },
    code: "E_INPUT_INVALID",
    mentions: "--base",
  },
  {
    title: "a --base that looks like a flag",
    input: { worktree: true, base: "--force" },
    code: "E_INPUT_INVALID",
    mentions: "--base",
  },
  {
    title: "--pass-env with a bad name",
    input: { passEnv: ["1A"] },
    code: "E_INPUT_INVALID",
    mentions: "--pass-env",
  },
  {
    title: "--pass-env CATHERD_RUN",
    input: { passEnv: ["CATHERD_RUN"], environment: { ...process.env, CATHERD_RUN: "r" } },
    code: "E_INPUT_INVALID",
    mentions: "CATHERD_RUN",
  },
  {
    title: "--pass-env of a name also given to --env",
    input: { env: ["TOKEN=x"], passEnv: ["TOKEN"], environment: { ...process.env, TOKEN: "y" } },
    code: "E_INPUT_INVALID",
    mentions: "also given to --env",
  },
  {
    title: "--pass-env of a variable not set",
    input: { passEnv: ["SURELY_NOT_SET_ANYWHERE"] },
    code: "E_INPUT_INVALID",
    mentions: "not set",
  },
  {
    title: "--pass-env with --queue (its promoter has another environment)",
    input: { queue: true, passEnv: ["HOME"] },
    code: "E_INPUT_INVALID",
    mentions: "cannot wait in the queue",
  },
  { title: "exec without a command", input: { rest: [] }, code: "E_INPUT_INVALID", mentions: "command" },
  {
    title: "exec of a command that is not on PATH",
    input: { rest: ["no-such-command-anywhere"] },
    code: "E_BACKEND_MISSING",
    mentions: "no-such-command-anywhere",
  },
];

describe("dispatch validation refuses bad input, naming the flag, with a fix", () => {
  it.each(refusals)("answers $title with $code", ({ input, code, mentions }) => {
    let thrown: unknown = null;
    try {
      validateDispatch({ ...EXEC_TRUE, ...input });
    } catch (error) {
      thrown = error;
    }
    expect(isCatherdError(thrown), `threw ${String(thrown)}`).toBe(true);
    if (!isCatherdError(thrown)) return;
    expect(thrown.code).toBe(code);
    expect(thrown.message).toContain(mentions);
    expect(thrown.fix ?? "").not.toBe("");
  });

  it("names the rule a cap breaks", () => {
    expect(() => validateDispatch({ ...EXEC_TRUE, maxTokens: "1e99" })).toThrow(
      '--max-tokens "1e99" is not a whole number of tokens from 1 to 1000000000000, in digits, optionally with k, M or G (50000, 50k, 2M)',
    );
    expect(() => validateDispatch({ ...EXEC_TRUE, maxCost: "NaN" })).toThrow(
      '--max-cost "NaN" is not a number of US dollars above 0 and at most 1000000, such as 5 or 0.50',
    );
  });

  it("accepts caps at the edges of their rules", () => {
    const AGENT = { ...EXEC_TRUE, ...CODEX, brief: Buffer.from("hi") };
    expect(validateDispatch({ ...AGENT, maxTokens: "1", maxCost: "0.01" }).caps).toEqual({
      maxTokens: 1,
      maxCostUsd: 0.01,
    });
    expect(validateDispatch({ ...AGENT, maxTokens: "1000000000000", maxCost: "$1000000" }).caps).toEqual({
      maxTokens: 1_000_000_000_000,
      maxCostUsd: 1_000_000,
    });
    expect(validateDispatch({ ...AGENT, maxTokens: "2M" }).caps.maxTokens).toBe(2_000_000);
    expect(validateDispatch(AGENT).caps).toEqual({ maxTokens: null, maxCostUsd: null });
  });

  it("leaves a CLI not found here to readiness: refused here, answered for by its host when placed there", async () => {
    const missing = validateDispatch({
      ...EXEC_TRUE,
      ...CODEX,
      bin: "/nonexistent/codex",
      brief: Buffer.from("hi"),
    });
    expect(missing.bin).toBe("/nonexistent/codex");
    const onNoPath = validateDispatch({
      ...EXEC_TRUE,
      backend: "codex",
      rest: [],
      brief: Buffer.from("hi"),
      environment: { PATH: "/nonexistent", CATHERD_CODEX_BIN: "" },
    });
    expect(onNoPath.bin).toBe("");
    for (const request of [missing, onNoPath]) {
      const ready = await checkReadiness(request.backend, request.bin, tempDir(), systemClock);
      expect(ready.problem).toMatchObject({
        code: "E_BACKEND_MISSING",
        message: expect.stringContaining(`codex: cannot run "${request.bin}"`),
        fix: expect.stringContaining("CATHERD_CODEX_BIN"),
      });
    }
  });

  it("maps usage errors to exit 2 and a missing CLI to exit 3", () => {
    expect(exitCodeFor("E_INPUT_INVALID")).toBe(2);
    expect(exitCodeFor("E_BACKEND_MISSING")).toBe(3);
  });

  it("accepts the edges of each rule", () => {
    const request = validateDispatch({
      ...EXEC_TRUE,
      name: `a${"b".repeat(63)}`,
      idle: "250ms",
      wall: "720h",
      killGrace: "0",
      env: ["A=", "B=x=y"],
      owns: "src/, README.md",
      maxParallel: "10000",
      brief: Buffer.alloc(MAX_BRIEF_BYTES, 0x61),
      worktree: true,
      passEnv: ["PASSED", "PASSED"],
      keepTmp: true,
      environment: { ...process.env, PASSED: "" },
    });
    expect(request).toMatchObject({
      isolation: { worktree: { base: "HEAD" }, passEnv: ["PASSED"], keepTmp: true },
      idleMs: 250,
      wallMs: 720 * 3_600_000,
      killGraceMs: 0,
      env: { A: "", B: "x=y" },
      owns: ["src/", "README.md"],
      maxParallel: 10_000,
    });
    expect(path.isAbsolute(request.bin)).toBe(true);
  });
});

// Through the real CLI: what only the command line does, and one pure refusal to show the wiring.
const hugeBrief = path.join(tempDir(), "huge.md");
fs.writeFileSync(hugeBrief, Buffer.alloc(50 * 1024 * 1024, 0x61));

const endToEnd: {
  title: string;
  args: string[];
  code: string;
  exit: number;
  mentions: string;
  input?: string;
  env?: NodeJS.ProcessEnv;
}[] = [
  {
    title: "a name with .. (validation, wired to the CLI)",
    args: ["--backend", "exec", "--name", "a..b", "--", "true"],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--name",
  },
  {
    title: "an unknown flag",
    args: ["--backend", "exec", "--frobnicate", "--", "true"],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "frobnicate",
  },
  {
    title: "a flag without its value",
    args: ["--backend", "exec", "--name"],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--name",
  },
  {
    title: "a negative duration, which node's parser takes for a flag",
    args: ["--backend", "exec", "--idle", "-5m", "--", "true"],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--idle",
  },
  {
    title: "--max-tokens 0",
    args: ["--backend", "exec", "--max-tokens", "0", "--", "true"],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--max-tokens",
  },
  {
    title: "--max-tokens -5, which node's parser takes for a flag",
    args: ["--backend", "exec", "--max-tokens", "-5", "--", "true"],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--max-tokens",
  },
  {
    title: "--max-cost NaN",
    args: ["--backend", "exec", "--max-cost", "NaN", "--", "true"],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--max-cost",
  },
  {
    title: "an empty brief on stdin",
    args: ["--backend", "codex", "--bin", "/bin/true"],
    input: "",
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "brief",
  },
  {
    title: "a 50 MB brief file",
    args: ["--backend", "codex", "--bin", "/bin/true", "--brief-file", hugeBrief],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "limit",
  },
  {
    title: "both --brief and --brief-file",
    args: ["--backend", "codex", "--bin", "/bin/true", "--brief", "hi", "--brief-file", hugeBrief],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--brief-file",
  },
  {
    title: "a missing CLI",
    args: ["--backend", "codex", "--bin", "/nonexistent/codex", "--brief", "hi"],
    code: "E_BACKEND_MISSING",
    exit: 3,
    mentions: "codex",
  },
  {
    title: "an empty CATHERD_CODEX_BIN and no codex on PATH",
    args: ["--backend", "codex", "--brief", "hi"],
    env: { CATHERD_CODEX_BIN: "", PATH: "/nonexistent" },
    code: "E_BACKEND_MISSING",
    exit: 3,
    mentions: "CATHERD_CODEX_BIN",
  },
];

describe("catherd dispatch refuses bad input before writing anything", () => {
  it.each(endToEnd)("answers $title with $code, exit $exit, and a fix", async (c) => {
    const { home, env } = isolatedHome();
    const options = {
      env: { ...env, ...c.env },
      ...(c.input === undefined ? {} : { input: c.input }),
    };
    const text = await runCli(["dispatch", ...c.args], options);
    expect(text.code).toBe(c.exit);
    expect(text.stderr).toMatch(new RegExp(`^error ${c.code}: .*\\nfix: .+\\n$`, "s"));
    expect(text.stderr).toContain(c.mentions);
    const json = await runCli(["dispatch", "--json", ...c.args], options);
    expect(json.code).toBe(c.exit);
    expect(JSON.parse(json.stdout)).toMatchObject({
      error: { code: c.code, message: expect.any(String), fix: expect.any(String) },
    });
    expect(dispatchFolders(home)).toEqual([]);
  });
});
