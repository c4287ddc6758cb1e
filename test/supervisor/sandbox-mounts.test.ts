import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { isWithin, type SandboxPolicy } from "../../src/domain/sandbox/sandbox.js";
import { sandboxMounts } from "../../supervisor/sandbox/sandbox-mounts.js";
import { tempDir } from "../helpers/folders.js";

// The sandbox's mounts (specs/sandbox.md, "Files") read as bubblewrap applies them: whatever --allow-write
// names and however it is spelled, catherd's own files end read-only or hidden.

type Seen = "write" | "read" | "hidden";

/** bubblewrap's options as mounts, each with its destination: how many arguments each option takes. */
const ARITY: Record<string, number> = {
  "--bind": 2,
  "--ro-bind": 2,
  "--tmpfs": 1,
  "--remount-ro": 1,
  "--dev": 1,
};

/** What the agent sees at `place` after bubblewrap applied `args` in order: the last mount over it decides. */
function seenAt(args: readonly string[], place: string): Seen {
  const mounts: { at: string; seen: Seen | "tmpfs" }[] = [];
  for (let i = 0; i < args.length; i += 1 + (ARITY[args[i] as string] ?? 0)) {
    const option = args[i] as string;
    const at = args[i + (ARITY[option] ?? 0)] as string;
    if (option === "--bind") mounts.push({ at, seen: "write" });
    if (option === "--ro-bind") mounts.push({ at, seen: args[i + 1] === "/dev/null" ? "hidden" : "read" });
    if (option === "--tmpfs") mounts.push({ at, seen: "tmpfs" });
    const remounted = option === "--remount-ro" ? mounts.findLast((m) => m.at === at) : undefined;
    if (remounted !== undefined && remounted.seen === "write") remounted.seen = "read";
  }
  const over = mounts.findLast((m) => isWithin(place, m.at));
  if (over === undefined) return "read";
  // An empty folder: itself shown (read-only once remounted), nothing below it.
  if (over.seen === "tmpfs") return over.at === place ? "read" : "hidden";
  return over.seen;
}

function places() {
  const outer = fs.realpathSync(tempDir("catherd-outer-"));
  const home = path.join(outer, "home");
  const run = path.join(home, "runs", "default");
  const dir = path.join(run, "dispatches", "n", "D1");
  const other = path.join(run, "dispatches", "m", "D2");
  const worktree = path.join(run, "worktrees", "D1");
  for (const folder of [
    path.join(dir, "tmp"),
    other,
    worktree,
    path.join(run, "spend"),
    path.join(home, ".compile-cache"),
  ])
    fs.mkdirSync(folder, { recursive: true });
  const links = tempDir("catherd-links-");
  fs.symlinkSync(home, path.join(links, "home"));
  fs.symlinkSync(outer, path.join(links, "outer"));
  return { outer, home, run, dir, other, worktree, links, work: fs.realpathSync(tempDir("catherd-work-")) };
}

function mountsFor(
  s: ReturnType<typeof places>,
  allowWrite: string[],
  extra: { worktree?: boolean; read?: boolean } = {},
) {
  const policy: SandboxPolicy = {
    mode: "files",
    allowWrite,
    denyRead: [],
    allowNet: [],
    workplace: extra.read === true ? "read" : "write",
  };
  return sandboxMounts({
    backend: "exec",
    policy,
    dir: s.dir,
    cwd: extra.worktree === true ? s.worktree : s.work,
    worktree: extra.worktree === true ? s.worktree : null,
    tmp: path.join(s.dir, "tmp"),
    lockReports: path.join(s.dir, "locks"),
    home: s.home,
    homes: [],
    stateElsewhere: [],
    stateToMake: [],
    sockets: [],
  });
}

describe("--allow-write onto catherd's own files, however spelled", () => {
  const s = places();
  it.each([
    ["the run's folder", s.run],
    ["the run's dispatches", path.join(s.run, "dispatches")],
    ["its own dispatch folder", s.dir],
    ["another dispatch's folder", s.other],
    ["the home's runs", path.join(s.home, "runs")],
    ["the home", s.home],
    ["the home with a trailing slash", `${s.home}/`],
    ["the home through a symlink", path.join(s.links, "home")],
    ["the run through a symlink and `..`", path.join(s.links, "home", "runs", "default", "worktrees", "..")],
    ["a parent of the home", s.outer],
    ["a parent of the home through a symlink", path.join(s.links, "outer")],
    ["the root's child that holds it all", `/${s.outer.split("/")[1]}`],
  ])("keeps the verdicts out of reach under %s", (_what, asked) => {
    const mounts = mountsFor(s, [asked]);
    const seen = (place: string) => seenAt(mounts.args, place);
    expect(seen(path.join(s.dir, "record.json"))).toBe("read");
    expect(seen(path.join(s.dir, "exit.json"))).toBe("read");
    expect(seen(path.join(s.other, "record.json"))).toBe("hidden");
    expect(seen(path.join(s.run, "spend", "D1.json"))).toBe("hidden");
    expect(seen(path.join(s.run, "run.json"))).toBe("hidden");
    expect(seen(path.join(s.home, ".compile-cache", "x"))).toBe("read");
    expect(seen(path.join(s.dir, "tmp", "scratch"))).toBe("write");
    expect(seen(path.join(s.home, "locks", "heavy"))).toBe("write");
    expect(seen(path.join(s.work, "out.txt"))).toBe("write");
    // sandbox.log's `writable` names nothing of the home's but the slots and the scratch.
    for (const place of mounts.writable.filter((w) => isWithin(w, s.home)))
      expect([path.join(s.home, "locks"), path.join(s.dir, "tmp"), path.join(s.dir, "locks")]).toContain(
        place,
      );
    expect(mounts.readOnly).toEqual(expect.arrayContaining([s.home, s.dir]));
  });

  it("leaves a parent of the home writable around it", () => {
    const mounts = mountsFor(s, [path.join(s.links, "outer")]);
    expect(mounts.writable).toContain(s.outer);
    expect(seenAt(mounts.args, path.join(s.outer, "beside.txt"))).toBe("write");
    expect(seenAt(mounts.args, path.join(s.home, "planted"))).toBe("read");
  });
});

describe("a workplace in its worktree", () => {
  const s = places();
  it.each([
    ["read-only", true, "read"],
    ["writable", false, "write"],
  ] as const)("shows it %s, and no other dispatch's", (_what, read, expected) => {
    const mounts = mountsFor(s, [], { worktree: true, read });
    expect(seenAt(mounts.args, path.join(s.worktree, "a.txt"))).toBe(expected);
    expect(seenAt(mounts.args, path.join(s.run, "worktrees", "D2", "a.txt"))).toBe("hidden");
    expect(seenAt(mounts.args, path.join(s.dir, "record.json"))).toBe("read");
  });
});
