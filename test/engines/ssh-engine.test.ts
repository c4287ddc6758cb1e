import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PlacementFile } from "../../src/domain/schemas.js";
import { runSsh, sshBoundMs, sshError } from "../../src/engines/ssh/command.js";
import { sshEngine } from "../../src/engines/ssh/ssh-engine.js";
import { startOverSsh } from "../../src/engines/ssh/start.js";
import { systemClock } from "../../src/infra/clock.js";
import { type FakeSsh, fakeSsh } from "../helpers/fake-ssh.js";
import { tempDir } from "../helpers/folders.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait.js";

// The SSH engine called in this process against the fake ssh of test/helpers/fake-ssh.ts (specs/placement.md,
// "SSH"), for what a dispatch end to end (test/dispatch/ssh-fake.test.ts) does not reach: ssh's words
// when the remote command says none or many, a bound given by the caller, a host that runs no POSIX sh,
// several hosts read at once, and what the engine says inside a supervisor.

let ssh: FakeSsh;
const savedPath = process.env.PATH;
const started: number[] = [];

beforeEach(() => {
  ssh = fakeSsh();
  process.env.PATH = `${ssh.bin}:${savedPath ?? ""}`;
});

afterEach(() => {
  process.env.PATH = savedPath;
  for (const pid of started.splice(0)) killPid(pid);
  expect(
    ssh.calls().filter((c) => c.refused),
    "calls the fake refused",
  ).toEqual([]);
});

/** A placement.json of the SSH engine: `pid` on `target`. */
function placement(target: string, pid: number): PlacementFile {
  const file: PlacementFile = {
    schema: 1,
    engine: "ssh",
    target,
    jobId: String(pid),
    cluster: null,
    submittedAt: new Date().toISOString(),
    node: null,
  };
  return file;
}

/** A process here whose command line names `dir`, as a supervisor's does; ended by the test. */
function holding(dir: string): number {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", dir], { stdio: "ignore" });
  const pid = child.pid as number;
  started.push(pid);
  child.unref();
  return pid;
}

describe("one ssh call", () => {
  it("says ssh is missing when none is on PATH", async () => {
    process.env.PATH = tempDir();
    const result = await runSsh("fakehost", "true");
    expect(result).toMatchObject({ ok: false, failure: "missing" });
    expect(sshError(result as Extract<typeof result, { ok: false }>, "fakehost", "ask")).toMatchObject({
      code: "E_ENGINE_MISSING",
      message: "cannot ask: ssh is not installed here (not found on PATH)",
    });
  });

  it("kills a call past the bound its caller gave", async () => {
    ssh.set({ otherwise: "hang" });
    const started = Date.now();
    const result = await runSsh("fakehost", "true", { timeoutMs: 1000 });
    expect(result).toMatchObject({
      ok: false,
      failure: "timeout",
      words: "ssh fakehost did not answer within 1000 ms",
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it("quotes the last lines the remote command said, else its exit code", async () => {
    const said = await runSsh("fakehost", "printf 'one\\ntwo\\nthree\\nfour\\n' >&2; exit 4");
    expect(said).toMatchObject({ ok: false, failure: "refused", words: "two; three; four", exitCode: 4 });
    // ssh's own lines end with CR LF (a remote exit 255 is ssh's failure to the caller: one that did not
    // fail to connect, a login's).
    const crlf = await runSsh("fakehost", "printf 'Warning: added\\r\\nssh: refused\\r\\n' >&2; exit 255");
    expect(crlf).toMatchObject({ ok: false, failure: "login", words: "Warning: added; ssh: refused" });
    const silent = await runSsh("fakehost", "exit 3");
    expect(silent).toMatchObject({
      ok: false,
      failure: "refused",
      words: "ssh fakehost failed with exit code 3",
    });
    const unknown = await runSsh("nohost", "true");
    expect(unknown).toMatchObject({
      ok: false,
      failure: "unreachable",
      words: "ssh: Could not resolve hostname nohost: Name or service not known",
    });
  });

  it("is bounded by CATHERD_TEST_ONLY_SSH_TIMEOUT_MS when a test sets it, else by its caller's bound", () => {
    expect(sshBoundMs(15_000, {})).toBe(15_000);
    expect(sshBoundMs(15_000, { CATHERD_TEST_ONLY_SSH_TIMEOUT_MS: "500" })).toBe(500);
    for (const given of ["", "0", "-5", "soon", "1.5"]) {
      expect(sshBoundMs(30_000, { CATHERD_TEST_ONLY_SSH_TIMEOUT_MS: given })).toBe(30_000);
    }
  });
});

describe("the SSH engine", () => {
  it("refuses a start on a host whose login shell runs no script, which prints no pid", async () => {
    ssh.set({ shell: "/bin/true" });
    const dir = tempDir();
    await expect(
      startOverSsh({ host: "fakehost", dir, command: [process.execPath, "/nowhere.js", dir], env: {} }),
    ).rejects.toMatchObject({
      code: "E_ENGINE_REFUSED",
      message: "cannot start the supervisor on fakehost: it printed no pid ()",
    });
  });

  it("asks each host once for all its supervisors, and a hostile target not at all", async () => {
    const [a, b, c] = [tempDir(), tempDir(), tempDir()];
    const running = holding(a);
    const gone = holding(b);
    killPid(gone);
    await waitFor("the second process to end", () => (isAlive(gone) ? undefined : true));
    const sights = await sshEngine.sights(
      new Map([
        [a, placement("fakehost", running)],
        [b, placement("fakehost", gone)],
        [c, placement("-oProxyCommand=x", running)],
      ]),
    );
    expect(sights.get(a)).toMatchObject({ kind: "known", phase: "running", node: "fakehost" });
    expect(sights.get(b)).toMatchObject({
      kind: "known",
      phase: "ended",
      ending: { started: { state: "GONE" } },
    });
    expect(sights.get(c)).toMatchObject({ kind: "unreachable", error: { code: "E_INPUT_INVALID" } });
    expect(ssh.calls()).toHaveLength(1);
  });

  it("cancels a supervisor already gone as done, and says why when ssh fails", async () => {
    const dir = tempDir();
    await expect(sshEngine.cancel(placement("fakehost", 999_999_999), dir)).resolves.toBeUndefined();
    ssh.set({ otherwise: "refused" });
    await expect(sshEngine.cancel(placement("fakehost", 4242), dir)).rejects.toMatchObject({
      code: "E_ENGINE_UNREACHABLE",
      message: expect.stringMatching(
        /^cannot stop the supervisor 4242 on fakehost: fakehost does not answer: .*Connection refused/,
      ),
    });
  });

  it("needs a host, and a folder whose spec names what the supervisor gets", async () => {
    expect(await sshEngine.unusable({ home: tempDir(), target: null })).toMatchObject({
      code: "E_INPUT_INVALID",
    });
    const dir = tempDir();
    const asked = { engine: "ssh" as const, options: [], target: "fakehost" };
    await expect(sshEngine.submit(dir, asked, ["node"], systemClock)).rejects.toMatchObject({
      code: "E_SPEC_INVALID",
      message: `${path.join(dir, "spec.json")} is missing`,
    });
    expect(ssh.calls()).toEqual([]);
    expect(fs.existsSync(path.join(dir, "placement.json"))).toBe(false);
  });

  it("knows, inside a supervisor, whether it is the one placed, and where it runs", async () => {
    const here = placement("fakehost", process.pid);
    const saved = process.env.CATHERD_SSH_HOST;
    try {
      process.env.CATHERD_SSH_HOST = "fakehost";
      expect(sshEngine.isThisProcess(here)).toBe(true);
      expect(sshEngine.isThisProcess(placement("fakehost", process.pid + 1))).toBe(false);
      process.env.CATHERD_SSH_HOST = "otherhost";
      expect(sshEngine.isThisProcess(here)).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.CATHERD_SSH_HOST;
      else process.env.CATHERD_SSH_HOST = saved;
    }
    expect(sshEngine.nodeOfThisProcess()).toBe(os.hostname());
    expect(await sshEngine.endingOfThisProcess(tempDir(), here, systemClock)).toBeNull();
  });
});
