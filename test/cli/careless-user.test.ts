import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { detectCgroups } from "../../src/infra/cgroup/detect.js";
import { cgroupName } from "../../src/infra/cgroup/dispatch-cgroup.js";
import { expectAnswer, homeWithOne } from "../helpers/answers.js";
import { dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { cgroupsOf, isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

// What a new user trips on, tried as one would: unreadable runs and folders, careless input, arguments a
// verb does not take, the words of each answer. Each row is a command line and what it must answer (exit
// code, the error's code, words it must say). More rows: careless-words.test.ts, careless-terminal.test.ts.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "left behind").toBe(0);
});

describe("a run that cannot be read is an error, never an empty run", () => {
  it.each([
    ["status", ["status", "--json"]],
    ["clean --dry-run", ["clean", "--dry-run", "--json"]],
    ["wait", ["wait", "--json"]],
  ])("%s answers E_IO_READ naming the run's folder", async (_title, argv) => {
    const { home, env } = await homeWithOne(dispatched);
    const dispatches = path.join(home, "runs/default/dispatches");
    fs.renameSync(dispatches, `${dispatches}.moved`);
    fs.writeFileSync(dispatches, "not a folder");
    const result = await runCli(argv, { env });
    expectAnswer(result, { code: 1, error: "E_IO_READ", says: [dispatches] });
  });

  it("says a run that does not exist does not exist, naming the runs there are", async () => {
    const { env } = await homeWithOne(dispatched);
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
    const { env, dir } = await homeWithOne(dispatched);
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
    const { env, dir } = await homeWithOne(dispatched);
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
    const { env, dir } = await homeWithOne(dispatched);
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
    const { env } = await homeWithOne(dispatched);
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
    // The JSON counts as the line does: spend.live is the rows', not the ledger's (which has no part yet).
    expect(json.runBudget).toMatchObject({ spend: { live: 2 }, spent: null });
    expect(json.runBudget).not.toHaveProperty("live");
    for (const name of ["one", "two"]) await runCli(["cancel", name, "--wait"], { env });
  });

  it("wait without names returns the records not yet read, then says every one is read, exit 0", async () => {
    const { env } = await homeWithOne(dispatched);
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
