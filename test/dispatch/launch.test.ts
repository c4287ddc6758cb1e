import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { launchSupervisor } from "../../src/dispatch/start/launch.js";
import { ROOT, tempDir } from "../helpers/folders.js";

// launchSupervisor with stand-in supervisor programs: what `dispatch` concludes from how its supervisor
// comes up. Each stand-in ends by itself at once, so nothing is left running.

/** A stand-in that names itself in supervisor.json (as the real one does) and exits straight away. */
const NAMES_ITSELF_AND_EXITS = `
import * as fs from "node:fs";
import * as path from "node:path";
import { readProcStat } from ${JSON.stringify(pathToFileURL(path.join(ROOT, "dist/src/infra/proc-stat.js")).href)};
// Started as every local supervisor is: in standby, its folder on its stdin (src/dispatch/start/standby.ts).
let dir = "";
for await (const chunk of process.stdin) dir += chunk;
dir = dir.trim();
const startTime = readProcStat("self").startTime;
const file = path.join(dir, "supervisor.json");
fs.writeFileSync(file + ".tmp", JSON.stringify({ schema: 1, pid: process.pid, startTime, startedAt: new Date().toISOString() }));
fs.renameSync(file + ".tmp", file);
`;

const EXITS_WITHOUT_A_WORD = `process.exit(3);`;

function standIn(source: string): string {
  const file = path.join(tempDir(), "stand-in.mjs");
  fs.writeFileSync(file, source);
  return file;
}

describe("launchSupervisor", () => {
  it("counts a supervisor that named itself and already finished as started, every time", async () => {
    const program = standIn(NAMES_ITSELF_AND_EXITS);
    for (let i = 0; i < 8; i++) {
      const dir = tempDir();
      const launched = await launchSupervisor(dir, { program });
      expect(launched.placement === "local" && launched.pid).toBe(
        JSON.parse(fs.readFileSync(path.join(dir, "supervisor.json"), "utf8")).pid,
      );
      expect(fs.existsSync(path.join(dir, "exit.json"))).toBe(false);
    }
  }, 30_000);

  it("records the dispatch lost and says why when the supervisor ends without naming itself", async () => {
    const dir = tempDir();
    await expect(launchSupervisor(dir, { program: standIn(EXITS_WITHOUT_A_WORD) })).rejects.toMatchObject({
      code: "E_SUPERVISOR_START",
      message: expect.stringContaining("exit code 3"),
    });
    const exit = JSON.parse(fs.readFileSync(path.join(dir, "exit.json"), "utf8"));
    expect(exit).toMatchObject({ reason: "lost", error: { code: "E_SUPERVISOR_START" } });
  }, 30_000);
});
