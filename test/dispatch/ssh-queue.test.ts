import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CliResult, isolatedHome, runCli } from "../helpers/cli.js";
import { type FakeSsh, fakeSsh, loginPath } from "../helpers/fake-ssh.js";
import { ROOT, reapAll, tempDir } from "../helpers/folders.js";
import { waitFor } from "../helpers/wait.js";

// A run's dispatches placed on a host over ssh (specs/placement.md, "Per-host caps" and "A host that does
// not answer"), through the fake ssh of test/helpers/fake-ssh.ts: the real CLI, supervisors and queue.

const dispatched: string[] = [];
let ssh: FakeSsh | null = null;

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
  expect(ssh?.calls().filter((c) => c.refused) ?? [], "calls the fake refused").toEqual([]);
  ssh = null;
});

/**
 * A home of its own whose ssh is a fresh fake, on the "host" too: a supervisor placed there promotes the
 * run's queue after its record, and its ssh must be the fake's, as a real host's is the user's.
 */
function setUp(): { home: string; env: NodeJS.ProcessEnv; ssh: FakeSsh; gate: string } {
  ssh = fakeSsh();
  fs.writeFileSync(path.join(ssh.home, ".profile"), `PATH='${ssh.bin}':"$PATH"; export PATH\n`);
  const { home, env } = isolatedHome();
  return { home, env: ssh.env(env), ssh, gate: path.join(tempDir(), "go") };
}

/** An `exec` dispatch named `name` that holds until `gate` exists; `where` its placement. */
function held(name: string, gate: string, where: string, extra: string[] = []): string[] {
  const hold = `while [ ! -e '${gate}' ]; do sleep 0.05; done`;
  return [
    "dispatch",
    "--json",
    "--name",
    name,
    "--placement",
    where,
    "--backend",
    "exec",
    ...extra,
    "--",
    "sh",
    "-c",
    hold,
  ];
}

interface Dispatched {
  dispatchId: string;
  dir: string;
  queued: boolean;
  blockedBy: string | null;
}

async function dispatch(
  env: NodeJS.ProcessEnv,
  args: string[],
): Promise<CliResult & { d: Dispatched | null }> {
  const result = await runCli(args, { env, timeoutMs: 60_000 });
  if (result.code !== 0) return { ...result, d: null };
  const d = (JSON.parse(result.stdout) as { dispatched: Dispatched }).dispatched;
  dispatched.push(d.dispatchId);
  return { ...result, d };
}

const errorOf = (result: CliResult) =>
  (JSON.parse(result.stdout) as { error: { code: string; message: string; fix: string } }).error;

const queuedFile = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, "queued.json"), "utf8"));

async function waited(env: NodeJS.ProcessEnv, names: string[]): Promise<{ name: string; status: string }[]> {
  const result = await runCli(["wait", ...names, "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
  expect(result.code, result.stdout + result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { records: { name: string; status: string }[] }).records;
}

describe("a run's dispatches on a host over ssh", () => {
  it("caps the live dispatches on a host: refused without --queue, queued with it, others pass", async () => {
    const { home, env, gate } = setUp();
    const one = await dispatch(env, held("one", gate, "ssh:fakehost", ["--max-parallel-host", "fakehost=1"]));
    expect(one.code, one.stdout + one.stderr).toBe(0);
    const run = JSON.parse(fs.readFileSync(path.join(home, "runs", "default", "run.json"), "utf8"));
    expect(run.maxParallelHost).toEqual({ fakehost: 1 });

    const refused = await dispatch(env, held("two", gate, "ssh:fakehost"));
    expect(refused.code).toBe(1);
    expect(errorOf(refused)).toMatchObject({
      code: "E_ADMIT_CAPACITY",
      message: expect.stringContaining("1 live dispatches on fakehost"),
      fix: expect.stringContaining("--max-parallel-host fakehost=<n>"),
    });
    const two = await dispatch(env, held("two", gate, "ssh:fakehost", ["--queue"]));
    expect(two.d).toMatchObject({ queued: true, blockedBy: "host-cap" });
    expect(queuedFile(two.d?.dir as string).blocker).toEqual({ host: "fakehost", cap: 1 });
    // Another placement is not held by the host's cap.
    const local = await dispatch(env, held("local", gate, "local"));
    expect(local.d).toMatchObject({ queued: false });

    fs.writeFileSync(gate, "");
    const records = await waited(env, ["one", "two", "local"]);
    expect(records.map((r) => [r.name, r.status])).toEqual([
      ["one", "ok"],
      ["two", "ok"],
      ["local", "ok"],
    ]);
  }, 120_000);

  it("puts a dispatch whose host does not answer back in the queue, and starts it once the host answers", async () => {
    const { env, ssh, gate } = setUp();
    const one = await dispatch(env, held("one", gate, "ssh:fakehost", ["--max-parallel-host", "fakehost=1"]));
    expect(one.code, one.stdout + one.stderr).toBe(0);
    const quick = path.join(tempDir(), "now");
    fs.writeFileSync(quick, "");
    const two = await dispatch(env, held("two", quick, "ssh:fakehost", ["--queue"]));
    expect(two.d).toMatchObject({ queued: true, blockedBy: "host-cap" });

    // The host stops answering; one ends (its supervisor needs no ssh), and two's start finds it silent.
    ssh.set({ otherwise: "refused" });
    fs.writeFileSync(gate, "");
    const dir = two.d?.dir as string;
    const requeued = await waitFor(
      "two back in the queue, its host silent",
      () => {
        const q = queuedFile(dir);
        return q.blockedBy === "host" ? q : undefined;
      },
      60_000,
    );
    expect(requeued.blocker).toMatchObject({
      host: "fakehost",
      tries: 1,
      reason: expect.stringContaining("Connection refused"),
    });
    // Not recorded while its host is silent (promoted.json comes and goes as it is tried again: not asked).
    expect(fs.existsSync(path.join(dir, "record.json"))).toBe(false);
    const shown = await runCli(["show", "two"], { env, timeoutMs: 60_000 });
    expect(shown.stdout).toMatch(/fakehost does not answer \(\d+×\), tried again at \d\d:\d\d:\d\dZ/);

    // Back: the home's waker tries it again at its time, and it runs to its record.
    ssh.set({ otherwise: "ok" });
    const records = await waited(env, ["two"]);
    expect(records).toMatchObject([{ name: "two", status: "ok" }]);
  }, 120_000);

  it("queues a dispatch whose host stopped answering between its check and its start, then starts it", async () => {
    const { env, ssh } = setUp();
    // The shared-folder check answers; the start does not, and every call after it does.
    ssh.set({ modes: ["ok", "refused"] });
    const now = path.join(tempDir(), "now");
    fs.writeFileSync(now, "");
    const one = await dispatch(env, held("one", now, "ssh:fakehost"));
    expect(one.code, one.stdout + one.stderr).toBe(0);
    expect(one.d).toMatchObject({ queued: true, blockedBy: "host" });
    expect(queuedFile(one.d?.dir as string).blocker).toMatchObject({ host: "fakehost", tries: 1 });
    const records = await waited(env, ["one"]);
    expect(records).toMatchObject([{ name: "one", status: "ok" }]);
  }, 120_000);

  it("runs a CLI only the host has, found on its login PATH, and refuses it here", async () => {
    const { env, ssh } = setUp();
    const tools = loginPath(ssh);
    // The host's login PATH holds the CLI; this host has none (CATHERD_CODEX_BIN unset, PATH without it).
    fs.writeFileSync(path.join(ssh.home, ".profile"), `PATH='${ssh.bin}':'${tools}':"$PATH"; export PATH\n`);
    const agent = path.join(ROOT, "dist/bin/simulated-agent.js");
    fs.writeFileSync(path.join(tools, "codex"), `#!/bin/sh\nexec '${process.execPath}' '${agent}' "$@"\n`, {
      mode: 0o755,
    });
    const here: NodeJS.ProcessEnv = { ...env, CATHERD_SIMULATED_PACE: "0.02" };
    delete here.CATHERD_CODEX_BIN;
    const brief = ["--backend", "codex", "--brief", "Fix the failing test"];
    const local = await dispatch(here, [
      "dispatch",
      "--json",
      "--name",
      "here",
      "--placement",
      "local",
      ...brief,
    ]);
    expect(local.code).toBe(3);
    expect(errorOf(local)).toMatchObject({
      code: "E_BACKEND_MISSING",
      message: expect.stringContaining("codex"),
    });
    const there = await dispatch(here, [
      "dispatch",
      "--json",
      "--name",
      "there",
      "--placement",
      "ssh:fakehost",
      ...brief,
    ]);
    expect(there.code, there.stdout + there.stderr).toBe(0);
    const spec = JSON.parse(fs.readFileSync(path.join(there.d?.dir as string, "spec.json"), "utf8"));
    expect(spec.cmd).toBe(path.join(tools, "codex"));
    expect(await waited(here, ["there"])).toMatchObject([{ name: "there", status: "ok" }]);
  }, 120_000);
});
