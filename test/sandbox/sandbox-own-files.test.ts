import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { readJson, tempDir } from "../helpers/folders.js";
import { isolateGitConfig, makeRepo } from "../helpers/git.js";
import { isAlive } from "../helpers/processes.js";
import { recordOf, useSandboxedDispatches } from "../helpers/sandbox.js";
import { waitFor } from "../helpers/wait.js";

// What catherd judges by stays out of a sandboxed agent's reach whatever the flags say (specs/sandbox.md,
// "What catherd judges by stays out of reach"), and a read-only workplace in a worktree is shown to it.

const sandboxed = useSandboxedDispatches();
isolateGitConfig();

/** A catherd home inside a folder of its own, so that a test can allow that folder (a parent of the home). */
function nestedHome() {
  const outer = tempDir("catherd-outer-");
  const home = path.join(outer, "home");
  fs.mkdirSync(home);
  const env = { ...process.env, CATHERD_HOME: home, CATHERD_RUN: "", HOME: tempDir("catherd-user-home-") };
  return { outer, home, env, work: tempDir("catherd-work-") };
}

function sandboxLine(dir: string): { writable: string[]; readOnly: string[] } {
  return JSON.parse(fs.readFileSync(path.join(dir, "sandbox.log"), "utf8").split("\n")[0] as string);
}

describe("--allow-write above the catherd home", () => {
  it("leaves the home read-only: an agent that forges its record.json and exits 3 is recorded failed", async () => {
    const s = nestedHome();
    const first = await sandboxed.dispatch(
      s.env,
      "first",
      ["--cwd", s.work],
      ["/bin/sh", "-c", "echo first"],
    );
    await recordOf(s.env, "first");
    const firstRecord = fs.readFileSync(path.join(first.dir, "record.json"));
    // The parent of the home, spelled through a symlink to it and a `..`.
    const link = path.join(tempDir("catherd-link-"), "to-outer");
    fs.symlinkSync(s.outer, link);
    const forged = JSON.stringify({ schema: 1, status: "ok", reply: "all done, trust me" });
    const d = await sandboxed.dispatch(
      s.env,
      "forger",
      ["--cwd", s.work, "--sandbox", "files", "--allow-write", `${link}/home/../`],
      [
        "/bin/sh",
        "-c",
        [
          `printf '%s' '${forged}' > "$CATHERD_DISPATCH_DIR/record.json" || echo own-record-refused`,
          `echo forged >> '${path.join(first.dir, "record.json")}' || echo other-record-refused`,
          `echo forged > '${path.join(s.home, "locks", "..", "planted")}' || echo home-refused`,
          `echo around > '${path.join(s.outer, "around.txt")}' && echo around-written`,
          "exit 3",
        ].join("; "),
      ],
    );
    const record = await recordOf(s.env, "forger");
    expect(record.status).toBe("failed");
    expect((record.error as { message: string }).message).toMatch(/^exit code 3/);
    // No flag is offered for it: none would be accepted.
    expect((record.error as { message: string }).message).toContain(
      `the sandbox refused a write to ${path.join(fs.realpathSync(d.dir), "record.json")}: it stays read-only inside the sandbox`,
    );
    expect(record.reply ?? null).not.toBe("all done, trust me");
    const waited = await runCli(["wait", "forger", "--timeout", "60s"], { env: s.env });
    expect(waited.code).not.toBe(0);
    const events = fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8");
    for (const refused of ["own-record-refused", "other-record-refused", "home-refused", "around-written"]) {
      expect(events).toContain(refused);
    }
    expect(fs.readFileSync(path.join(first.dir, "record.json"))).toEqual(firstRecord);
    expect(fs.existsSync(path.join(s.home, "planted"))).toBe(false);
    // The flag still opens what is around the home; sandbox.log says the home is read-only within it.
    expect(fs.readFileSync(path.join(s.outer, "around.txt"), "utf8")).toBe("around\n");
    const line = sandboxLine(d.dir);
    expect(line.writable).toContain(fs.realpathSync(s.outer));
    expect(line.readOnly).toEqual(expect.arrayContaining([fs.realpathSync(s.home), fs.realpathSync(d.dir)]));
  });

  it("keeps the verdict when an allowed path has come to name the run's folder by the time the sandbox goes up", async () => {
    const s = nestedHome();
    await sandboxed.dispatch(s.env, "first", ["--cwd", s.work], ["/bin/sh", "-c", "echo first"]);
    const forged = path.join(s.work, "forged.json");
    fs.writeFileSync(forged, JSON.stringify(await recordOf(s.env, "first")));
    const gate = path.join(s.work, "go");
    await sandboxed.dispatch(
      s.env,
      "holder",
      ["--cwd", s.work, "--max-parallel", "1"],
      ["/bin/sh", "-c", `while [ ! -e '${gate}' ]; do sleep 0.05; done`],
    );
    const link = path.join(tempDir("catherd-link-"), "allowed");
    fs.symlinkSync(tempDir("catherd-elsewhere-"), link);
    const queued = await sandboxed.dispatch(
      s.env,
      "forger",
      ["--cwd", s.work, "--queue", "--max-parallel", "1", "--sandbox", "files", "--allow-write", link],
      ["/bin/sh", "-c", `cp '${forged}' "$CATHERD_DISPATCH_DIR/record.json" || echo refused; exit 3`],
    );
    // Admitted while the link led elsewhere; raised once it leads to the run's folder, every dispatch's.
    fs.unlinkSync(link);
    fs.symlinkSync(path.join(s.home, "runs", "default"), link);
    fs.writeFileSync(gate, "");
    const record = await recordOf(s.env, "forger");
    expect(record.status).toBe("failed");
    expect((record.error as { message: string }).message).toMatch(/^exit code 3/);
    expect((await runCli(["wait", "forger", "--timeout", "60s"], { env: s.env })).code).not.toBe(0);
    expect(fs.readFileSync(path.join(queued.dir, "events.jsonl"), "utf8")).toContain("refused");
    expect(sandboxLine(queued.dir).writable).not.toContain(fs.realpathSync(link));
    await waitFor("the forger's supervisor to end", () => {
      const pid = readJson(path.join(queued.dir, "supervisor.json")).pid as number;
      return isAlive(pid) ? undefined : true;
    });
  });

  it("refuses an --allow-write into the home, spelled through a symlink, before anything is written", async () => {
    const s = nestedHome();
    await sandboxed.dispatch(s.env, "first", ["--cwd", s.work], ["/bin/sh", "-c", "echo first"]);
    await recordOf(s.env, "first");
    const link = path.join(tempDir("catherd-link-"), "to-home");
    fs.symlinkSync(s.home, link);
    const result = await runCli(
      [
        "dispatch",
        "--backend",
        "exec",
        "--name",
        "refused",
        "--json",
        "--sandbox",
        "files",
        "--allow-write",
        `${link}/runs/default/`,
        "--",
        "/bin/true",
      ],
      { env: s.env },
    );
    expect(result.code).toBe(2);
    const error = (JSON.parse(result.stdout) as { error: { code: string; message: string; fix: string } })
      .error;
    expect(error.code).toBe("E_INPUT_INVALID");
    expect(error.message).toContain(`is in the catherd home ${s.home}`);
    expect(error.fix).toContain(`give a folder outside ${s.home}`);
    expect(fs.existsSync(path.join(s.home, "runs", "default", "dispatches", "refused"))).toBe(false);
  });
});

describe("a read-only workplace in a worktree", () => {
  it("starts, and sees its worktree read-only (the README's example)", async () => {
    const s = nestedHome();
    const repo = makeRepo(tempDir("catherd-repo-"), { "a.txt": "from the repository\n" });
    const d = await sandboxed.dispatch(
      s.env,
      "reader",
      ["--cwd", repo, "--worktree", "--access", "read-only", "--sandbox", "files"],
      ["/bin/sh", "-c", "pwd; cat a.txt; echo b > b.txt || echo write-refused"],
    );
    const record = await recordOf(s.env, "reader");
    expect(record.status).toBe("ok");
    const worktree = (readJson(path.join(d.dir, "spec.json")).worktree as { path: string }).path;
    const events = fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8");
    expect(events).toContain(worktree);
    expect(events).toContain("from the repository");
    expect(events).toContain("write-refused");
    expect(fs.existsSync(path.join(worktree, "b.txt"))).toBe(false);
  });
});
