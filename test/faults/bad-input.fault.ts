import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cancelCommand } from "../../src/cli/cancel-command.js";
import { type Command, parseInput } from "../../src/cli/command-io.js";
import { dispatchCommand } from "../../src/cli/dispatch-command.js";
import { logsCommand } from "../../src/cli/logs-command.js";
import { resultCommand } from "../../src/cli/result-command.js";
import { showCommand } from "../../src/cli/show-command.js";
import { statusCommand } from "../../src/cli/status-command.js";
import { waitCommand } from "../../src/cli/wait-command.js";
import { exitCodeFor, isCatherdError } from "../../src/domain/errors.js";
import { runCli } from "../helpers/cli.js";
import { SUPERVISOR_MAIN, tempDir } from "../helpers/folders.js";
import { jsonOf, trial, useFaultKit, walk } from "./kit.js";

// Row 9: bad input to every command. Each is one clear E_… error (exit 2 for usage and bad ids), and
// nothing is written anywhere. (test/dispatch/bad-input.test.ts covers dispatch's own flags in depth.)

useFaultKit();

const scratch = tempDir("catherd-fault-input-");
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));
const aFile = path.join(scratch, "a-file");
fs.writeFileSync(aFile, "x");
const notADispatch = path.join(scratch, "plain-folder");
fs.mkdirSync(notADispatch);

const LONG = "n".repeat(200);
const BAD_IDS = ["..", "a..b", "a/b", LONG, "-x", ".hidden", "a b", "ünï"];
const READERS = ["status", "show", "logs", "wait", "result", "cancel"] as const;

interface Case {
  args: string[];
  code: string;
  exit: number;
  input?: Buffer;
}

function cases(): { title: string; c: Case }[] {
  const out: { title: string; c: Case }[] = [];
  const add = (title: string, c: Case) => out.push({ title, c });
  for (const verb of READERS) {
    const ref = verb === "status" ? [] : ["x"];
    for (const bad of BAD_IDS) {
      add(`${verb} --run ${JSON.stringify(bad.slice(0, 12))}`, {
        args: [verb, ...ref, "--run", bad],
        code: "E_INPUT_INVALID",
        exit: 2,
      });
    }
    add(`${verb} with an unknown flag`, {
      args: [verb, ...ref, "--frobnicate"],
      code: "E_INPUT_INVALID",
      exit: 2,
    });
    add(`${verb} --run without its value`, {
      args: [verb, ...ref, "--run"],
      code: "E_INPUT_INVALID",
      exit: 2,
    });
    if (verb !== "status") {
      if (verb !== "wait")
        add(`${verb} without a dispatch`, { args: [verb], code: "E_INPUT_INVALID", exit: 2 });
      for (const bad of ["a..b", LONG, "-x", "a b", "ünï", ".hidden"]) {
        add(`${verb} of the bad id ${JSON.stringify(bad.slice(0, 12))}`, {
          args: [verb, bad],
          code: "E_INPUT_INVALID",
          exit: 2,
        });
      }
      // With a `/` (or `..`) the text is a folder path (specs/cli.md): not a dispatch folder, not found.
      for (const bad of ["a/b", "../../etc", "..", notADispatch]) {
        add(`${verb} of the path ${JSON.stringify(bad.slice(-12))}`, {
          args: [verb, bad],
          code: "E_DISPATCH_NOT_FOUND",
          exit: 1,
        });
      }
    }
  }
  for (const timeout of ["-5s", "9999h", "0", "abc", "5", "1e9ms", ""]) {
    add(`wait --timeout ${JSON.stringify(timeout)}`, {
      args: ["wait", "x", "--timeout", timeout],
      code: "E_INPUT_INVALID",
      exit: 2,
    });
  }
  add("an unknown command", { args: ["frobnicate"], code: "E_INPUT_INVALID", exit: 2 });
  const exec = ["dispatch", "--backend", "exec"];
  add("dispatch --env with a newline", {
    args: [...exec, "--env", "A=1\n2", "--", "true"],
    code: "E_INPUT_INVALID",
    exit: 2,
  });
  add("dispatch --idle -5m", {
    args: [...exec, "--idle", "-5m", "--", "true"],
    code: "E_INPUT_INVALID",
    exit: 2,
  });
  add("dispatch --wall 9999h", {
    args: [...exec, "--wall", "9999h", "--", "true"],
    code: "E_INPUT_INVALID",
    exit: 2,
  });
  add("dispatch --kill-grace -1s", {
    args: [...exec, "--kill-grace", "-1s", "--", "true"],
    code: "E_INPUT_INVALID",
    exit: 2,
  });
  add("dispatch --cwd a file", {
    args: [...exec, "--cwd", aFile, "--", "true"],
    code: "E_INPUT_INVALID",
    exit: 2,
  });
  add("dispatch --name of 200 characters", {
    args: [...exec, "--name", LONG, "--", "true"],
    code: "E_INPUT_INVALID",
    exit: 2,
  });
  const codex = ["dispatch", "--backend", "codex", "--bin", "/bin/true"];
  add("dispatch an empty brief on stdin", {
    args: codex,
    input: Buffer.alloc(0),
    code: "E_INPUT_INVALID",
    exit: 2,
  });
  add("dispatch a 50 MB brief on stdin", {
    args: codex,
    input: Buffer.alloc(50 * 1024 * 1024, 0x61),
    code: "E_INPUT_INVALID",
    exit: 2,
  });
  add("dispatch a binary brief on stdin", {
    args: codex,
    input: Buffer.from([0x89, 0x50, 0x00, 0xff]),
    code: "E_INPUT_INVALID",
    exit: 2,
  });
  add("dispatch --brief-file of a folder", {
    args: [...codex, "--brief-file", scratch],
    code: "E_INPUT_INVALID",
    exit: 2,
  });
  add("dispatch --brief-file of /dev/zero", {
    args: [...codex, "--brief-file", "/dev/zero"],
    code: "E_INPUT_INVALID",
    exit: 2,
  });
  return out;
}

describe("row 9: bad input to every command", () => {
  it("answers every bad input with one clear error, the right exit code, and writes nothing", async () => {
    const t = trial("9 bad input to every command (cases x text/json)", { many: true });
    const home = t.dir("catherd-fault-home-");
    const env = { ...process.env, CATHERD_HOME: home, CATHERD_RUN: "" };
    const all = cases();
    const failures: string[] = [];
    for (let i = 0; i < all.length; i += 8) {
      await Promise.all(
        all.slice(i, i + 8).map(async ({ title, c }) => {
          for (const json of [true, false]) {
            t.tally.tried += 1;
            const r = await runCli(json ? [...c.args, "--json"] : c.args, {
              env,
              timeoutMs: 30_000,
              ...(c.input === undefined ? {} : { input: c.input }),
            });
            const problems: string[] = [];
            if (r.code !== c.exit) problems.push(`exit ${r.code}, wanted ${c.exit}`);
            if (json) {
              let code: string | undefined;
              try {
                code = (jsonOf(r).error as { code: string }).code;
              } catch {
                problems.push(`stdout is not a JSON error: ${r.stdout.slice(0, 120)}`);
              }
              if (code !== c.code) problems.push(`code ${code}, wanted ${c.code}`);
            } else if (!new RegExp(`^error ${c.code}: [^\\n]+\\nfix: [^\\n]+\\n$`).test(r.stderr)) {
              problems.push(`stderr ${JSON.stringify(r.stderr.slice(0, 200))}`);
            }
            if (problems.length === 0) t.tally.passed += 1;
            else failures.push(`${title}${json ? " --json" : ""}: ${problems.join("; ")}`);
          }
        }),
      );
    }
    t.note(`${all.length} inputs`);
    expect(failures).toEqual([]);
    expect(walk(home), "files written by bad input").toEqual([]);
  });

  it("refuses NUL in any id, flag value or duration, in process (a NUL cannot travel in argv)", async () => {
    const t = trial("9 NUL bytes in ids and values (in process)", { many: true });
    const home = t.dir("catherd-fault-home-");
    const saved = process.env.CATHERD_HOME;
    process.env.CATHERD_HOME = home;
    try {
      const runs: [Command<unknown>, string[]][] = [
        [statusCommand as Command<unknown>, ["--run", "a\0b"]],
        [showCommand as Command<unknown>, ["a\0b"]],
        [logsCommand as Command<unknown>, ["a\0b"]],
        [resultCommand as Command<unknown>, ["a\0b"]],
        [cancelCommand as Command<unknown>, ["a\0b"]],
        [waitCommand as Command<unknown>, ["a\0b"]],
        [waitCommand as Command<unknown>, ["x", "--timeout", "1\0s"]],
        [showCommand as Command<unknown>, ["x", "--run", "\0"]],
        [dispatchCommand as Command<unknown>, ["--backend", "exec", "--name", "a\0", "--", "true"]],
        [dispatchCommand as Command<unknown>, ["--backend", "exec", "--env", "A=x\0y", "--", "true"]],
        [
          dispatchCommand as Command<unknown>,
          ["--backend", "codex", "--bin", "/bin/true", "--brief", "a\0b"],
        ],
        [dispatchCommand as Command<unknown>, ["--backend", "exec", "--", "tr\0ue"]],
      ];
      const failures: string[] = [];
      for (const [command, argv] of runs) {
        t.tally.tried += 1;
        try {
          await command.handler(parseInput(command, argv), { stdinIsOurs: true });
          failures.push(`${command.name} ${JSON.stringify(argv)} succeeded`);
        } catch (error) {
          const code = isCatherdError(error) ? error.code : String(error);
          if (code === "E_INPUT_INVALID" || (code === "E_BACKEND_MISSING" && argv.includes("tr\0ue"))) {
            t.tally.passed += 1;
          } else failures.push(`${command.name} ${JSON.stringify(argv)}: ${code}`);
          if (isCatherdError(error)) expect(exitCodeFor(error.code)).toBeGreaterThan(1);
        }
      }
      expect(failures).toEqual([]);
      expect(walk(home)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.CATHERD_HOME;
      else process.env.CATHERD_HOME = saved;
    }
  });

  it("supervise refuses a missing, non-folder or non-dispatch folder, and extra arguments, writing nothing", async () => {
    const t = trial("9 bad input to supervise", { many: true });
    const plain = t.dir("catherd-fault-plain-");
    const withSpec = t.dir("catherd-fault-spec-");
    fs.writeFileSync(path.join(withSpec, "spec.json"), JSON.stringify({ cmd: "/bin/true" }));
    const before = walk(withSpec);
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [SUPERVISOR_MAIN, ...args], {
          stdio: ["ignore", "ignore", "pipe"],
        });
        t.pid(child.pid);
        let stderr = "";
        child.stderr.on("data", (d: Buffer) => {
          stderr += d.toString();
        });
        child.on("exit", (code) => resolve({ code, stderr }));
      });
    const cliCases: [string, string[]][] = [
      ["no folder", ["supervise"]],
      ["a file", ["supervise", aFile]],
      ["a missing path", ["supervise", "/nonexistent/dispatch"]],
      ["a folder without spec.json", ["supervise", plain]],
      ["a dispatch folder and an extra argument", ["supervise", withSpec, "--extra"]],
    ];
    const failures: string[] = [];
    for (const [what, args] of cliCases) {
      t.tally.tried += 1;
      const r = await runCli(args, { env: process.env });
      if (r.code === 2 && /^error E_INPUT_INVALID: .+\nfix: .+\n$/s.test(r.stderr)) t.tally.passed += 1;
      else failures.push(`catherd supervise ${what}: exit ${r.code} ${r.stderr}`);
    }
    for (const [what, args] of [
      ["an unknown flag after the folder", [withSpec, "--frobnicate"]],
      ["a second folder", [withSpec, plain]],
    ] as const) {
      t.tally.tried += 1;
      const r = await run([...args]);
      if (r.code === 2 && r.stderr.startsWith("error E_INPUT_INVALID")) t.tally.passed += 1;
      else failures.push(`supervisor main ${what}: exit ${r.code} ${r.stderr}`);
    }
    expect(failures).toEqual([]);
    expect(walk(plain)).toEqual([]);
    expect(walk(withSpec)).toEqual(before);
  });
});
