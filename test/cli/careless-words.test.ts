import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { expectAnswer, homeWithOne } from "../helpers/answers.js";
import { dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { CLI_MAIN, reapAll, tempDir } from "../helpers/folders.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

// What a new user trips on, second table: each refusal in catherd's words, logs, and what result says of
// its patch (careless-user.test.ts has the first).

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "left behind").toBe(0);
});

describe("each refusal states its rule, in catherd's words", () => {
  const exec = ["dispatch", "--backend", "exec"];
  const nameRule = "a name is 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit";
  it.each([
    ["a name with a slash", [...exec, "--name", "a/b", "--", "true"], nameRule],
    ["a name with a space", [...exec, "--name", "my task", "--", "true"], nameRule],
    ["a name of 300 characters", [...exec, "--name", "n".repeat(300), "--", "true"], nameRule],
    ["a name of ..", [...exec, "--name", "..", "--", "true"], nameRule],
    ["a name with é", [...exec, "--name", "é", "--", "true"], nameRule],
    [
      "an unknown backend",
      ["dispatch", "--backend", "foo", "--", "true"],
      'unknown --backend "foo": the backends are codex, claude-code, opencode, gemini, exec',
    ],
    [
      "a cap that is no number",
      [...exec, "--max-parallel", "abc", "--", "true"],
      "a whole number from 1 to 10000, or none",
    ],
    ["a cap of 0", [...exec, "--max-parallel", "0", "--", "true"], "a whole number from 1 to 10000, or none"],
    [
      "a value that starts with -",
      [...exec, "--idle", "-1s", "--", "true"],
      "join it to the flag: --idle=-1s",
    ],
    ["that value joined", [...exec, "--idle=-1s", "--", "true"], "must be longer than zero"],
    ["an unknown option", [...exec, "--bogus", "--", "true"], "unknown option --bogus"],
    ["a flag without its value", [...exec, "--name"], "--name needs a value"],
    [
      "--max-tokens on exec, which reports no usage",
      [...exec, "--max-tokens", "50k", "--", "true"],
      "--max-tokens cannot hold a --backend exec dispatch: exec reports no usage, so the cap would never fire",
    ],
    [
      "--max-cost on exec, which reports no usage",
      [...exec, "--max-cost", "5", "--", "true"],
      "--max-cost cannot hold a --backend exec dispatch: exec reports no usage",
    ],
  ])("%s", async (_title, argv, rule) => {
    const { home, env } = isolatedHome();
    const result = await runCli(argv, { env });
    expectAnswer(result, { code: 2, says: ["error E_INPUT_INVALID", rule, "fix: "] });
    expect(result.stderr).not.toMatch(/Invalid|Expected|received|ambiguous|'-- "/);
    expect(fs.existsSync(path.join(home, "runs"))).toBe(false);
  });

  it("takes --max-parallel none to remove the run's remembered cap", async () => {
    const { home, env } = isolatedHome();
    const run = (flags: string[]) => runCli([...exec, "--json", ...flags, "--", "true"], { env });
    for (const [flags, cap] of [
      [["--max-parallel", "3"], 3],
      [[], 3],
      [["--max-parallel", "none"], null],
    ] as const) {
      const d = dispatchedOf(await run([...flags]));
      dispatched.push(d.dispatchId);
      await waitForFile(path.join(d.dir, "record.json"), 20_000);
      const runFile = JSON.parse(fs.readFileSync(path.join(home, "runs/default/run.json"), "utf8"));
      expect(runFile.maxParallel ?? null).toBe(cap);
    }
  });
});

describe("logs", () => {
  it("--follow --json streams a JSON object per line as it comes, and says when the dispatch is recorded", async () => {
    const { env } = isolatedHome();
    const go = path.join(tempDir(), "go");
    const d = dispatchedOf(
      await runCli(
        [
          "dispatch",
          "--backend",
          "exec",
          "--json",
          "--",
          "sh",
          "-c",
          `echo first; while [ ! -e '${go}' ]; do sleep 0.05; done; echo second`,
        ],
        { env },
      ),
    );
    dispatched.push(d.dispatchId);
    const child = spawn(process.execPath, [CLI_MAIN, "logs", d.dir, "--follow", "--json"], { env });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      // The first line arrives while the dispatch still runs: nothing waits for the record.
      await waitFor(
        "the first line, streamed",
        () => (out.includes('"line":"first"') ? true : undefined),
        20_000,
      );
      expect(fs.existsSync(path.join(d.dir, "record.json"))).toBe(false);
      fs.writeFileSync(go, "");
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    const objects = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const size = fs.statSync(path.join(d.dir, "events.jsonl")).size;
    expect(objects).toEqual([
      { line: "first", cursor: 6 },
      { line: "second", cursor: size },
      { recorded: true, cursor: size },
    ]);
  });

  it("says a --since past the end was read from the start", async () => {
    const { env, dir } = await homeWithOne(dispatched);
    const text = await runCli(["logs", dir, "--since", "99999"], { env });
    expect(text.code).toBe(0);
    expect(text.stdout).toBe("working\n");
    expect(text.stderr).toContain("--since 99999 is past the end");
    const json = JSON.parse((await runCli(["logs", dir, "--since", "99999", "--json"], { env })).stdout);
    expect(json).toEqual({ lines: ["working"], cursor: 8, restarted: true });
  });
});

describe("result says what its patch holds", () => {
  function repo(): string {
    const dir = tempDir();
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], {
        cwd: dir,
        stdio: "ignore",
      });
    git("init", "-q");
    fs.mkdirSync(path.join(dir, "src"));
    fs.writeFileSync(path.join(dir, "src/a.ts"), "a\n");
    fs.writeFileSync(path.join(dir, "other.txt"), "o\n");
    git("add", "-A");
    git("commit", "-qm", "init");
    return dir;
  }

  async function resultOf(env: NodeJS.ProcessEnv, cwd: string, script: string, flags: string[]) {
    const d = dispatchedOf(
      await runCli(
        ["dispatch", "--backend", "exec", "--json", "--cwd", cwd, ...flags, "--", "sh", "-c", script],
        { env },
      ),
    );
    dispatched.push(d.dispatchId);
    await waitForFile(path.join(d.dir, "record.json"), 20_000);
    const text = (await runCli(["result", d.dir], { env })).stdout;
    const json = JSON.parse((await runCli(["result", d.dir, "--json"], { env })).stdout);
    outsideOf.set(text, json.changedOutsideOwns);
    return text;
  }

  /** `result --json`'s changedOutsideOwns, by the text `result` printed for the same dispatch. */
  const outsideOf = new Map<string, unknown>();

  it("counts and names the files changed outside --owns that the patch leaves out, and says none without --owns as none", async () => {
    const { env } = isolatedHome();
    const cwd = repo();
    const owned = await resultOf(env, cwd, "echo b >> src/a.ts; echo p >> other.txt", ["--owns", "src/"]);
    expect(owned).toMatch(
      /changes under its --owns src\/: \S+changes\.patch \(\d+ B\); 2 files changed in the work tree in all, 1 outside it and not in the patch: other\.txt$/m,
    );
    const inside = await resultOf(env, cwd, "echo c >> src/a.ts", ["--owns", "src/"]);
    expect(inside).toMatch(/; 1 file changed in the work tree in all, none outside it$/m);
    expect(outsideOf.get(owned)).toEqual(["other.txt"]);
    const nothing = await resultOf(env, cwd, "true", []);
    expect(nothing).toMatch(/changes: none \(\S+changes\.patch is empty\)/);
    expect(nothing).not.toContain("--owns");
    expect(outsideOf.get(nothing)).toEqual([]);
  });
});
