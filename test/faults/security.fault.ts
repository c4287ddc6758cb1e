import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { type CliResult, dispatchedOf, runCli } from "../helpers/cli.js";
import { FAKE_AGENT } from "../helpers/folders.js";
import { waitFor, waitForFile, waitForJson } from "../helpers/wait.js";
import {
  handDispatch,
  handId,
  homeFor,
  jsonOf,
  scenario,
  type Trial,
  trial,
  useFaultKit,
  walk,
} from "./kit.js";

// Row 10: security. The dispatcher's environment never lands on disk; folders are 0700 and files 0600 under
// any umask; the brief never appears in a process's argv; `show` redacts secrets; no name or id reaches a
// folder outside its run.

useFaultKit();

const CANARIES = {
  OPENAI_API_KEY: "sk-test-canary-openai",
  ANTHROPIC_API_KEY: "sk-ant-canary-anthropic",
  GITHUB_TOKEN: "ghp_canary_github",
  AWS_SECRET_ACCESS_KEY: "canary-aws-secret",
  SOME_PLAIN_SETTING: "canary-plain-setting",
};

const AGENT_BACKENDS = [
  ["codex", "CATHERD_CODEX_BIN"],
  ["claude-code", "CATHERD_CLAUDE_BIN"],
  ["gemini", "CATHERD_GEMINI_BIN"],
  ["opencode", "CATHERD_OPENCODE_BIN"],
] as const;

/** Runs the CLI under `umask 000`, feeding `input` on stdin. */
function cliUnderUmask(args: string[], env: NodeJS.ProcessEnv, input = ""): Promise<CliResult> {
  return runCli(args, { env, input, umask: "000", timeoutMs: 30_000 });
}

/** Every file under `root` whose bytes contain one of `needles`. */
function filesContaining(root: string, needles: string[]): string[] {
  return walk(root)
    .filter((f) => !f.dir)
    .filter((f) => {
      const bytes = fs.readFileSync(f.file);
      return needles.some((n) => bytes.includes(n));
    })
    .map((f) => f.file);
}

function badModes(root: string): string[] {
  return walk(root)
    .filter((f) => f.mode !== (f.dir ? 0o700 : 0o600))
    .map((f) => `${f.file} ${f.mode.toString(8)}`);
}

/** Dispatches the fake agent as each agent backend, with the brief on stdin; returns what was dispatched. */
async function dispatchEveryBackend(
  t: Trial,
  env: NodeJS.ProcessEnv,
  steps: Record<string, unknown>[],
  brief: string,
) {
  const out: { backend: string; dir: string; dispatchId: string }[] = [];
  const agentEnv = { ...env, FAKE_AGENT_SCENARIO_FILE: scenario(t, steps) };
  for (const [backend, binEnv] of AGENT_BACKENDS) {
    const r = await cliUnderUmask(
      ["dispatch", "--backend", backend, "--name", `sec-${backend}`, "--kill-grace", "300ms", "--json"],
      { ...agentEnv, [binEnv]: FAKE_AGENT },
      brief,
    );
    expect(r.code, r.stderr).toBe(0);
    const d = dispatchedOf(r);
    t.dispatch(d.dispatchId);
    t.pid(d.supervisorPid);
    out.push({ backend, dir: d.dir, dispatchId: d.dispatchId });
  }
  const exec = await cliUnderUmask(
    [
      "dispatch",
      "--backend",
      "exec",
      "--name",
      "sec-exec",
      "--brief-file",
      "-",
      "--kill-grace",
      "300ms",
      "--json",
      "--",
      process.execPath,
      FAKE_AGENT,
    ],
    agentEnv,
    brief,
  );
  expect(exec.code, exec.stderr).toBe(0);
  const d = dispatchedOf(exec);
  t.dispatch(d.dispatchId);
  t.pid(d.supervisorPid);
  out.push({ backend: "exec", dir: d.dir, dispatchId: d.dispatchId });
  return out;
}

describe("row 10: security", () => {
  it("keeps the dispatcher's environment off the disk, the brief out of every argv, and modes tight under umask 000", async () => {
    const t = trial("10 canary env, brief in argv, modes under umask 000 (5 backends)", { many: true });
    const { home, env } = homeFor(t, CANARIES);
    const brief = `Refactor the canary-brief-${handId()} module, then report.\n`;
    const dispatched = await dispatchEveryBackend(t, env, [{ out: "{}" }, { hang: true }], brief);
    // Every agent is running (it has written its first line): look at every process's argv now.
    for (const d of dispatched) await waitForFile(path.join(d.dir, "events.jsonl"));
    for (const d of dispatched) {
      await waitFor("the agent's first line", () =>
        fs.statSync(path.join(d.dir, "events.jsonl")).size > 0 ? true : undefined,
      );
    }
    const needle = brief.trim().slice(0, 40);
    const inArgv: string[] = [];
    for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      try {
        const argv = fs.readFileSync(`/proc/${pid}/cmdline`);
        if (argv.includes(needle))
          inArgv.push(`${pid}: ${argv.toString().replace(/\0/g, " ").slice(0, 120)}`);
      } catch {
        // gone
      }
    }
    expect(inArgv, "processes with the brief in their argv").toEqual([]);
    // Live, the folders already hold their locks, logs and activity: modes are tight.
    expect(badModes(home), "modes while running").toEqual([]);
    for (const d of dispatched) {
      const r = await cliUnderUmask(["cancel", `sec-${d.backend}`, "--wait", "--json"], env);
      expect(r.code, r.stderr).toBe(0);
    }
    for (const d of dispatched) {
      const r = await cliUnderUmask(["result", `sec-${d.backend}`, "--json"], env);
      expect(r.code, r.stderr).toBe(0);
    }
    await cliUnderUmask(["status", "--all"], env);
    expect(badModes(home), "modes after the end").toEqual([]);
    expect(filesContaining(home, Object.values(CANARIES)), "files holding an inherited value").toEqual([]);
    t.tally.tried = dispatched.length;
    t.tally.passed = dispatched.length;
  });

  it("redacts *_KEY, *_TOKEN, *_SECRET and *PASSWORD* values in show, and shows the rest", async () => {
    const t = trial("10 show redacts secret --env values");
    const { env } = homeFor(t);
    const secrets = {
      OPENAI_API_KEY: "sk-redact-me-1",
      GH_TOKEN: "redact-me-2",
      CLIENT_SECRET: "redact-me-3",
      DB_PASSWORD: "redact-me-4",
      db_password_file: "redact-me-5",
      api_key: "redact-me-6",
    };
    const args = Object.entries(secrets).flatMap(([k, v]) => ["--env", `${k}=${v}`]);
    const r = await runCli(
      [
        "dispatch",
        "--backend",
        "exec",
        "--name",
        "redact",
        "--json",
        ...args,
        "--env",
        "PLAIN=shown-value",
        "--",
        "/bin/true",
      ],
      { env },
    );
    expect(r.code, r.stderr).toBe(0);
    const d = dispatchedOf(r);
    t.dispatch(d.dispatchId);
    await waitForJson(path.join(d.dir, "record.json"));
    const outputs = [
      await runCli(["show", "redact", "--json"], { env }),
      await runCli(["show", "redact"], { env: { ...env, NO_COLOR: "1" } }),
      await runCli(["status", "--all", "--json"], { env }),
      await runCli(["result", "redact", "--json"], { env }),
      await runCli(["logs", "redact", "--json"], { env }),
    ];
    for (const o of outputs) {
      for (const value of Object.values(secrets)) expect(o.stdout + o.stderr).not.toContain(value);
    }
    expect(outputs[0]?.stdout).toContain("shown-value");
    expect(outputs[1]?.stdout).toContain("PLAIN=shown-value");
    t.pass();
  });

  it("never reaches outside its run: planted live markers, `latest` files and symlinks are not followed", async () => {
    const t = trial("10 names and ids never resolve outside their run", { many: true });
    const { home, env } = homeFor(t);
    const victim = t.dir("catherd-fault-victim-");
    const outside = t.dir("catherd-fault-outside-");
    // An unrelated folder a reader would take for a dispatch whose supervisor died.
    fs.writeFileSync(
      path.join(victim, "supervisor.json"),
      JSON.stringify({ schema: 1, pid: 999_999, startTime: "1", startedAt: new Date().toISOString() }),
    );
    const victimBefore = walk(victim);
    // A live marker naming a folder outside the run, a `latest` pointing up the tree, a symlinked name.
    const id = handId();
    fs.mkdirSync(path.join(home, "runs/default/live"), { recursive: true });
    fs.writeFileSync(
      path.join(home, "runs/default/live", `${id}.json`),
      JSON.stringify({ schema: 1, dispatchId: id, name: "planted", dir: victim, owns: [] }),
    );
    const { dir: real } = handDispatch(home, "real");
    fs.writeFileSync(path.join(path.dirname(real), "latest"), "../../../../../../tmp\n");
    const elsewhere = handDispatch(outside, "x");
    fs.symlinkSync(path.dirname(elsewhere.dir), path.join(home, "runs/default/dispatches/linked"));
    const outsideBefore = walk(outside);
    const checks: [string, () => Promise<void>][] = [
      [
        "dispatch with a planted live marker writes nothing outside",
        async () => {
          const r = await runCli(
            ["dispatch", "--backend", "exec", "--name", "next", "--json", "--", "/bin/true"],
            { env },
          );
          expect(r.code, r.stdout).toBe(0);
          t.dispatch(dispatchedOf(r).dispatchId);
          await waitForJson(path.join(dispatchedOf(r).dir, "record.json"));
        },
      ],
      [
        "`latest` pointing up the tree is not followed",
        async () => {
          const r = await runCli(["show", "real", "--json"], { env });
          expect(r.code).toBe(0);
          expect((jsonOf(r).dispatch as { dir: string }).dir).toBe(real);
        },
      ],
      [
        "a symlinked name folder is not listed or resolved",
        async () => {
          const status = await runCli(["status", "--all", "--json"], { env });
          const dirs = (jsonOf(status) as { dispatches: { dir: string }[] }).dispatches.map((r) => r.dir);
          expect(dirs.filter((d) => d.includes("linked"))).toEqual([]);
          const shown = await runCli(["show", "linked", "--json"], { env });
          expect(shown.code).toBe(1);
          expect(jsonOf(shown)).toMatchObject({ error: { code: "E_DISPATCH_NOT_FOUND" } });
        },
      ],
    ];
    const failures: string[] = [];
    for (const [what, check] of checks) {
      t.tally.tried += 1;
      try {
        await check();
        t.tally.passed += 1;
      } catch (error) {
        failures.push(`${what}: ${String(error).split("\n")[0]}`);
      }
    }
    // Give readers every chance to write: status again, and wait past nothing.
    await runCli(["status", "--all", "--json"], { env });
    expect(failures).toEqual([]);
    expect(walk(victim), "files written into a folder a marker named").toEqual(victimBefore);
    expect(walk(outside), "files written through a symlink").toEqual(outsideBefore);
  });
});
