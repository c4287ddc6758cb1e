import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { StandbySupervisor } from "../../src/dispatch/start/standby.js";
import { StandbyReserve } from "../../src/dispatch/start/standby-reserve.js";
import { FAKE_AGENT, tempDir } from "../helpers/folders.js";
import { useInProcessSession } from "../helpers/mcp.js";
import { isAlive, standbysOf } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// The standby a long-lived dispatcher keeps ready (src/dispatch/start/standby-reserve.ts): its rules with
// fake standbys, then `catherd mcp` in this process handing its held standby real folders.

interface FakeStandby extends StandbySupervisor {
  dismissed: boolean;
}

function fakeStandby(home: string, n: number): FakeStandby {
  const outFile = path.join(home, `.standby-fake-${n}.out`);
  fs.writeFileSync(outFile, "");
  const fake: FakeStandby = {
    outFile,
    given: false,
    dismissed: false,
    ended: () => null,
    spawned: Promise.resolve(null),
    child: {
      stdin: {
        writable: true,
        destroy() {
          fake.dismissed = true;
          (this as { writable: boolean }).writable = false;
        },
      },
    } as unknown as StandbySupervisor["child"],
  };
  return fake;
}

function fakeReserve(keeps = true) {
  const started: FakeStandby[] = [];
  const reserve = new StandbyReserve({
    keeps,
    start: (home) => {
      const s = fakeStandby(home, started.length);
      started.push(s);
      return s;
    },
  });
  return { reserve, started };
}

describe("the standby reserve's rules", () => {
  it("starts one for the first dispatch, then holds a new one for the next when the first was given a folder", () => {
    const home = tempDir();
    const { reserve, started } = fakeReserve();
    const first = reserve.take(home);
    expect(started).toHaveLength(1);
    if (first !== null) first.given = true;
    reserve.refill(home, first);
    expect(started).toHaveLength(2);
    expect(reserve.take(home)).toBe(started[1]);
    expect(started).toHaveLength(2);
  });

  it("holds the same one again when its dispatch gave it no folder (refused, queued, placed elsewhere)", () => {
    const home = tempDir();
    const { reserve, started } = fakeReserve();
    const taken = reserve.take(home);
    reserve.refill(home, taken);
    expect(started).toHaveLength(1);
    expect(reserve.take(home)).toBe(taken);
  });

  it("keeps one when two dispatches hand theirs back, and dismisses the other", () => {
    const home = tempDir();
    const { reserve, started } = fakeReserve();
    const a = reserve.take(home);
    const b = reserve.take(home);
    expect(started).toHaveLength(2);
    reserve.refill(home, a);
    reserve.refill(home, b);
    expect(started.map((s) => s.dismissed)).toEqual([false, true]);
    expect(fs.existsSync(started[1]?.outFile ?? "")).toBe(false);
    expect(reserve.take(home)).toBe(a);
  });

  it("dismisses a held standby of another home, or one that ended, and starts a fresh one", () => {
    const [home, other] = [tempDir(), tempDir()];
    const { reserve, started } = fakeReserve();
    reserve.refill(home, reserve.take(home));
    expect(reserve.take(other)).toBe(started[1]);
    expect(started[0]?.dismissed).toBe(true);
    reserve.refill(other, started[1] ?? null);
    (started[1] as { ended: () => string | null }).ended = () => "exit code 1";
    expect(reserve.take(other)).toBe(started[2]);
  });

  it("once closed, dismisses what it holds and what it is handed, and starts none", () => {
    const home = tempDir();
    const { reserve, started } = fakeReserve();
    const taken = reserve.take(home);
    reserve.refill(home, taken);
    const again = reserve.take(home);
    const other = reserve.take(home);
    reserve.refill(home, again);
    reserve.close();
    expect(started[0]?.dismissed).toBe(true);
    reserve.refill(home, other);
    expect(started[1]?.dismissed).toBe(true);
    expect(reserve.take(home)).toBeNull();
    expect(started).toHaveLength(2);
  });
});

describe("a reserve that does not keep (the command line's, the promoter's, a use case's own)", () => {
  it("gives the dispatch the standby it primed, then dismisses an unused one and starts none", () => {
    const home = tempDir();
    const { reserve, started } = fakeReserve(false);
    reserve.prime(home);
    reserve.prime(home);
    expect(started).toHaveLength(1);
    const taken = reserve.take(home);
    expect(taken).toBe(started[0]);
    reserve.refill(home, taken);
    expect(started[0]?.dismissed).toBe(true);
    expect(started).toHaveLength(1);
  });

  it("leaves a standby given a folder alone, holds none after, and starts one when asked with none held", () => {
    const home = tempDir();
    const { reserve, started } = fakeReserve(false);
    const taken = reserve.take(home);
    expect(started).toHaveLength(1);
    if (taken !== null) taken.given = true;
    reserve.refill(home, taken);
    reserve.close();
    expect(started[0]?.dismissed).toBe(false);
    expect(started).toHaveLength(1);
  });
});

describe("catherd mcp's reserve", () => {
  const mcp = useInProcessSession();
  const scenario = () => {
    const file = path.join(tempDir(), "scenario.json");
    fs.writeFileSync(file, JSON.stringify({ steps: [{ out: "busy" }, { hang: true }] }));
    return file;
  };
  const dispatch = async (name: string) => {
    const answer = await mcp.session.call("dispatch", {
      backend: "exec",
      name,
      killGrace: "300ms",
      args: [process.execPath, FAKE_AGENT, scenario()],
    });
    expect(answer.isError, answer.text).toBe(false);
    const d = answer.data.dispatched as { dispatchId: string; dir: string; supervisorPid: number };
    mcp.dispatched.push(d.dispatchId);
    return d;
  };
  // A standby given a folder keeps its argv: the one still waiting is the one whose output file is there.
  const waiting = (home: string) =>
    standbysOf(home).filter((pid) => {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      return fs.existsSync(argv[argv.indexOf("--standby") + 1] ?? "");
    });
  const held = (home: string) =>
    waitFor("one standby held", () => {
      const pids = waiting(home);
      return pids.length === 1 ? pids[0] : undefined;
    });

  it("gives the next dispatch the standby it held, keeps it through a refused one, and ends it on close", async () => {
    const home = process.env.CATHERD_HOME as string;
    const first = await dispatch("first");
    const ready = await held(home);
    expect(ready).not.toBe(first.supervisorPid);
    const refused = await mcp.session.call("dispatch", { backend: "exec", idle: "soon", args: ["true"] });
    expect(refused.isError).toBe(true);
    expect(waiting(home)).toEqual([ready]);
    const second = await dispatch("second");
    expect(second.supervisorPid).toBe(ready);
    const next = await held(home);
    await mcp.session.close();
    await waitFor("the held standby gone, with its file", () =>
      !isAlive(next) && fs.readdirSync(home).every((n) => !n.startsWith(".standby-")) ? true : undefined,
    );
    for (const d of [first, second]) {
      fs.writeFileSync(path.join(d.dir, "cancel"), "test");
      expect((await waitForJson(path.join(d.dir, "record.json"), 20_000)).status).toBe("cancelled");
      await waitFor("its supervisor exited", () => (isAlive(d.supervisorPid) ? undefined : true));
    }
  }, 60_000);
});
