import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dispatchedOf, dispatchFolders, isolatedHome, runCli } from "../helpers/cli.js";
import { CLI_MAIN, FAKE_AGENT, readJson, reapAll, tempDir } from "../helpers/folders.js";
import { isAlive, killPid, standbysOf, waitForPause } from "../helpers/processes.js";
import { waitFor, waitForFile, waitForJson } from "../helpers/wait.js";

const dispatched: string[] = [];
const supervisors: number[] = [];

afterEach(() => {
  for (const pid of supervisors.splice(0)) killPid(pid);
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

function scenarioFile(steps: Record<string, unknown>[]): string {
  const file = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(file, JSON.stringify({ steps }));
  return file;
}

async function dispatchFake(env: NodeJS.ProcessEnv, steps: Record<string, unknown>[], extra: string[] = []) {
  const result = await runCli(
    [
      "dispatch",
      "--backend",
      "exec",
      "--json",
      ...extra,
      "--",
      process.execPath,
      FAKE_AGENT,
      scenarioFile(steps),
    ],
    { env },
  );
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  const d = dispatchedOf(result);
  dispatched.push(d.dispatchId);
  supervisors.push(d.supervisorPid);
  return d;
}

describe("catherd dispatch", () => {
  it("admits, starts a detached supervisor, and ends with exit.json and record.json", async () => {
    const { home, env } = isolatedHome();
    const d = await dispatchFake(env, [{ out: "working" }, { exit: 0 }], ["--name", "first"]);
    expect(d.dir.startsWith(path.join(home, "runs", "default", "dispatches", "first"))).toBe(true);
    const record = await waitForJson(path.join(d.dir, "record.json"));
    expect(record).toMatchObject({ status: "ok", run: "default", name: "first", backend: "exec" });
    expect(fs.readFileSync(path.join(home, "runs/default/dispatches/first/latest"), "utf8").trim()).toBe(
      d.dispatchId,
    );
    const admit = readJson(path.join(d.dir, "admit.json"));
    expect(admit).toMatchObject({ dispatchId: d.dispatchId, run: "default", name: "first", owns: [] });
    expect(fs.statSync(d.dir).mode & 0o777).toBe(0o700);
    for (const f of ["admit.json", "spec.json", "exit.json", "record.json", "events.jsonl"]) {
      expect(fs.statSync(path.join(d.dir, f)).mode & 0o777, f).toBe(0o600);
    }
  });

  it("gives the agent the brief on stdin, never in argv, and an environment without the orchestrator's ids", async () => {
    const { env } = isolatedHome();
    const dump = path.join(tempDir(), "dump.json");
    const fakeCodexEnv = {
      ...env,
      CATHERD_CODEX_BIN: FAKE_AGENT,
      FAKE_AGENT_SCENARIO_FILE: scenarioFile([
        { dumpTo: dump },
        { out: JSON.stringify({ type: "thread.started", thread_id: "t-42" }) },
        {
          out: JSON.stringify({
            type: "item.completed",
            item: { id: "m", type: "agent_message", text: "ok!" },
          }),
        },
        { out: JSON.stringify({ type: "turn.completed", usage: { input_tokens: 5, output_tokens: 1 } }) },
        { exit: 0 },
      ]),
      CODEX_THREAD_ID: "orchestrator-thread",
      CLAUDE_CODE_SESSION_ID: "orchestrator-session",
      OPENAI_API_KEY: "sk-test-canary",
    };
    const brief = "Fix the failing test in src/a.ts.\n";
    const result = await runCli(
      [
        "dispatch",
        "--backend",
        "codex",
        "--json",
        "--model",
        "gpt-x",
        "--brief",
        brief,
        "--env",
        "EXTRA=1",
        "--",
        "--foo",
      ],
      { env: fakeCodexEnv },
    );
    expect(result.stderr).toBe("");
    const d = dispatchedOf(result);
    dispatched.push(d.dispatchId);
    const seen = JSON.parse(await waitForFile(dump)) as {
      argv: string[];
      env: Record<string, string>;
      stdin: string;
    };
    expect(seen.stdin).toBe(brief);
    expect(seen.argv.join(" ")).not.toContain("Fix the failing test");
    expect(seen.argv.slice(2)).toEqual([
      "exec",
      "--json",
      "--skip-git-repo-check",
      "-m",
      "gpt-x",
      "--foo",
      "-",
    ]);
    expect(seen.env.CATHERD_DISPATCH).toBe(d.dispatchId);
    expect(seen.env.CATHERD_RUN).toBe("default");
    expect(seen.env.EXTRA).toBe("1");
    expect(seen.env.CODEX_THREAD_ID).toBeUndefined();
    expect(seen.env.CLAUDE_CODE_SESSION_ID).toBeUndefined();
    expect(seen.env.OPENAI_API_KEY).toBe("sk-test-canary");
    const spec = readJson(path.join(d.dir, "spec.json"));
    expect(spec.env).toEqual({ EXTRA: "1" });
    expect(JSON.stringify(spec)).not.toContain("sk-test-canary");
    const record = await waitForJson(path.join(d.dir, "record.json"));
    expect(record).toMatchObject({
      status: "ok",
      thread: "t-42",
      reply: "ok!",
      backend: "codex",
      model: "gpt-x",
    });
  });

  it("resumes a codex thread with `codex exec resume <id>`", async () => {
    const { env } = isolatedHome();
    const dump = path.join(tempDir(), "dump.json");
    const result = await runCli(
      [
        "dispatch",
        "--backend",
        "codex",
        "--json",
        "--thread",
        "01a22d07-1915-73e1-aea5-ac3876195192",
        "--brief",
        "go on",
      ],
      {
        env: {
          ...env,
          CATHERD_CODEX_BIN: FAKE_AGENT,
          FAKE_AGENT_SCENARIO_FILE: scenarioFile([{ dumpTo: dump }, { exit: 0 }]),
        },
      },
    );
    const d = dispatchedOf(result);
    dispatched.push(d.dispatchId);
    const seen = JSON.parse(await waitForFile(dump)) as { argv: string[] };
    expect(seen.argv.slice(2)).toEqual([
      "exec",
      "resume",
      "--json",
      "--skip-git-repo-check",
      "01a22d07-1915-73e1-aea5-ac3876195192",
      "-",
    ]);
    await waitForJson(path.join(d.dir, "record.json"));
  });

  it("writes per-backend default timeouts and the overrides given", async () => {
    const { env } = isolatedHome();
    const d = await dispatchFake(env, [{ exit: 0 }], ["--idle", "90s", "--kill-grace", "2s"]);
    const spec = readJson(path.join(d.dir, "spec.json"));
    expect(spec).toMatchObject({
      idleMs: 90_000,
      stallMs: 45_000,
      wallMs: 7_200_000,
      killGraceMs: 2000,
      pollMs: 250,
    });
    expect(spec.graceAfterFinalMs).toBeNull();
    await waitForJson(path.join(d.dir, "record.json"));
  });

  it("snapshots git at admission and reports the files the agent changed", async () => {
    const { env } = isolatedHome();
    const repo = tempDir("catherd-repo-");
    const git = (...args: string[]) => runGit(repo, args);
    git("init", "-q");
    fs.writeFileSync(path.join(repo, "a.txt"), "a\n");
    fs.writeFileSync(path.join(repo, "dirty.txt"), "before\n");
    git("add", "a.txt");
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init");
    const result = await runCli(
      [
        "dispatch",
        "--backend",
        "exec",
        "--json",
        "--cwd",
        repo,
        "--",
        "sh",
        "-c",
        "echo changed > a.txt; echo new > b.txt",
      ],
      { env },
    );
    const d = dispatchedOf(result);
    dispatched.push(d.dispatchId);
    const admit = readJson(path.join(d.dir, "admit.json"));
    const snapshot = admit.git as { root: string; prefix: string; head: string; tree: string };
    expect(snapshot).toMatchObject({ root: fs.realpathSync(repo), prefix: "" });
    // The admission tree holds the untracked file as it was, the user's index does not.
    expect(git("ls-tree", "--name-only", snapshot.tree).split("\n")).toEqual(["a.txt", "dirty.txt", ""]);
    expect(git("ls-files")).toBe("a.txt\n");
    const record = await waitForJson(path.join(d.dir, "record.json"));
    expect(record.changedFiles).toEqual(["a.txt", "b.txt"]);
    expect(record.patch).toEqual({
      path: path.join(d.dir, "changes.patch"),
      bytes: fs.statSync(path.join(d.dir, "changes.patch")).size,
    });
  });

  it("supervises the dispatch to its record when the dispatcher's process group is SIGKILLed after hand-over, before it returns", async () => {
    const { home, env } = isolatedHome();
    // The standby supervisor stops itself once it has read the folder its dispatcher gave it, before it
    // claims it (CATHERD_TEST_ONLY_PAUSE_AT=given): the hand-over is complete, and the dispatcher waits for
    // a supervisor.json that cannot come yet. (A sign seen from outside — the output file moved into the
    // folder — comes before the folder is written down the pipe: killing there tests another thing.)
    const dispatcher = spawn(
      process.execPath,
      [
        CLI_MAIN,
        "dispatch",
        "--backend",
        "exec",
        "--name",
        "orphaned-early",
        "--json",
        "--",
        process.execPath,
        FAKE_AGENT,
        scenarioFile([{ out: "working" }, { exit: 0 }]),
      ],
      {
        env: { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "given" },
        detached: true,
        stdio: ["ignore", "pipe", "ignore"],
      },
    );
    const dispatcherPid = dispatcher.pid as number;
    supervisors.push(dispatcherPid);
    let printed = "";
    dispatcher.stdout.on("data", (chunk: Buffer) => {
      printed += chunk.toString();
    });
    const ended = new Promise<NodeJS.Signals | null>((resolve) =>
      dispatcher.once("exit", (_code, signal) => resolve(signal)),
    );
    const dir = await waitFor("the standby to be given its folder", () =>
      dispatchFolders(home).find((d) => fs.existsSync(path.join(d, "test-paused-given"))),
    );
    dispatched.push(path.basename(dir));
    const standbyPid = await waitForPause(dir, "given");
    supervisors.push(standbyPid);
    expect(standbysOf(home), "the paused supervisor is the dispatcher's standby").toContain(standbyPid);
    expect(isAlive(dispatcherPid), "the dispatcher is still waiting for its supervisor").toBe(true);
    process.kill(-dispatcherPid, "SIGKILL");
    expect(await ended).toBe("SIGKILL");
    expect(printed, "the dispatcher never returned").toBe("");
    process.kill(standbyPid, "SIGCONT");
    // A whole supervision (the agent's start, its stream, the record) on a machine the suite loads: the
    // deadline is for a supervisor that never records, and its failure says what the supervisor did.
    const record = await waitForJson(path.join(dir, "record.json"), 60_000).catch((error: Error) => {
      throw new Error(`${error.message}\n${folderDiagnostics(dir, standbyPid)}`);
    });
    expect(record).toMatchObject({ status: "ok", name: "orphaned-early" });
    expect(readJson(path.join(dir, "supervisor.json"))).toMatchObject({ pid: standbyPid });
    expect(fs.readFileSync(path.join(dir, "events.jsonl"), "utf8")).toBe("working\n");
    await waitFor("supervisor to exit", () => (isAlive(standbyPid) ? undefined : true));
  });
});

/** What a dispatch folder's supervisor wrote, and whether it lives: a failure's explanation. */
function folderDiagnostics(dir: string, supervisorPid: number): string {
  const files = ["supervisor.log", "supervisor.out", "exit.json", "proc.json"].map((name) => {
    const file = path.join(dir, name);
    return `--- ${name}\n${fs.existsSync(file) ? fs.readFileSync(file, "utf8").slice(-4000) : "(none)"}`;
  });
  const stat = `/proc/${supervisorPid}/stat`;
  return [
    `supervisor ${supervisorPid}: ${fs.existsSync(stat) ? fs.readFileSync(stat, "utf8").slice(0, 200) : "gone"}`,
    `folder: ${fs.readdirSync(dir).join(" ")}`,
    ...files,
  ].join("\n");
}

function runGit(cwd: string, args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
}
