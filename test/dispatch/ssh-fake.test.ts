import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CliResult, dispatchFolders, isolatedHome, runCli } from "../helpers/cli.js";
import { type FakeSsh, fakeSsh, installPaths, loginPath } from "../helpers/fake-ssh.js";
import { FAKE_AGENT, ROOT, readJson, reapAll, tempDir } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// `catherd dispatch --placement ssh:HOST` through the fake ssh of test/helpers/fake-ssh.ts (specs/placement.md,
// "SSH"): the real CLI and supervisor, the start script run by a real `sh` in sshd's stripped environment,
// the "host" this machine. What only another host shows — another PID namespace, a home not shared at the
// same path in fact — is the rig's (test/ssh/, `npm run test:ssh`).

const dispatched: string[] = [];
/** Processes the start script started that carry no CATHERD_DISPATCH (a node that never brings the supervisor up). */
const started: number[] = [];
let ssh: FakeSsh | null = null;

afterEach(() => {
  for (const pid of started.splice(0)) killPid(pid);
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
  expect(ssh?.calls().filter((c) => c.refused) ?? [], "calls the fake refused").toEqual([]);
  ssh = null;
});

/** A home of its own whose ssh is a fresh fake. */
function setUp(): { home: string; env: NodeJS.ProcessEnv; ssh: FakeSsh } {
  ssh = fakeSsh();
  const { home, env } = isolatedHome();
  return { home, env: ssh.env(env), ssh };
}

/** The dispatch argv of a fake agent on `exec` running `steps`, placed on the fake host. */
function placed(steps: Record<string, unknown>[]): string[] {
  const scenario = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(scenario, JSON.stringify({ steps }));
  return [
    "dispatch",
    "--json",
    "--placement",
    "ssh:fakehost",
    "--backend",
    "exec",
    "--kill-grace",
    "300ms",
    "--",
    process.execPath,
    FAKE_AGENT,
    scenario,
  ];
}

interface Dispatched {
  dispatchId: string;
  dir: string;
  placement: { engine: string; jobId: string; state: string; node: string | null } | null;
}

async function dispatch(env: NodeJS.ProcessEnv, args: string[]): Promise<Dispatched> {
  const result = await runCli(args, { env, timeoutMs: 60_000 });
  if (result.code !== 0) throw new Error(`dispatch exited ${result.code}: ${result.stdout}${result.stderr}`);
  const d = (JSON.parse(result.stdout) as { dispatched: Dispatched }).dispatched;
  dispatched.push(d.dispatchId);
  return d;
}

const errorOf = (result: CliResult) =>
  (JSON.parse(result.stdout) as { error: { code: string; message: string; fix: string } }).error;

interface Row {
  dispatchId: string;
  state: string;
  status: string | null;
  problems: { code: string; message: string }[];
}

async function rowOf(env: NodeJS.ProcessEnv, id: string): Promise<Row> {
  const result = await runCli(["status", "--json"], { env, timeoutMs: 60_000 });
  if (result.code !== 0) throw new Error(`status exited ${result.code}: ${result.stderr}`);
  const row = (JSON.parse(result.stdout) as { dispatches: Row[] }).dispatches.find(
    (r) => r.dispatchId === id,
  );
  if (row === undefined) throw new Error(`status shows no ${id}: ${result.stdout}`);
  return row;
}

/** The argv catherd gives ssh for `remote`. */
const sshArgv = (remote: unknown) => [
  "-o",
  "BatchMode=yes",
  "-o",
  "ConnectTimeout=10",
  "--",
  "fakehost",
  remote,
];

describe("a dispatch placed over ssh", () => {
  it("starts its supervisor there from a script on stdin, and is waited for to its record", async () => {
    const { home, env: base, ssh } = setUp();
    const launcher = path.join(tempDir(), "simulated-codex");
    const agent = path.join(ROOT, "dist/bin/simulated-agent.js");
    fs.writeFileSync(launcher, `#!/bin/sh\nexec '${process.execPath}' '${agent}' "$@"\n`, { mode: 0o755 });
    // Variables sshd would not pass: they reach the supervisor only in the script.
    const env = { ...base, CATHERD_CODEX_BIN: launcher, CATHERD_SIMULATED_PACE: "0.02" };
    const d = await dispatch(env, [
      "dispatch",
      "--json",
      "--placement",
      "ssh:fakehost",
      "--backend",
      "codex",
      "--brief",
      "Fix the failing test",
    ]);
    expect(d.placement).toMatchObject({ engine: "ssh", state: "running", node: "fakehost" });
    expect(readJson(path.join(d.dir, "placement.json"))).toMatchObject({
      engine: "ssh",
      target: "fakehost",
      jobId: d.placement?.jobId,
      cluster: null,
    });
    const waited = await runCli(["wait", d.dispatchId, "--json", "--timeout", "60s"], {
      env,
      timeoutMs: 90_000,
    });
    expect(waited.code, waited.stderr).toBe(0);
    const record = readJson(path.join(d.dir, "record.json"));
    expect(record).toMatchObject({ status: "ok", backend: "codex" });
    expect(String(record.reply)).toContain("npm test passes");
    // The supervisor was the process the script started, and knew itself placed (it named its node).
    expect(String(readJson(path.join(d.dir, "supervisor.json")).pid)).toBe(d.placement?.jobId);
    expect(readJson(path.join(d.dir, "placement.json"))).toMatchObject({ node: os.hostname() });
    // Readiness there (the shared-folder check among it), the start; then only questions, asked while
    // supervisor.json was not there yet.
    const [check, start, ...asked] = ssh.calls();
    expect(check?.argv).toEqual(sshArgv("sh -s"));
    expect(check?.stdin).toMatch(new RegExp(`'${home}/\\.placement-check\\.[0-9a-f]{32}'`));
    for (const call of asked) expect(call.stdin).toMatch(/^a=\$\(ps -o args= -p \d+ /);
    expect(start?.argv).toEqual(sshArgv("sh -s"));
    expect(start?.stdin).toContain(`CATHERD_HOME='${home}'; export CATHERD_HOME`);
    expect(start?.stdin).toContain(`CATHERD_CODEX_BIN='${launcher}'; export CATHERD_CODEX_BIN`);
    expect(fs.readdirSync(home).filter((name) => name.startsWith(".placement-check."))).toEqual([]);
    expect(fs.existsSync(path.join(d.dir, "ssh.out"))).toBe(true);
  });

  it("finds node and catherd on the login shell's PATH, whatever its profile prints, where the submitting host's paths are not, and is cancelled through the folder", async () => {
    const { env, ssh } = setUp();
    const tools = loginPath(ssh);
    ssh.set({ hide: installPaths() });
    const d = await dispatch(env, placed([{ out: "working" }, { hang: true }]));
    await waitForJson(path.join(d.dir, "proc.json"), 30_000);
    const pid = Number(d.placement?.jobId);
    // The supervisor runs the node of the login PATH, the program beside the catherd found there.
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    expect(argv.slice(0, 3)).toEqual([
      path.join(tools, "node"),
      path.join(ROOT, "dist/bin/supervisor.js"),
      d.dir,
    ]);
    const environ = fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    expect(environ.find((v) => v.startsWith("PATH="))).toMatch(new RegExp(`^PATH=${tools}:`));
    expect(environ).toContain("CATHERD_SSH_HOST=fakehost");
    // Its lock is fresh: the host is not asked.
    const before = ssh.calls().length;
    expect(await rowOf(env, d.dispatchId)).toMatchObject({ state: "running" });
    expect(ssh.calls()).toHaveLength(before);
    const cancelled = await runCli(["cancel", d.dispatchId, "--wait", "--json"], { env, timeoutMs: 60_000 });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({ status: "cancelled" });
    await waitFor("the supervisor to exit", () => (isAlive(pid) ? undefined : true), 30_000);
  });
});

/**
 * A dispatch whose supervisor never comes up: the host's node answers readiness's `--version` as node 20
 * does, and otherwise holds the folder's command line and does nothing.
 */
async function neverUp(env: NodeJS.ProcessEnv, fake: FakeSsh): Promise<Dispatched & { pid: number }> {
  loginPath(
    fake,
    'if (process.argv[2] === "--version") console.log("v20.19.0"); else setInterval(() => {}, 1000);',
  );
  fake.set({ hide: installPaths() });
  const d = await dispatch(env, placed([{ exit: 0 }]));
  const pid = Number(d.placement?.jobId);
  started.push(pid);
  expect(fs.existsSync(path.join(d.dir, "supervisor.json"))).toBe(false);
  return { ...d, pid };
}

describe("a placed supervisor that has not come up", () => {
  it("is running while the host runs it, unknown while the host does not answer, whatever the failure", async () => {
    const { env, ssh } = setUp();
    const d = await neverUp(env, ssh);
    expect(await rowOf(env, d.dispatchId)).toMatchObject({ state: "starting", status: null, problems: [] });
    const asked = ssh.calls().at(-1);
    expect(asked?.argv).toEqual(sshArgv("sh -s"));
    expect(asked?.stdin).toContain(`ps -o args= -p ${d.pid}`);
    const unknown = async (words: RegExp, extra: NodeJS.ProcessEnv = {}) => {
      const row = await rowOf({ ...env, ...extra }, d.dispatchId);
      expect(row).toMatchObject({ state: "unknown", status: null });
      expect(row.problems.map((p) => p.message).join("\n")).toMatch(words);
    };
    ssh.set({ otherwise: "refused" });
    await unknown(/fakehost does not answer: ssh: connect to host fakehost port 22: Connection refused/);
    ssh.set({ otherwise: "no-commands" });
    await unknown(/fakehost says: .*sh: not found/);
    ssh.set({ otherwise: "hang" });
    await unknown(/did not answer within 1000 ms/, { CATHERD_TEST_ONLY_SSH_TIMEOUT_MS: "1000" });
    expect(fs.existsSync(path.join(d.dir, "record.json"))).toBe(false);
    expect(isAlive(d.pid)).toBe(true);
  });

  it("is cancelled by SIGTERM over ssh to the pid the script started, and recorded cancelled", async () => {
    const { env, ssh } = setUp();
    const d = await neverUp(env, ssh);
    const cancelled = await runCli(["cancel", d.dispatchId, "--json"], { env, timeoutMs: 60_000 });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(ssh.calls().some((c) => c.stdin.includes(`kill -TERM ${d.pid}`))).toBe(true);
    expect(isAlive(d.pid)).toBe(false);
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({
      status: "cancelled",
      error: {
        engine: {
          name: "ssh",
          jobId: String(d.pid),
          state: "CANCELLED",
          words: `ssh fakehost: supervisor ${d.pid} is no longer running there (cancelled); its supervisor never started`,
        },
      },
    });
  });

  it("is recorded lost, in the engine's words, once the host says it is gone", async () => {
    const { env, ssh } = setUp();
    const d = await neverUp(env, ssh);
    killPid(d.pid);
    await waitFor("the host's node to die", () => (isAlive(d.pid) ? undefined : true));
    expect(await rowOf(env, d.dispatchId)).toMatchObject({ state: "recorded", status: "lost" });
    expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({
      error: {
        code: "E_SUPERVISOR_LOST",
        engine: { name: "ssh", jobId: String(d.pid), state: "GONE" },
      },
    });
  });
});

describe("a host that cannot take a dispatch", () => {
  type Arrange = (fake: FakeSsh, env: NodeJS.ProcessEnv, home: string) => NodeJS.ProcessEnv;
  it.each<[string, Arrange, string, number, RegExp]>([
    [
      "no ssh here",
      (_f, env) => ({ ...env, PATH: tempDir() }),
      "E_ENGINE_MISSING",
      3,
      /ssh is not installed here/,
    ],
    [
      "a host ssh cannot reach",
      (f, env) => {
        f.set({ otherwise: "refused" });
        return env;
      },
      "E_ENGINE_UNREACHABLE",
      3,
      /fakehost does not answer: ssh: connect to host fakehost port 22: Connection refused/,
    ],
    [
      "a host that does not answer",
      (f, env) => {
        f.set({ otherwise: "hang" });
        return { ...env, CATHERD_TEST_ONLY_SSH_TIMEOUT_MS: "1000" };
      },
      "E_ENGINE_TIMEOUT",
      1,
      /ssh fakehost did not answer within 1000 ms/,
    ],
    [
      "a host that does not see catherd's home",
      (f, env, home) => {
        f.set({ hide: [home] });
        return env;
      },
      "E_PLACEMENT_UNSHARED",
      3,
      /fakehost does not see catherd's home at .*: a marker written here, .* could not be read there$/,
    ],
    [
      "neither node nor catherd on the host",
      (f, env) => {
        f.set({ hide: installPaths() });
        fs.writeFileSync(path.join(f.home, ".profile"), "PATH=/nonexistent; export PATH\n");
        return env;
      },
      "E_ENGINE_UNCONFIGURED",
      3,
      /^node is not on the PATH of fakehost's login shell$/,
    ],
  ])("refuses %s before anything is written", async (_title, arrange, code, exit, message) => {
    const { home, env, ssh } = setUp();
    const result = await runCli(placed([{ exit: 0 }]), { env: arrange(ssh, env, home), timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(exit);
    expect(errorOf(result)).toMatchObject({ code, message: expect.stringMatching(message) });
    // A host that may answer later is tried again; one that cannot take it is left for another placement.
    expect(errorOf(result).fix).toMatch(
      exit === 1 ? /then try again$/ : /or dispatch with --placement local/,
    );
    expect(dispatchFolders(home)).toEqual([]);
    expect(fs.readdirSync(home).filter((name) => name.startsWith(".placement-check."))).toEqual([]);
  });

  it.each<[string, (fake: FakeSsh) => void, string, RegExp]>([
    [
      // Ready when asked, and then not: the host changed between its readiness and the start.
      "a remote shell that fails at the start",
      (f) => f.set({ modes: ["ok", "no-commands"] }),
      "E_ENGINE_REFUSED",
      /^cannot start the supervisor on fakehost: fakehost says: .*sh: not found/,
    ],
  ])("records a start that fails with %s as spawn-failed", async (_title, arrange, code, message) => {
    const { home, env, ssh } = setUp();
    arrange(ssh);
    const result = await runCli(placed([{ exit: 0 }]), { env, timeoutMs: 60_000 });
    expect(result.code).not.toBe(0);
    expect(errorOf(result)).toMatchObject({ code, message: expect.stringMatching(message) });
    const [dir] = dispatchFolders(home);
    expect(dir).toBeDefined();
    dispatched.push(path.basename(dir as string));
    expect(readJson(path.join(dir as string, "record.json"))).toMatchObject({
      status: "failed",
      reason: "spawn-failed",
      error: { code },
    });
    expect(fs.existsSync(path.join(dir as string, "placement.json"))).toBe(false);
  });
});
