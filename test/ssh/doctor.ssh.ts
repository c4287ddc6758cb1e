import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type CliResult, dispatchFolders, isolatedHome, runCli } from "../helpers/cli.js";
import { CLI_MAIN, readJson, reapAll, tempDir } from "../helpers/folders.js";
import { type SshOnPath, sshOnPath } from "../helpers/ssh-placement.js";
import { type Sshd, sshdUnavailable, startSshd } from "../helpers/sshd.js";

// Readiness on the host (specs/placement.md, "Readiness on the host") against the rig of
// test/helpers/sshd.ts: `doctor --placement ssh:HOST` and a dispatch placed there ask HOST, in one ssh
// call, for catherd's home, node, catherd and each CLI with its login. The rig's sessions get a HOME of
// this file's own (sshd's SetEnv): its ~/.profile sets the login PATH the host's CLIs are found on, and
// its ~/.codex holds (or not) the fake CLI's login. Nothing of the machine's own account is read.

const why = sshdUnavailable();
if (why !== null && process.env.CI !== undefined && process.env.CI !== "") {
  throw new Error(`the ssh suite must run under CI, but ${why}`);
}

let sshd: Sshd;
let wrapper: SshOnPath;
/** The HOME of every session on the rig. */
let rigHome: string;
/** A folder of fake CLIs, on the rig's login PATH when its ~/.profile says so. */
let hostBin: string;

beforeAll(async () => {
  if (why !== null) return;
  rigHome = tempDir("catherd-rig-home-");
  hostBin = tempDir("catherd-host-bin-");
  fs.writeFileSync(path.join(hostBin, "codex"), "#!/bin/sh\necho 'codex-cli 0.171.0'\n", { mode: 0o755 });
  sshd = await startSshd(30_000, { setEnv: { HOME: rigHome } });
  wrapper = sshOnPath(sshd);
});

afterAll(async () => {
  await sshd?.stop();
});

/** The rig's login PATH: with the fake CLIs or without; and codex logged in there or not. */
function hostHas(o: { cliOnPath: boolean; codexLogin: boolean }): void {
  const profile = o.cliOnPath ? `PATH="${hostBin}:$PATH"; export PATH\n` : "";
  fs.writeFileSync(path.join(rigHome, ".profile"), profile);
  fs.rmSync(path.join(rigHome, ".codex"), { recursive: true, force: true });
  if (o.codexLogin) {
    fs.mkdirSync(path.join(rigHome, ".codex"));
    fs.writeFileSync(path.join(rigHome, ".codex/auth.json"), '{"fake":true}\n');
  }
}

beforeEach(() => {
  if (why === null) hostHas({ cliOnPath: true, codexLogin: true });
});

/** A home of its own whose ssh reaches the rig, with no CLI of this host's named by a variable. */
function home(): { home: string; env: NodeJS.ProcessEnv } {
  const { home, env } = isolatedHome();
  const own = Object.fromEntries(Object.entries(env).filter(([name]) => !/^CATHERD_.*_BIN$/.test(name)));
  return { home, env: { ...own, PATH: `${wrapper.bin}:${process.env.PATH ?? ""}` } };
}

const sshCalls = () => wrapper.calls();

interface Report {
  placement: {
    placement: string;
    host: string;
    checks: { what: string; ok: boolean; detail: string; fix: string | null }[];
    backends: {
      backend: string;
      found: boolean;
      path: string | null;
      via: string | null;
      version: string | null;
      ready: boolean;
      problem: { code: string; message: string } | null;
      fix: string | null;
      login: { ok: boolean; detail: string; fix: string | null } | null;
    }[];
  };
}

function reportOf(result: CliResult): Report["placement"] {
  return (JSON.parse(result.stdout) as Report).placement;
}

/**
 * Runs `argv` in a mount namespace of its own where each of `hidden` is a fresh tmpfs, after `prepare`
 * (a shell line) ran there: what it writes into them the rig never sees. Its exit and output.
 */
function inOwnMounts(o: {
  hidden: string[];
  prepare: string;
  argv: string[];
  env: NodeJS.ProcessEnv;
}): CliResult {
  const mounts = o.hidden.map((dir) => `mount -n -t tmpfs tmpfs '${dir}'`).join(" && ");
  const script = `${mounts} && ${o.prepare} && exec "$@"`;
  try {
    const stdout = execFileSync(
      "unshare",
      ["--mount", "--propagation", "private", "sh", "-c", script, "sh", ...o.argv],
      {
        env: o.env,
        encoding: "utf8",
        timeout: 90_000,
        cwd: "/tmp",
      },
    );
    return { code: 0, stdout, stderr: "" };
  } catch (error) {
    const e = error as { status: number | null; stdout: string; stderr: string };
    return { code: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

describe.skipIf(why !== null)("doctor --placement ssh:HOST on the rig", () => {
  it("finds node, catherd and the CLI on the host's login PATH, with its version and login, in one ssh call", async () => {
    const { env } = home();
    const before = sshCalls().split("\n").length;
    const result = await runCli(["doctor", "codex", "--placement", `ssh:${sshd.host}`, "--json"], {
      env,
      timeoutMs: 90_000,
    });
    expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(sshCalls().split("\n").length - before).toBe(1);
    const report = reportOf(result);
    expect(report.checks.map((c) => [c.what, c.ok])).toEqual([
      ["ssh here", true],
      ["host answers", true],
      ["shared home", true],
      ["node", true],
      ["catherd", true],
    ]);
    expect(report.checks[1]?.detail).toContain(sshd.hostname);
    // This host's own node and catherd, which the rig sees at the same paths (a shared install).
    expect(report.checks[3]?.detail).toBe(
      `${process.version} at ${process.execPath} (the same path as here)`,
    );
    expect(report.backends).toEqual([
      {
        backend: "codex",
        found: true,
        path: path.join(hostBin, "codex"),
        via: "PATH",
        version: "0.171.0",
        minVersion: "0.171.0",
        ready: true,
        problem: null,
        fix: null,
        login: { ok: true, detail: `logged in: ${path.join(rigHome, ".codex/auth.json")}`, fix: null },
      },
    ]);
    const text = await runCli(["doctor", "codex", "--placement", `ssh:${sshd.host}`], {
      env,
      timeoutMs: 90_000,
    });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ok +codex +0\.171\.0$/m);
  });

  it("says each thing missing on the host on a line of its own, with its fix, and exits 3", async () => {
    hostHas({ cliOnPath: false, codexLogin: false });
    const { env } = home();
    const args = ["doctor", "codex", "claude-code", "--placement", `ssh:${sshd.host}`];
    const result = await runCli([...args, "--json"], { env, timeoutMs: 90_000 });
    expect(result.code, result.stderr).toBe(3);
    const report = reportOf(result);
    expect(report.checks.every((c) => c.ok)).toBe(true);
    for (const b of report.backends) {
      expect(b).toMatchObject({ found: false, ready: false, problem: { code: "E_BACKEND_MISSING" } });
      expect(b.problem?.message).toContain(`not on ${sshd.host}`);
      expect(b.fix).toContain(`on ${sshd.host}`);
      expect(b.login).toMatchObject({ ok: false, fix: expect.stringContaining(`on ${sshd.host}`) });
    }
    const text = await runCli(args, { env, timeoutMs: 90_000 });
    expect(text.code).toBe(3);
    expect(text.stdout).toMatch(/^missing codex$/m);
    expect(text.stdout).toMatch(/^missing claude-code$/m);
    expect(text.stdout).toMatch(/fix: npm install -g @openai\/codex on catherd-remote/);
    expect(text.stdout.match(/not logged in/g)).toHaveLength(2);
  });

  it("reports a home the host does not see at the same path, with its fix", async () => {
    const { home: h, env } = home();
    const argv = [process.execPath, CLI_MAIN, "doctor", "codex", "--placement", `ssh:${sshd.host}`, "--json"];
    const result = inOwnMounts({ hidden: [h], prepare: "true", argv, env });
    expect(result.code, result.stderr).toBe(3);
    const shared = reportOf(result).checks.find((c) => c.what === "shared home");
    expect(shared).toMatchObject({ ok: false, fix: expect.stringMatching(/same path/) });
    expect(shared?.detail).toContain(`${sshd.host} does not see catherd's home at ${h}`);
  });

  it("says a host that does not answer in ssh's words, with its fix, and asks it nothing more", async () => {
    const { env } = home();
    const host = "no-such-host.invalid";
    const result = await runCli(["doctor", "codex", "--placement", `ssh:${host}`, "--json"], {
      env,
      timeoutMs: 90_000,
    });
    expect(result.code, result.stderr).toBe(3);
    const report = reportOf(result);
    expect(report.checks.map((c) => [c.what, c.ok])).toEqual([
      ["ssh here", true],
      ["host answers", false],
    ]);
    expect(report.checks[1]?.detail).toContain(`${host} does not answer: ssh: Could not resolve hostname`);
    expect(report.checks[1]?.fix).toContain(`check that ${host} is up and ssh ${host} true answers`);
    expect(report.backends).toEqual([]);
  });

  it("refuses a hostile host before ssh runs", async () => {
    const { env } = home();
    const before = sshCalls();
    const result = await runCli(
      ["doctor", "--placement", "ssh:-oProxyCommand=touch /tmp/catherd-pwned", "--json"],
      {
        env,
      },
    );
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { code: "E_INPUT_INVALID" } });
    expect(sshCalls()).toBe(before);
  });
});

describe.skipIf(why !== null)("a dispatch placed on the rig, checked there", () => {
  it("is refused in the host's words when its CLI is here but not there, and nothing is written", async () => {
    hostHas({ cliOnPath: false, codexLogin: true });
    const { home: h, env } = home();
    // The CLI is in a folder only this side sees: a tmpfs of the dispatcher's own mount namespace.
    const ownBin = tempDir("catherd-own-bin-");
    const fake = path.join(ownBin, "codex");
    const argv = [process.execPath, CLI_MAIN, "dispatch", "--json", "--backend", "codex"];
    argv.push("--placement", `ssh:${sshd.host}`, "--brief", "say hi");
    const result = inOwnMounts({
      hidden: [ownBin],
      prepare: `printf '#!/bin/sh\\necho codex-cli 0.171.0\\n' > '${fake}' && chmod 755 '${fake}'`,
      argv,
      env: { ...env, CATHERD_CODEX_BIN: fake },
    });
    expect(result.code, result.stderr + result.stdout).toBe(3);
    const error = (JSON.parse(result.stdout) as { error: { code: string; message: string; fix: string } })
      .error;
    expect(error.code).toBe("E_BACKEND_MISSING");
    expect(error.message).toBe(
      `codex: codex is not on ${sshd.host}: not at this host's path there, nor on its login shell's PATH`,
    );
    expect(error.fix).toContain(`npm install -g @openai/codex on ${sshd.host}`);
    expect(dispatchFolders(h)).toEqual([]);
    expect(fs.existsSync(fake)).toBe(false);
  });

  it("runs the CLI at the path the host has it, not at this host's", async () => {
    const { env } = home();
    const ownBin = tempDir("catherd-own-bin-");
    const fake = path.join(ownBin, "codex");
    const argv = [process.execPath, CLI_MAIN, "dispatch", "--json", "--backend", "codex"];
    argv.push("--placement", `ssh:${sshd.host}`, "--brief", "say hi");
    let id: string | null = null;
    try {
      const result = inOwnMounts({
        hidden: [ownBin],
        prepare: `printf '#!/bin/sh\\necho codex-cli 0.171.0\\n' > '${fake}' && chmod 755 '${fake}'`,
        argv,
        env: { ...env, CATHERD_CODEX_BIN: fake },
      });
      expect(result.code, result.stderr + result.stdout).toBe(0);
      const d = (JSON.parse(result.stdout) as { dispatched: { dispatchId: string; dir: string } }).dispatched;
      id = d.dispatchId;
      expect(readJson(path.join(d.dir, "spec.json"))).toMatchObject({ cmd: path.join(hostBin, "codex") });
      const waited = await runCli(["wait", d.dispatchId, "--json"], { env, timeoutMs: 90_000 });
      expect(waited.code, waited.stderr).not.toBeNull();
      // The fake CLI ran there: it printed its one line and exited, which is no spawn failure.
      expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({ reason: "exited", exitCode: 0 });
    } finally {
      expect(reapAll(id === null ? [] : [id]), "processes left running").toBe(0);
    }
  });
});
