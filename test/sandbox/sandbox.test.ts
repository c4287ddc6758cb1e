import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveExecutable } from "../../src/infra/which.js";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { readJson, tempDir } from "../helpers/folders.js";
import { isAlive } from "../helpers/processes.js";
import {
  filesUnder,
  probeReports,
  recordOf,
  SANDBOX_PROBE,
  useSandboxedDispatches,
} from "../helpers/sandbox.js";
import { waitFor } from "../helpers/wait.js";

// The sandbox for real (specs/sandbox.md): bubblewrap around an exec agent — the sandbox probe — and the
// supervisor's proxy in front of its network, on this machine's kernel.

const sandboxed = useSandboxedDispatches();

/** A home with a planted key, the agent's HOME; and the catherd home beside it. */
function setup() {
  const { home, env } = isolatedHome();
  const userHome = tempDir("catherd-user-home-");
  const secret = `planted-${randomBytes(12).toString("hex")}`;
  fs.mkdirSync(path.join(userHome, ".ssh"), { mode: 0o700 });
  fs.writeFileSync(path.join(userHome, ".ssh", "id_test"), `${secret}\n`);
  fs.mkdirSync(path.join(userHome, ".aws"));
  fs.writeFileSync(path.join(userHome, ".aws", "credentials"), `${secret}\n`);
  return { home, env: { ...env, HOME: userHome }, userHome, secret, work: tempDir("catherd-work-") };
}

describe("--sandbox files+net", () => {
  it("refuses a planted key, a write outside the workplace and a loopback port not allowed, logs them, and lets the allowed port through", async () => {
    const s = setup();
    const allowed = await sandboxed.server("allowed-answer");
    const refused = await sandboxed.server("must-not-be-reached");
    const outside = path.join(tempDir("catherd-outside-"), "escaped.txt");
    const d = await sandboxed.dispatch(
      s.env,
      "probe",
      ["--cwd", s.work, "--sandbox", "files+net", "--allow-net", `127.0.0.1:${allowed.port}`],
      [
        process.execPath,
        SANDBOX_PROBE,
        `read:${path.join(s.userHome, ".ssh", "id_test")}`,
        `read:${path.join(s.userHome, ".aws", "credentials")}`,
        `write:${outside}`,
        `!write:${path.join(s.work, "inside.txt")}`,
        `proxy:http://127.0.0.1:${refused.port}/`,
        `connect:127.0.0.1:${refused.port}`,
        `!proxy:http://127.0.0.1:${allowed.port}/`,
        `!connect:127.0.0.1:${allowed.port}`,
        "udp:192.0.2.1:53",
      ],
    );
    const record = await recordOf(s.env, "probe");
    const tries = probeReports(d.dir);
    expect(tries.get(`read:${path.join(s.userHome, ".ssh", "id_test")}`)?.ok).toBe(false);
    expect(tries.get(`read:${path.join(s.userHome, ".aws", "credentials")}`)?.ok).toBe(false);
    expect(tries.get(`write:${outside}`)).toMatchObject({ ok: false, detail: "EROFS" });
    expect(fs.existsSync(outside)).toBe(false);
    expect(fs.readFileSync(path.join(s.work, "inside.txt"), "utf8")).toContain("sandbox probe");
    expect(tries.get(`proxy:http://127.0.0.1:${refused.port}/`)?.detail).toMatch(
      /^403 catherd's sandbox refused/,
    );
    expect(tries.get(`connect:127.0.0.1:${refused.port}`)).toMatchObject({
      ok: false,
      detail: "ECONNREFUSED",
    });
    expect(tries.get(`proxy:http://127.0.0.1:${allowed.port}/`)).toMatchObject({
      ok: true,
      detail: "200 allowed-answer",
    });
    expect(tries.get(`connect:127.0.0.1:${allowed.port}`)?.ok).toBe(true);
    expect(tries.get("udp:192.0.2.1:53")?.ok).toBe(false);
    expect(refused.hits()).toBe(0);
    expect(allowed.hits()).toBe(1);

    expect(record.status).toBe("ok");
    expect(record.sandbox).toEqual({
      mode: "files+net",
      denied: 1,
      firstDenied: `127.0.0.1:${refused.port}`,
      refusedWrite: null,
    });
    const log = fs
      .readFileSync(path.join(d.dir, "sandbox.log"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(log[0]).toMatchObject({ event: "fence", mode: "files+net" });
    expect(log[0].hidden).toEqual(
      expect.arrayContaining([path.join(s.userHome, ".ssh"), path.join(s.userHome, ".aws")]),
    );
    expect(log.filter((l) => l.event === "denied")).toEqual([
      expect.objectContaining({ what: "net", host: "127.0.0.1", port: refused.port, method: "GET" }),
    ]);
    // Once its supervisor has ended (it removes its reserve and the sandbox's sockets after the record): the
    // planted secret is in no file of the dispatch folder, and the proxy's sockets are gone.
    await waitFor("the supervisor to end", () => (isAlive(d.supervisorPid ?? 0) ? undefined : true));
    for (const { file, text } of filesUnder(d.dir)) expect(text.includes(s.secret), file).toBe(false);
    const sandbox = readJson(path.join(d.dir, "fence.json"));
    expect(fs.existsSync(sandbox.socketDir as string)).toBe(false);
  });

  it("says in the failure line what the sandbox refused and the flag that allows it", async () => {
    const s = setup();
    const refused = await sandboxed.server("must-not-be-reached");
    await sandboxed.dispatch(
      s.env,
      "needs-net",
      ["--cwd", s.work, "--sandbox", "files+net"],
      [process.execPath, SANDBOX_PROBE, `!proxy:http://127.0.0.1:${refused.port}/`],
    );
    const record = await recordOf(s.env, "needs-net");
    expect(record.status).toBe("failed");
    expect((record.error as { message: string }).message).toContain(
      `the sandbox refused a connection to 127.0.0.1:${refused.port}: allow it with --allow-net 127.0.0.1:${refused.port}`,
    );
    const logs = await runCli(["logs", "needs-net"], { env: s.env });
    expect(logs.stdout).toContain(`sandbox refused 127.0.0.1:${refused.port}`);
  });

  it("records spawn-failed at once, with socat's words, when a listener of the bridge ends, and leaves none behind", async () => {
    // A socat of the agent's PATH that cannot listen on one port (as a taken port would make it), while the
    // proxy's listener, started first, is up: the bridge must end, and the supervisor hear it end.
    const s = setup();
    const bin = tempDir("catherd-fake-socat-");
    const socat = resolveExecutable("socat", process.env.PATH ?? "");
    fs.writeFileSync(
      path.join(bin, "socat"),
      `#!/bin/sh\ncase "$1" in TCP-LISTEN:4999,*) echo "socat: bind: Address already in use" >&2; exit 1;; esac\nexec ${socat} "$@"\n`,
      { mode: 0o755 },
    );
    const env = { ...s.env, PATH: `${bin}:${process.env.PATH ?? ""}` };
    const d = await sandboxed.dispatch(
      env,
      "no-listener",
      ["--cwd", s.work, "--sandbox", "files+net", "--allow-net", "127.0.0.1:4999"],
      ["/bin/sh", "-c", `echo ran > ${path.join(s.work, "ran.txt")}`],
    );
    const record = await recordOf(env, "no-listener");
    expect(record.status).toBe("failed");
    expect(record.reason).toBe("spawn-failed");
    expect((record.error as { message: string }).message).toContain(
      "the bridge of port 4999 could not listen",
    );
    expect(fs.existsSync(path.join(s.work, "ran.txt")), "the agent never ran").toBe(false);
    expect(fs.readFileSync(path.join(d.dir, "stderr.log"), "utf8")).toContain("Address already in use");
  });

  it("reaches an allowed loopback port below 1024 through the proxy only: the dispatch runs", async () => {
    const s = setup();
    const d = await sandboxed.dispatch(
      s.env,
      "low-port",
      ["--cwd", s.work, "--sandbox", "files+net", "--allow-net", "127.0.0.1:81,127.0.0.1:4873"],
      ["/bin/sh", "-c", "true"],
    );
    const record = await recordOf(s.env, "low-port");
    expect(record.status).toBe("ok");
    const raised = fs
      .readFileSync(path.join(d.dir, "supervisor.log"), "utf8")
      .split("\n")
      .find((line) => line.includes('"event":"sandbox"'));
    expect(JSON.parse(raised ?? "{}")).toMatchObject({ proxyOnly: [81] });
    expect(readJson(path.join(d.dir, "fence.json"))).toMatchObject({ loopbackPorts: [4873] });
  });

  it("says which write the sandbox refused, from the agent's own words", async () => {
    const s = setup();
    const outside = path.join(tempDir("catherd-outside-"), "report.txt");
    await sandboxed.dispatch(
      s.env,
      "writes-out",
      ["--cwd", s.work, "--sandbox", "files"],
      ["/bin/sh", "-c", `echo x > ${outside}`],
    );
    const record = await recordOf(s.env, "writes-out");
    expect(record.status).toBe("failed");
    expect(record.sandbox).toMatchObject({ mode: "files", denied: 0, refusedWrite: outside });
    expect((record.error as { message: string }).message).toContain(
      `the sandbox refused a write to ${outside}: allow it with --allow-write ${path.dirname(outside)}`,
    );
  });
});

describe("--sandbox files", () => {
  it("hides other dispatches' folders and other CLIs' logins, and leaves the network as it was", async () => {
    const s = setup();
    const server = await sandboxed.server("open-network");
    fs.mkdirSync(path.join(s.userHome, ".codex"));
    fs.writeFileSync(path.join(s.userHome, ".codex", "auth.json"), `{"token":"${s.secret}"}`);
    const first = await sandboxed.dispatch(
      s.env,
      "first",
      ["--cwd", s.work],
      ["/bin/sh", "-c", "echo first"],
    );
    await recordOf(s.env, "first");
    const d = await sandboxed.dispatch(
      s.env,
      "second",
      ["--cwd", s.work, "--sandbox", "files"],
      [
        "/bin/sh",
        "-c",
        // Its own folder comes from the environment: the verdict's files are not the agent's to write.
        `exec "$0" "$1" "$2" "$3" "$4" "write:$CATHERD_DISPATCH_DIR/record.json" "!write:$TMPDIR/scratch"`,
        process.execPath,
        SANDBOX_PROBE,
        `read:${path.join(first.dir, "events.jsonl")}`,
        `read:${path.join(s.userHome, ".codex", "auth.json")}`,
        `!connect:127.0.0.1:${server.port}`,
      ],
    );
    await recordOf(s.env, "second");
    const tries = probeReports(d.dir);
    expect(tries.get(`read:${path.join(first.dir, "events.jsonl")}`)).toMatchObject({
      ok: false,
      detail: "ENOENT",
    });
    // Another CLI's login: a device nobody may open where it was.
    expect(tries.get(`read:${path.join(s.userHome, ".codex", "auth.json")}`)).toMatchObject({
      ok: false,
      detail: "EACCES",
    });
    expect(tries.get(`connect:127.0.0.1:${server.port}`)?.ok).toBe(true);
    expect(tries.get(`write:${path.join(d.dir, "record.json")}`)).toMatchObject({
      ok: false,
      detail: "EROFS",
    });
    expect(tries.get(`write:${path.join(d.dir, "tmp", "scratch")}`)?.ok).toBe(true);
  });
});

describe("--access read-only inside a sandbox", () => {
  it("keeps the workplace read-only, for exec too (advisory without the sandbox)", async () => {
    const s = setup();
    const d = await sandboxed.dispatch(
      s.env,
      "reader",
      ["--cwd", s.work, "--sandbox", "files", "--access", "read-only"],
      [
        "/bin/sh",
        "-c",
        // Its temp folder stays its own to write.
        `exec "$0" "$1" "write:${s.work}/out.txt" "!write:$TMPDIR/scratch"`,
        process.execPath,
        SANDBOX_PROBE,
      ],
    );
    await recordOf(s.env, "reader");
    const tries = probeReports(d.dir);
    expect(tries.get(`write:${s.work}/out.txt`)).toMatchObject({ ok: false, detail: "EROFS" });
    expect(tries.get(`write:${path.join(d.dir, "tmp", "scratch")}`)?.ok).toBe(true);
    expect(fs.existsSync(path.join(s.work, "out.txt"))).toBe(false);
  });
});

describe("where the sandbox cannot run", () => {
  it("refuses with E_SANDBOX_UNAVAILABLE and the fix, writing nothing", async () => {
    const { home, env } = isolatedHome();
    const result = await runCli(
      [
        "dispatch",
        "--backend",
        "exec",
        "--name",
        "nosandbox",
        "--sandbox",
        "files",
        "--json",
        "--",
        "/bin/true",
      ],
      { env: { ...env, PATH: "/nonexistent" } },
    );
    expect(result.code).toBe(3);
    const error = (JSON.parse(result.stdout) as { error: { code: string; message: string; fix: string } })
      .error;
    expect(error.code).toBe("E_SANDBOX_UNAVAILABLE");
    expect(error.message).toContain("bubblewrap");
    expect(error.fix).toContain("apt-get install bubblewrap");
    expect(fs.existsSync(path.join(home, "runs"))).toBe(false);
  });

  it("refuses what shapes a sandbox for a dispatch that has none", async () => {
    const { env } = isolatedHome();
    const result = await runCli(
      ["dispatch", "--backend", "exec", "--name", "x", "--allow-net", "example.com", "--", "/bin/true"],
      { env },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--allow-net shape a sandbox, and this dispatch has none");
  });
});
