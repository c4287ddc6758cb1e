import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { GATE_CLOSED_EXIT, startCommand } from "../../src/lock/run-command.js";
import { LockSignals } from "../../src/lock/signals.js";
import { tempDir } from "../helpers/folders.js";
import { isAlive } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait.js";

// The command's gate, in process: it runs only once the lock has named it, and not at all when naming it
// failed (or the lock died first, which closes the gate the same way).

let signals: LockSignals | null = null;
afterEach(() => {
  signals?.dispose();
  signals = null;
});

describe("the command's gate", () => {
  it("runs the command only after the lock has named its pid, the pid the command runs as", async () => {
    signals = new LockSignals();
    const dir = tempDir();
    const ran = path.join(dir, "ran");
    let named: { pid: number; ranYet: boolean } | null = null;
    const started = await startCommand("/bin/sh", ["-c", `echo $$ > '${ran}'`], signals, async (pid) => {
      // Time for a command that was not held back to have run; it must not have.
      await new Promise((resolve) => setTimeout(resolve, 300));
      named = { pid, ranYet: fs.existsSync(ran) };
    });
    expect(named).toEqual({ pid: started.pid, ranYet: false });
    expect(await started.ended).toBe(0);
    expect(Number(fs.readFileSync(ran, "utf8"))).toBe(started.pid);
  });

  it("runs nothing when naming the command fails: the gate closes and the gate exits 125", async () => {
    signals = new LockSignals();
    const ran = path.join(tempDir(), "ran");
    let pid = 0;
    await expect(
      startCommand("/bin/touch", [ran], signals, async (p) => {
        pid = p;
        throw new Error("the queue refused the write");
      }),
    ).rejects.toThrow("the queue refused the write");
    await waitFor("the gate to go", () => (isAlive(pid) ? undefined : true));
    expect(fs.existsSync(ran)).toBe(false);
    expect(GATE_CLOSED_EXIT).toBe(125);
  });

  it("exits with the command's own status, and 128 + n for a signal", async () => {
    signals = new LockSignals();
    const code = await startCommand("/bin/sh", ["-c", "exit 9"], signals, async () => {});
    expect(await code.ended).toBe(9);
    const killed = await startCommand("/bin/sh", ["-c", "kill -TERM $$"], signals, async () => {});
    expect(await killed.ended).toBe(143);
  });
});
