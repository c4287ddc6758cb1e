import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { detectCgroups } from "../../src/infra/cgroup/detect.js";
import { cgroupName } from "../../src/infra/cgroup/dispatch-cgroup.js";
import { type CliResult, dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { CLI_MAIN, reapAll, tempDir } from "../helpers/folders.js";
import { cgroupsOf, isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

// What a new user trips on, tried as one would: careless input, broken homes, the words of each answer.
// Each row is a command line and what it must answer (exit code, the error's code, words it must say).

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "left behind").toBe(0);
});

interface Answer {
  code: number;
  /** The error's code, with --json. */
  error?: string;
  /** Words the output (stdout and stderr) must hold. */
  says?: (string | RegExp)[];
}

function expectAnswer(result: CliResult, answer: Answer): void {
  const all = `${result.stdout}${result.stderr}`;
  expect(result.code, all).toBe(answer.code);
  if (answer.error !== undefined) {
    const printed = JSON.parse(result.stdout) as { error?: { code?: string } };
    expect(printed.error?.code, all).toBe(answer.error);
  }
  for (const words of answer.says ?? []) {
    if (typeof words === "string") expect(all).toContain(words);
    else expect(all).toMatch(words);
  }
}

/** A home with one recorded dispatch `done` (it printed "working") in its default run; returns its folder. */
async function homeWithOne(): Promise<{ home: string; env: NodeJS.ProcessEnv; dir: string }> {
  const { home, env } = isolatedHome();
  const result = await runCli(
    ["dispatch", "--backend", "exec", "--name", "done", "--json", "--", "echo", "working"],
    {
      env,
    },
  );
  const d = dispatchedOf(result);
  dispatched.push(d.dispatchId);
  await waitForFile(path.join(d.dir, "record.json"), 20_000);
  return { home, env, dir: d.dir };
}

describe("a run that cannot be read is an error, never an empty run", () => {
  it.each([
    ["status", ["status", "--json"]],
    ["clean --dry-run", ["clean", "--dry-run", "--json"]],
    ["wait", ["wait", "--json"]],
  ])("%s answers E_IO_READ naming the run's folder", async (_title, argv) => {
    const { home, env } = await homeWithOne();
    const dispatches = path.join(home, "runs/default/dispatches");
    fs.renameSync(dispatches, `${dispatches}.moved`);
    fs.writeFileSync(dispatches, "not a folder");
    const result = await runCli(argv, { env });
    expectAnswer(result, { code: 1, error: "E_IO_READ", says: [dispatches] });
  });

  it("says a run that does not exist does not exist, naming the runs there are", async () => {
    const { env } = await homeWithOne();
    expectAnswer(await runCli(["status", "--run", "typo", "--json"], { env }), {
      code: 1,
      error: "E_RUN_NOT_FOUND",
      says: ["there is no run typo", "default"],
    });
    expectAnswer(await runCli(["status"], { env: { ...env, CATHERD_RUN: "typo" } }), {
      code: 1,
      says: ["error E_RUN_NOT_FOUND", "fix: give one of its runs: default"],
    });
    const fresh = isolatedHome();
    expectAnswer(await runCli(["status"], { env: fresh.env }), {
      code: 0,
      says: ["no dispatches in run default"],
    });
  });
});

describe("a dispatch folder that cannot be read", () => {
  it("shows as unknown under its own name, and logs of it is E_IO_READ", async () => {
    const { env, dir } = await homeWithOne();
    for (const file of ["admit.json", "record.json", "events.jsonl"]) {
      fs.rmSync(path.join(dir, file));
      fs.mkdirSync(path.join(dir, file));
    }
    const status = await runCli(["status", "--json"], { env });
    expect(status.code).toBe(0);
    const [row] = (JSON.parse(status.stdout) as { dispatches: Record<string, unknown>[] }).dispatches;
    expect(row).toMatchObject({ name: "done", state: "unknown" });
    expectAnswer(await runCli(["status"], { env }), {
      code: 0,
      says: [/done\s+\S+\s+\S+\s+unknown/, "cannot read"],
    });
    expectAnswer(await runCli(["logs", dir, "--json"], { env }), {
      code: 1,
      error: "E_IO_READ",
      says: [path.join(dir, "events.jsonl")],
    });
  });
});

describe("clean and a dispatch folder that cannot be read", () => {
  it("lists it as kept with why, in --dry-run as in the real run, and leaves it", async () => {
    const { env, dir } = await homeWithOne();
    for (const file of ["admit.json", "record.json"]) {
      fs.rmSync(path.join(dir, file));
      fs.mkdirSync(path.join(dir, file));
    }
    const why = /^cannot read record\.json \(E_IO_READ\), admit\.json \(E_IO_READ\): clean cannot tell/;
    for (const flags of [["--dry-run"], []]) {
      const result = await runCli(["clean", "--older-than", "0", "--json", ...flags], { env });
      expect(result.code, result.stderr).toBe(0);
      const { clean } = JSON.parse(result.stdout) as {
        clean: { removed: unknown[]; kept: { name: string; dir: string; why: string }[] };
      };
      expect(clean.removed).toEqual([]);
      expect(clean.kept).toEqual([
        expect.objectContaining({ name: "done", dir, why: expect.stringMatching(why) }),
      ]);
    }
    expectAnswer(await runCli(["clean", "--older-than", "0", "--dry-run"], { env }), {
      code: 0,
      says: ["cannot read record.json (E_IO_READ)"],
    });
    expect(fs.existsSync(dir)).toBe(true);
  });
});

describe("nothing left behind", () => {
  it("has clean remove the empty cgroups of a recorded dispatch at once, not an hour later", async () => {
    const { env, dir } = await homeWithOne();
    const layout = detectCgroups();
    if (layout === null) return; // no cgroups for catherd on this machine: nothing to leave behind
    const dispatchId = path.basename(dir);
    const name = cgroupName(dispatchId, dir);
    // What a process stuck in it at the record leaves once it has gone: the cgroup, empty.
    for (const { parent } of layout.hierarchies) fs.mkdirSync(path.join(parent, name), { recursive: true });
    expect(cgroupsOf(dispatchId)).not.toEqual([]);
    const dry = JSON.parse((await runCli(["clean", "--dry-run", "--json"], { env })).stdout);
    expect(dry.clean.cgroupsRemoved).toEqual([name]);
    expect(cgroupsOf(dispatchId)).not.toEqual([]);
    const cleaned = JSON.parse((await runCli(["clean", "--json"], { env })).stdout);
    expect(cleaned.clean).toMatchObject({ cgroupsRemoved: [name], removed: [] });
    expect(cgroupsOf(dispatchId)).toEqual([]);
    expect(fs.existsSync(dir)).toBe(true);
  });

  it("removes a dispatch's cgroups when a reader records it lost, in every hierarchy", async () => {
    const { env } = isolatedHome();
    const d = dispatchedOf(
      await runCli(["dispatch", "--backend", "exec", "--name", "doomed", "--json", "--", "sleep", "60"], {
        env,
      }),
    );
    dispatched.push(d.dispatchId);
    const proc = JSON.parse(await waitForFile(path.join(d.dir, "proc.json"), 20_000)) as { pid: number };
    const supervisor = JSON.parse(fs.readFileSync(path.join(d.dir, "supervisor.json"), "utf8")) as {
      pid: number;
    };
    // The agent is spawned into its cgroups: proc.json is written after the spawn.
    const contained = cgroupsOf(d.dispatchId);
    for (const pid of [supervisor.pid, proc.pid]) killPid(pid);
    await waitFor("the supervisor and its agent to die", () =>
      [supervisor.pid, proc.pid].some(isAlive) ? undefined : true,
    );
    const status = await runCli(["status", "--json"], { env });
    expect(JSON.parse(status.stdout).dispatches[0]).toMatchObject({ name: "doomed", status: "lost" });
    if (contained.length > 0) expect(cgroupsOf(d.dispatchId)).toEqual([]);
  });
});

describe("careless input", () => {
  it.each([
    ["an overlapping --owns", ["--owns", "src/"], "E_ADMIT_OVERLAP"],
    ["a run at its cap", ["--max-parallel", "1"], "E_ADMIT_CAPACITY"],
  ])("leaves no folder behind when refused for %s", async (_title, flags, code) => {
    const { home, env } = isolatedHome();
    const cwd = tempDir();
    const first = await runCli(
      [
        "dispatch",
        "--backend",
        "exec",
        "--name",
        "holder",
        "--owns",
        "src/",
        "--cwd",
        cwd,
        "--json",
        "--",
        "sleep",
        "30",
      ],
      { env },
    );
    dispatched.push(dispatchedOf(first).dispatchId);
    const refused = await runCli(
      ["dispatch", "--backend", "exec", "--name", "refused", "--cwd", cwd, "--json", ...flags, "--", "true"],
      { env },
    );
    expectAnswer(refused, { code: 1, error: code });
    expect(fs.readdirSync(path.join(home, "runs/default/dispatches"))).toEqual(["holder"]);
    await runCli(["cancel", "holder", "--wait"], { env });
  });

  it.each([
    ["empty", ""],
    ["only white space", "  \n\t "],
  ])("refuses a brief that is %s, for exec as for an agent CLI", async (_title, brief) => {
    const { home, env } = isolatedHome();
    for (const backend of ["exec", "codex"]) {
      const argv = ["dispatch", "--backend", backend, "--brief", brief, "--json"];
      const result = await runCli(
        backend === "exec" ? [...argv, "--", "true"] : [...argv, "--bin", "/bin/true"],
        {
          env,
        },
      );
      expectAnswer(result, {
        code: 2,
        error: "E_INPUT_INVALID",
        says: [/brief is (empty|only white space)/],
      });
    }
    expect(fs.existsSync(path.join(home, "runs"))).toBe(false);
  });

  it("reads a brief piped to exec, and says at once when stdin stays open with nothing in it", async () => {
    const { env } = isolatedHome();
    const piped = await runCli(["dispatch", "--backend", "exec", "--json", "--", "cat"], {
      env,
      input: "from the pipe\n",
    });
    expect(piped.stderr).toBe("");
    const d = dispatchedOf(piped);
    dispatched.push(d.dispatchId);
    expect(fs.readFileSync(path.join(d.dir, "brief.md"), "utf8")).toBe("from the pipe\n");
    const held = await runCli(["dispatch", "--backend", "exec", "--json", "--", "true"], {
      env,
      holdStdin: true,
    });
    expect(held.stderr).toContain("stdin was not read");
    const h = dispatchedOf(held);
    dispatched.push(h.dispatchId);
    expect(fs.existsSync(path.join(h.dir, "brief.md"))).toBe(false);
    for (const dir of [d.dir, h.dir]) await waitForFile(path.join(dir, "record.json"), 20_000);
  });
});

describe("arguments a verb does not take", () => {
  it.each([
    [["status", "extra"], /unexpected argument \\?"extra\\?"/, "catherd status takes no arguments"],
    [["show", "a", "b"], /unexpected argument \\?"b\\?"/, "catherd show takes one"],
    [
      ["clean", "--dry-run", "default"],
      /unexpected argument \\?"default\\?"/,
      "catherd clean takes no arguments",
    ],
  ])("refuses %j, naming the argument and what the verb takes", async (argv, says, fix) => {
    const { env } = isolatedHome();
    expectAnswer(await runCli([...argv, "--json"], { env }), {
      code: 2,
      error: "E_INPUT_INVALID",
      says: [says],
    });
    expectAnswer(await runCli(argv, { env }), { code: 2, says: [`fix: ${fix}`] });
  });

  it("says why a program given after -- cannot run: not there, not executable, a folder", async () => {
    const { home, env } = isolatedHome();
    const plain = path.join(tempDir(), "script.sh");
    fs.writeFileSync(plain, "#!/bin/sh\necho hi\n", { mode: 0o644 });
    for (const [program, why] of [
      [plain, `${plain} exists but is not executable (chmod +x ${plain})`],
      ["/no/such/program", "/no/such/program does not exist"],
      ["/etc", "/etc is a folder, not a program"],
      ["no-such-program-here", "no-such-program-here is not on PATH"],
    ] as const) {
      expectAnswer(await runCli(["dispatch", "--backend", "exec", "--json", "--", program], { env }), {
        code: 3,
        error: "E_BACKEND_MISSING",
        says: [why],
      });
    }
    expect(fs.existsSync(path.join(home, "runs"))).toBe(false);
  });

  it("answers doctor exec with a line saying there is nothing to check", async () => {
    const { env } = isolatedHome();
    expectAnswer(await runCli(["doctor", "exec"], { env: { ...env, NO_COLOR: "1" } }), {
      code: 0,
      says: [/ok\s+exec\s+runs the command given after --: nothing to install or check/],
    });
  });
});

describe("what the verbs say", () => {
  it("status --json keeps a recorded dispatch's admission time and last event", async () => {
    const { env } = await homeWithOne();
    const status = JSON.parse((await runCli(["status", "--json"], { env })).stdout) as {
      dispatches: Record<string, unknown>[];
    };
    expect(status.dispatches[0]).toMatchObject({ state: "recorded", admittedAt: expect.any(String) });
    expect(
      status.dispatches[0]?.lastEventAt === null || typeof status.dispatches[0]?.lastEventAt === "string",
    ).toBe(true);
  });

  it("counts the run's live dispatches in its budget line, though none has a part in the ledger yet", async () => {
    const { env } = isolatedHome();
    const dirs: string[] = [];
    for (const name of ["one", "two"]) {
      const d = dispatchedOf(
        await runCli(
          [
            "dispatch",
            "--backend",
            "exec",
            "--name",
            name,
            "--run-budget",
            "tokens=2M",
            "--json",
            "--",
            "sleep",
            "60",
          ],
          { env },
        ),
      );
      dispatched.push(d.dispatchId);
      dirs.push(d.dir);
    }
    for (const dir of dirs) await waitForFile(path.join(dir, "proc.json"), 20_000);
    expectAnswer(await runCli(["status"], { env }), {
      code: 0,
      says: [/--run-budget tokens=2M\).* — 2 live/],
    });
    const json = JSON.parse((await runCli(["status", "--json"], { env })).stdout);
    expect(json.runBudget).toMatchObject({ live: 2, spent: null });
    for (const name of ["one", "two"]) await runCli(["cancel", name, "--wait"], { env });
  });

  it("wait without names returns the records not yet read, then says every one is read, exit 0", async () => {
    const { env } = await homeWithOne();
    const first = await runCli(["wait", "--json"], { env });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      records: [{ name: "done", status: "ok" }],
      running: [],
    });
    expectAnswer(await runCli(["wait"], { env }), { code: 0, says: ["nothing to wait for", "read"] });
  });

  it("shows a hand-written folder's limits as durations, the defaults it took marked", async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, "spec.json"), JSON.stringify({ cmd: "true", args: [] }));
    const shown = await runCli(["show", dir]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(
      "idle 10m (default), wall 2h (default), stall notice 5m (default), kill grace 10s (default)",
    );
    expect(shown.stdout).not.toMatch(/\d ms\b|default ms/);
  });

  it("answers help --json with the verbs as data, and help as text says which verbs take --json", async () => {
    const json = await runCli(["help", "--json"]);
    expect(json.code).toBe(0);
    const { verbs } = JSON.parse(json.stdout) as {
      verbs: { verb: string; synopsis: string; summary: string }[];
    };
    expect(verbs.map((v) => v.verb)).toEqual(
      expect.arrayContaining(["dispatch", "status", "lock", "ui", "help"]),
    );
    expect(verbs.every((v) => v.summary !== "")).toBe(true);
    const text = await runCli(["help"]);
    expectAnswer(text, {
      code: 0,
      says: ["catherd dispatch --backend <b>", "--json (supervise: its errors)"],
    });
    expect(text.stdout).not.toContain("Every command takes --json");
  });

  it("has supervise in the foreground print its record's line, a spawn failure with its error (exit 0: the folder was handled)", async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, "spec.json"), JSON.stringify({ cmd: "/no/such/program", args: [] }));
    const failed = await runCli(["supervise", dir], { timeoutMs: 30_000 });
    expectAnswer(failed, {
      code: 0,
      says: [/^\(by hand\) \S+ failed \(spawn-failed\)/m, /^error: .*\/no\/such\/program/m],
    });
    const fine = tempDir();
    fs.writeFileSync(path.join(fine, "spec.json"), JSON.stringify({ cmd: "true", args: [] }));
    const ok = await runCli(["supervise", fine, "--json"], { timeoutMs: 30_000 });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ record: { status: "ok" } });
  });

  it("answers supervise --help with its usage, writing nothing", async () => {
    const cwd = tempDir();
    const result = await runCli(["supervise", "--help"], { cwd });
    expectAnswer(result, { code: 0, says: ["usage: catherd supervise <dispatch-dir>"] });
    expect(fs.readdirSync(cwd)).toEqual([]);
  });
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
    const { env, dir } = await homeWithOne();
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

/** A CLI run whose stdin is `stdin` (a pipe from another process, or an open file) and whose output is bytes. */
function runCliFrom(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  stdin: "pipe" | number | NodeJS.ReadableStream,
  timeoutMs = 20_000,
): Promise<{ code: number | null; stdout: Buffer; stderr: string; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [CLI_MAIN, ...args], {
    env,
    cwd: tempDir(),
    stdio: [stdin as "pipe", "pipe", "pipe"],
  });
  const out: Buffer[] = [];
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  if (stdin === "pipe") child.stdin?.end();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`catherd ${args.join(" ")} did not finish in ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr, ms: Date.now() - started });
    });
  });
}

/** A character a terminal acts on: C0 but tab and newline, DEL, C1 (ESC, BEL and CSI among them). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("a brief on stdin that does not end", () => {
  const limit = "over the 4194304-byte (4 MiB) limit of a brief";
  it.each([
    ["--brief-file -, for exec", ["--backend", "exec", "--brief-file", "-", "--json", "--", "true"]],
    ["the brief exec may take", ["--backend", "exec", "--json", "--", "true"]],
    ["an agent CLI's brief", ["--backend", "codex", "--bin", "/bin/true", "--json"]],
  ])("is refused at the limit from yes, for %s, writing nothing", async (_title, argv) => {
    const { home, env } = isolatedHome();
    const yes = spawn("yes", [], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const running = runCliFrom(["dispatch", ...argv], env, yes.stdout);
      // The pipe's read end is the CLI's alone: once it stops reading, yes gets the broken pipe.
      yes.stdout.destroy();
      const refused = await running;
      expect(refused.code, refused.stderr).toBe(2);
      expect(JSON.parse(refused.stdout.toString()).error).toMatchObject({
        code: "E_INPUT_INVALID",
        message: expect.stringContaining(limit),
      });
      // yes never ends: it is drained a bounded way past the limit, then ends on the broken pipe.
      await waitFor("yes to end on the broken pipe", () => yes.exitCode ?? yes.signalCode ?? undefined);
    } finally {
      yes.kill("SIGKILL");
    }
    expect(fs.existsSync(path.join(home, "runs"))).toBe(false);
  });

  it("is refused at the limit from /dev/zero, and a finite pipe over the limit once it is drained", async () => {
    const { home, env } = isolatedHome();
    const zero = fs.openSync("/dev/zero", "r");
    const fromZero = await runCliFrom(
      ["dispatch", "--backend", "exec", "--brief-file", "-", "--", "true"],
      env,
      zero,
    ).finally(() => fs.closeSync(zero));
    expectAnswer(
      { code: fromZero.code, stdout: fromZero.stdout.toString(), stderr: fromZero.stderr },
      { code: 2, says: ["error E_INPUT_INVALID: the brief on stdin is", limit] },
    );
    // A finite pipe over the limit is drained to its end before the refusal: its writer ends cleanly.
    const head = spawn("head", ["-c", String(5 * 1024 * 1024), "/dev/zero"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    const headEnded = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      head.on("exit", (code, signal) => resolve({ code, signal })),
    );
    try {
      const running = runCliFrom(
        ["dispatch", "--backend", "codex", "--bin", "/bin/true", "--json"],
        env,
        head.stdout,
      );
      head.stdout.destroy();
      const finite = await running;
      expect(finite.code, finite.stderr).toBe(2);
      expect(JSON.parse(finite.stdout.toString()).error).toMatchObject({
        code: "E_INPUT_INVALID",
        message: expect.stringContaining(limit),
      });
      expect(await headEnded).toEqual({ code: 0, signal: null });
    } finally {
      head.kill("SIGKILL");
    }
    expect(fs.existsSync(path.join(home, "runs"))).toBe(false);
  });
});

describe("an agent's escapes reach no terminal", () => {
  it("prints status, show, logs and result inert, and logs --raw byte for byte", async () => {
    const { env } = isolatedHome();
    const go = path.join(tempDir(), "go");
    // A title ("pwned", spelt in octal so that the spec's words do not hold it), a cleared screen, colours,
    // an 8-bit CSI (blink), a DCS, invalid UTF-8, on stdout and on stderr.
    const noise = String.raw`\033]0;\160wned\007\033[2J\033[31mred\033[0m \302\2335m \033Pq#1\033\\ \377\376`;
    const script = [
      `printf '%s${noise} the tests pass\n' "$(printf 'x%.0s' $(seq 50))"`,
      `printf 'warn ${noise} on stderr\n' >&2`,
      `while [ ! -e '${go}' ]; do sleep 0.05; done`,
      `printf '${noise} done\n'`,
    ].join("; ");
    const d = dispatchedOf(
      await runCli(["dispatch", "--backend", "exec", "--name", "noisy", "--json", "--", "sh", "-c", script], {
        env,
      }),
    );
    dispatched.push(d.dispatchId);
    const activity = path.join(d.dir, "activity.json");
    await waitFor("the agent's line as what it is doing", () => {
      const text = fs.existsSync(activity) ? fs.readFileSync(activity, "utf8") : "";
      return text.includes("xxxxxxxxxx") ? true : undefined;
    });
    const doing = await runCli(["status"], { env });
    expect(doing.stdout).toMatch(/noisy .* running .*xxxx/);
    expect(doing.stdout).not.toMatch(ACTIVE);
    fs.writeFileSync(go, "");
    await waitForFile(path.join(d.dir, "record.json"), 20_000);
    for (const argv of [
      ["show", "noisy"],
      ["logs", "noisy"],
      ["result", "noisy"],
      ["status"],
      ["show", "noisy", "--json"],
      ["logs", "noisy", "--raw", "--json"],
    ]) {
      const shown = await runCli(argv, { env });
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout, argv.join(" ")).not.toMatch(ACTIVE);
      if (!argv.includes("--json")) expect(shown.stdout, argv.join(" ")).not.toContain("pwned");
    }
    const show = (await runCli(["show", "noisy"], { env })).stdout;
    expect(show).toMatch(/stderr\n {2}warn red {3}\ufffd\ufffd on stderr/);
    expect((await runCli(["logs", "noisy"], { env })).stdout).toContain("red   \ufffd\ufffd done\n");
    const raw = await runCliFrom(["logs", "noisy", "--raw"], env, "pipe");
    expect(raw.code, raw.stderr).toBe(0);
    expect(raw.stdout.equals(fs.readFileSync(path.join(d.dir, "events.jsonl")))).toBe(true);
    expect(raw.stdout.includes(Buffer.from([0xff, 0xfe]))).toBe(true);
  });
});

describe("file-system errors in their own words", () => {
  it("says why a --brief-file cannot be read: a folder, not there, a link to nowhere (exit 2)", async () => {
    const { home, env } = isolatedHome();
    const dir = tempDir();
    fs.symlinkSync("gone", path.join(dir, "link"));
    for (const [file, why] of [
      [dir, `--brief-file ${dir} is a folder, not a file`],
      [path.join(dir, "missing.md"), `--brief-file ${dir}/missing.md does not exist`],
      [path.join(dir, "link"), `is a symbolic link to ${dir}/gone, which does not exist`],
    ] as const) {
      expectAnswer(
        await runCli(["dispatch", "--backend", "exec", "--brief-file", file, "--", "true"], { env }),
        {
          code: 2,
          says: ["error E_INPUT_INVALID", why, "fix: give the path of a text file"],
        },
      );
    }
    expect(fs.existsSync(path.join(home, "runs"))).toBe(false);
  });

  it("answers a --brief-file the system refuses to read with E_IO_READ, not a write's words", async (context) => {
    // A file no one may read, root included: a write-only file of /proc/sys (root reads chmod 000 files).
    const file = "/proc/sys/vm/drop_caches";
    let refusal: string | undefined;
    try {
      fs.readFileSync(file);
    } catch (error) {
      refusal = (error as NodeJS.ErrnoException).code;
    }
    if (refusal !== "EACCES") {
      context.skip(`${file} is not refused with EACCES here (${refusal ?? "it reads"})`);
      return;
    }
    const { home, env } = isolatedHome();
    const argv = ["dispatch", "--backend", "exec", "--brief-file", file, "--", "true"];
    expectAnswer(await runCli([...argv, "--json"], { env }), {
      code: 1,
      error: "E_IO_READ",
      says: [`cannot read --brief-file ${file}`],
    });
    const text = await runCli(argv, { env });
    expectAnswer(text, { code: 1, says: [`fix: this user may not read ${file}`] });
    expect(text.stderr).not.toMatch(/E_IO_WRITE|free space/);
    expect(fs.existsSync(path.join(home, "runs"))).toBe(false);
  });

  it("says a home that is a symbolic link to nowhere points nowhere, and one under a file is under a file", async () => {
    const parent = tempDir();
    const home = path.join(parent, "home");
    fs.symlinkSync(path.join(parent, "gone"), home);
    const env = { ...process.env, CATHERD_HOME: home, CATHERD_RUN: "" };
    expectAnswer(await runCli(["dispatch", "--backend", "exec", "--", "true"], { env }), {
      code: 1,
      says: [
        `error E_IO_WRITE: cannot create ${home}/runs/default/dispatches: catherd's home ${home} is a symbolic link to ${parent}/gone, which does not exist`,
        `fix: create the folder it points to (mkdir -p ${parent}/gone), or point CATHERD_HOME at a folder`,
      ],
    });
    fs.writeFileSync(path.join(parent, "file"), "");
    const under = { ...env, CATHERD_HOME: path.join(parent, "file/home") };
    expectAnswer(await runCli(["dispatch", "--backend", "exec", "--", "true"], { env: under }), {
      code: 1,
      says: [`${parent}/file is a file, not a folder`, "CATHERD_HOME"],
    });
    expect(fs.existsSync(path.join(parent, "gone"))).toBe(false);
  });

  it("says a read-only home is read-only, for dispatch and lock, and how to give it another", async (context) => {
    const mount = tempDir();
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", mount], { stdio: "pipe" });
    } catch (error) {
      const why = String((error as { stderr?: Buffer }).stderr ?? error).trim();
      context.skip(`mount -t tmpfs -o ro was refused: ${why}`);
      return;
    }
    try {
      for (const home of [mount, path.join(mount, "home")]) {
        const env = { ...process.env, CATHERD_HOME: home, CATHERD_RUN: "" };
        const subject = home === mount ? `catherd's home ${mount}` : mount;
        for (const argv of [
          ["dispatch", "--backend", "exec", "--", "true"],
          ["lock", "--class", "heavy", "--", "true"],
        ]) {
          const refused = await runCli(argv, { env });
          expectAnswer(refused, {
            code: 1,
            says: [`${subject} is on a read-only file system (EROFS)`, "or point CATHERD_HOME at a folder"],
          });
          expect(refused.stderr).not.toMatch(/ENOENT|free space/);
        }
      }
    } finally {
      execFileSync("umount", [mount], { stdio: "ignore" });
    }
  });
});
