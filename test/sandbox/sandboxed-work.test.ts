import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resolveExecutable } from "../../src/infra/which.js";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { CLI_MAIN, tempDir } from "../helpers/folders.js";
import { git, isolateGitConfig, makeRepo } from "../helpers/git.js";
import { exitOf, notesOf, notingCommand, reapLocks, startLock } from "../helpers/locks.js";
import { recordOf, useSandboxedDispatches } from "../helpers/sandbox.js";
import { waitFor } from "../helpers/wait.js";

// Inside the sandbox the work still works (specs/sandbox.md, "What still works"): git in a worktree, a
// heavy command through `catherd lock`, a package manager through an allowed registry.

const sandboxed = useSandboxedDispatches();
isolateGitConfig();
/** Ends the outside lock's command (in a session of its own, out of the lock helper's reach) whatever happened. */
let releaseOutside: (() => void) | null = null;
afterEach(() => {
  releaseOutside?.();
  releaseOutside = null;
  expect(reapLocks(), "locks left running").toBe(0);
});

function setup() {
  const { home, env } = isolatedHome();
  return { home, env: { ...env, HOME: tempDir("catherd-user-home-") } };
}

describe("work inside a sandbox", () => {
  it("commits in its worktree, and cannot touch the repository's hooks or config", async () => {
    const s = setup();
    const repo = makeRepo(tempDir("catherd-repo-"), { "a.txt": "a\n" });
    const d = await sandboxed.dispatch(
      s.env,
      "commits",
      ["--cwd", repo, "--worktree", "--sandbox", "files+net"],
      [
        "/bin/sh",
        "-c",
        [
          "echo b > b.txt && git add b.txt && git -c user.name=agent -c user.email=agent@example.invalid commit -qm 'from the sandbox' && echo committed",
          "common=$(git rev-parse --git-common-dir)",
          'echo "[core] hooksPath = /tmp" >> "$common/config" || echo config-refused',
          'printf "#!/bin/sh\\n" > "$common/hooks/post-checkout" || echo hooks-refused',
        ].join("; "),
      ],
    );
    const record = await recordOf(s.env, "commits");
    const events = fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8");
    expect(events).toContain("committed");
    expect(events).toContain("config-refused");
    expect(events).toContain("hooks-refused");
    expect(record.status).toBe("ok");
    expect((record.commits as { list: { subject: string }[] }).list.map((c) => c.subject)).toEqual([
      "from the sandbox",
    ]);
    expect(fs.existsSync(path.join(repo, ".git", "hooks", "post-checkout"))).toBe(false);
    expect(fs.readFileSync(path.join(repo, ".git", "config"), "utf8")).not.toContain("hooksPath");
    expect(git(repo, "log", "--all", "--format=%s")).toContain("from the sandbox");
  });

  it("queues `catherd lock` behind a slot held outside, as it would outside", async () => {
    const s = setup();
    const env = { ...s.env, CATHERD_LOCK_SLOTS: "1" };
    const shared = tempDir();
    const notes = path.join(shared, "notes");
    const go = path.join(shared, "go");
    releaseOutside = () => fs.writeFileSync(go, "");
    const outside = startLock(["--", ...notingCommand(notes, "outside", { go })], env);
    await waitFor("the outside command to hold the slot", () =>
      notesOf(notes).includes("start outside") ? true : undefined,
    );
    const d = await sandboxed.dispatch(
      env,
      "heavy",
      ["--cwd", tempDir("catherd-work-"), "--sandbox", "files+net", "--allow-write", shared],
      [process.execPath, CLI_MAIN, "lock", "--", "/bin/sh", "-c", `echo inside >> '${notes}'`],
    );
    // Waiting, it reports from inside the sandbox (locks/), where the readers find it.
    await waitFor("the sandboxed lock to report that it waits", () => {
      const reports = path.join(d.dir, "locks");
      return fs.existsSync(reports) && fs.readdirSync(reports).some((n) => n.startsWith("lock-"))
        ? true
        : undefined;
    });
    const status = await runCli(["status"], { env });
    expect(status.stdout).toMatch(/heavy\s+\S+\s+exec\s+running .*heavy slot: next/);
    expect(notesOf(notes)).toEqual(["start outside"]);
    fs.writeFileSync(go, "");
    expect((await exitOf(outside)).code).toBe(0);
    const record = await recordOf(env, "heavy");
    expect(record.status, JSON.stringify(record.error)).toBe("ok");
    expect(notesOf(notes)).toEqual(["start outside", "end outside", "inside"]);
  });

  it("installs a package from a registry on an allowed loopback port", async () => {
    const s = setup();
    const pkg = tempDir("catherd-pkg-");
    fs.writeFileSync(
      path.join(pkg, "package.json"),
      JSON.stringify({ name: "sandbox-tiny", version: "1.0.0" }),
    );
    fs.writeFileSync(path.join(pkg, "index.js"), "module.exports = 'tiny';\n");
    // The machine's npm (the registry's Node 24 that CI also runs these tests on comes without one).
    const npm = resolveExecutable("npm", process.env.PATH ?? "");
    if (npm === null) throw new Error("npm is not on PATH");
    const packed = tempDir("catherd-packed-");
    execFileSync(npm, ["pack", "--silent", "--pack-destination", packed], { cwd: pkg, stdio: "ignore" });
    const tarball = fs.readFileSync(path.join(packed, "sandbox-tiny-1.0.0.tgz"));
    const registry = await sandboxed.server("", (request, response) => {
      const base = `http://${request.headers.host}`;
      if (request.url === "/sandbox-tiny") {
        response.setHeader("content-type", "application/json");
        response.end(
          JSON.stringify({
            name: "sandbox-tiny",
            "dist-tags": { latest: "1.0.0" },
            versions: {
              "1.0.0": {
                name: "sandbox-tiny",
                version: "1.0.0",
                dist: {
                  tarball: `${base}/sandbox-tiny/-/sandbox-tiny-1.0.0.tgz`,
                  shasum: createHash("sha1").update(tarball).digest("hex"),
                  integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`,
                },
              },
            },
          }),
        );
      } else if (request.url === "/sandbox-tiny/-/sandbox-tiny-1.0.0.tgz") {
        response.end(tarball);
      } else {
        response.statusCode = 404;
        response.end("{}");
      }
    });
    const work = tempDir("catherd-work-");
    fs.writeFileSync(
      path.join(work, "package.json"),
      JSON.stringify({ name: "work", version: "1.0.0", private: true }),
    );
    await sandboxed.dispatch(
      s.env,
      "installs",
      ["--cwd", work, "--sandbox", "files+net", "--allow-net", `127.0.0.1:${registry.port}`],
      [
        npm,
        "install",
        "--registry",
        `http://127.0.0.1:${registry.port}/`,
        "--no-audit",
        "--no-fund",
        "--no-update-notifier",
        "sandbox-tiny",
      ],
    );
    const record = await recordOf(s.env, "installs");
    expect(record.status, JSON.stringify(record.error)).toBe("ok");
    expect(fs.readFileSync(path.join(work, "node_modules", "sandbox-tiny", "index.js"), "utf8")).toContain(
      "tiny",
    );
    expect(registry.hits()).toBeGreaterThanOrEqual(1);
  });
});
