import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { isDeadState, parseProcStat, readProcStat } from "../../src/infra/proc-stat.js";
import { startTimeOf } from "../../src/infra/process-identity.js";

// The one parser of /proc/<pid>/stat: lines as Linux writes them, including command names that hold
// spaces and parentheses (a process may name itself anything).

/** A stat line with the given command name and fields 3 onwards (proc(5)). */
function statLine(comm: string, state = "S", startTime = "4242"): string {
  // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
  // priority nice threads itrealvalue starttime vsize …
  const rest = [state, "100", "200", "200", "0", "-1", "4194560", "10", "0", "0", "0", "7", "3", "11", "13"];
  return `321 (${comm}) ${[...rest, "20", "0", "1", "0", startTime, "1024", "50"].join(" ")}\n`;
}

describe("parseProcStat", () => {
  it.each([
    ["a plain name", "node"],
    ["a name with spaces", "my agent"],
    ["a name with parentheses", "a) (b"],
    ["a name that ends like a field list", ") S 1 2 3"],
  ])("reads the fields after %s", (_title, comm) => {
    expect(parseProcStat(statLine(comm))).toEqual({
      state: "S",
      ppid: 100,
      pgid: 200,
      utime: 7,
      stime: 3,
      cutime: 11,
      cstime: 13,
      startTime: "4242",
    });
  });

  it.each([
    ["empty text", ""],
    ["no command name", "321 node S 1"],
    ["a line cut before the start time", "321 (node) S 100 200"],
    ["a start time that is not a number", statLine("node", "S", "soon")],
  ])("refuses %s", (_title, text) => {
    expect(parseProcStat(text)).toBeNull();
  });

  it("tells a zombie and a dying process from a live one", () => {
    const states = ["R", "S", "D", "T", "Z", "X"].map((s) =>
      isDeadState(parseProcStat(statLine("x", s)) as NonNullable<ReturnType<typeof parseProcStat>>),
    );
    expect(states).toEqual([false, false, false, false, true, true]);
  });
});

describe.runIf(process.platform === "linux")("readProcStat", () => {
  it("reads this process, by pid and as self, with the start time startTimeOf reports", () => {
    const self = readProcStat("self");
    const byPid = readProcStat(process.pid);
    expect(self?.startTime).toBe(byPid?.startTime);
    expect(byPid?.startTime).toBe(startTimeOf(process.pid));
    expect(byPid?.state).not.toBe("Z");
  });

  it("reads a child's parent and group, and null once it is reaped", async () => {
    const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
    const pid = child.pid as number;
    try {
      expect(readProcStat(pid)).toMatchObject({ ppid: process.pid, pgid: pid });
    } finally {
      const ended = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await ended;
    }
    expect(readProcStat(pid)).toBeNull();
    expect(readProcStat(0)).toBeNull();
    expect(readProcStat(-1)).toBeNull();
  });
});
