import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { expectAnswer } from "../helpers/answers.js";
import { dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { CLI_MAIN, reapAll, tempDir } from "../helpers/folders.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

// What a new user trips on, third table: a brief on stdin that does not end, an agent's escapes on the
// terminal, file-system errors in their own words (careless-user.test.ts has the first).

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "left behind").toBe(0);
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
