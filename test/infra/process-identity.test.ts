import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { inspectDispatch } from "../../src/dispatch/read/inspect.js";
import { supervisorFileSchema } from "../../src/domain/schemas.js";
import { isSameProcess, signalIdentified, startTimeOf } from "../../src/infra/process-identity.js";
import { tempDir } from "../helpers/folders.js";

// Identity is pid + start time. A start time that could not be read (null) means "alive, cannot verify":
// alive while the pid is, never signalled.

describe.runIf(process.platform === "linux")("process identity", () => {
  it("matches a live process only with its own start time", () => {
    const mine = startTimeOf(process.pid) as string;
    expect(isSameProcess(process.pid, mine)).toBe(true);
    expect(isSameProcess(process.pid, `${mine}1`)).toBe(false);
  });

  it("counts a process named without a start time alive while its pid is, and never signals it", async () => {
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    const pid = child.pid as number;
    const ended = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_c, s) => resolve(s)));
    try {
      expect(isSameProcess(pid, null)).toBe(true);
      expect(signalIdentified(pid, null, "SIGTERM")).toBe(false);
      // Still running: the refusal above really sent nothing.
      expect(isSameProcess(pid, startTimeOf(pid))).toBe(true);
    } finally {
      child.kill("SIGKILL");
    }
    expect(await ended).toBe("SIGKILL");
    expect(isSameProcess(pid, null)).toBe(false);
  });
});

describe.runIf(process.platform === "linux")("a reader, for a supervisor named without a start time", () => {
  function folderWithSupervisor(pid: number): string {
    const dir = tempDir();
    const supervisor = { schema: 1, pid, startTime: null, startedAt: new Date().toISOString() };
    expect(supervisorFileSchema.safeParse(supervisor).success).toBe(true);
    fs.writeFileSync(path.join(dir, "spec.json"), JSON.stringify({ cmd: "true" }));
    fs.writeFileSync(path.join(dir, "supervisor.json"), JSON.stringify(supervisor));
    return dir;
  }

  it("sees it running while its pid lives, and lost once the pid is gone", async () => {
    const running = folderWithSupervisor(process.pid);
    expect(inspectDispatch(running).state).toBe("running");
    const child = spawn("true", { stdio: "ignore" });
    await new Promise((resolve) => child.once("exit", resolve));
    const gone = folderWithSupervisor(child.pid as number);
    expect(inspectDispatch(gone).state).toBe("lost");
    for (const dir of [running, gone]) fs.rmSync(dir, { recursive: true, force: true });
  });
});
