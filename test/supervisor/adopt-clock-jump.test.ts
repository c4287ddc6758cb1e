import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hostIdentity } from "../../src/infra/host-identity.js";
import { dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { readJson, reapAll } from "../helpers/folders.js";
import { isAlive, killPid, waitForPause } from "../helpers/processes.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// An adopter whose wall clock is hours off the one that started the agent (specs/supervisor.md,
// "Clocks"): it counts the wall from the agent's start on the boot's monotonic clock, so it neither ends
// the agent at once nor postpones the wall, and its exit.json never ends before it starts. The first
// supervisor is frozen right after proc.json and SIGKILLed; a `status` whose environment shifts the wall
// clock of the supervisor it starts (CATHERD_TEST_ONLY_WALL_SHIFT_MS) adopts the agent.

const HOUR = 3_600_000;
const WALL_MS = 10_000;
/**
 * How long the agent runs unwatched before the reader comes: an adopter that counted the wall from its
 * own start would stop it that much late.
 */
const ORPHANED_MS = 4500;
/** From the wall (or the adoption, if later) to exit.json: a poll, SIGTERM, the exit, the writes. */
const STOP_SLACK_MS = 4000;
const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

/** Dispatches an agent that would sleep for ten minutes, its supervisor frozen once proc.json is written. */
async function dispatchAndOrphan(env: NodeJS.ProcessEnv, name: string) {
  const result = await runCli(
    [
      "dispatch",
      "--backend",
      "exec",
      "--json",
      "--name",
      name,
      "--wall",
      `${WALL_MS}ms`,
      "--idle",
      "10m",
      "--kill-grace",
      "300ms",
      "--",
      "sleep",
      "600",
    ],
    { env: { ...env, CATHERD_TEST_ONLY_PAUSE_AT: "watching" }, timeoutMs: 60_000 },
  );
  expect(result.code, result.stderr).toBe(0);
  const d = dispatchedOf(result);
  dispatched.push(d.dispatchId);
  await waitForPause(d.dir, "watching", 30_000);
  killPid(d.supervisorPid);
  await waitFor(`supervisor ${d.supervisorPid} gone`, () => (isAlive(d.supervisorPid) ? undefined : true));
  return d;
}

describe("an adopter whose wall clock jumped", () => {
  it.runIf(hostIdentity().bootId !== null).each([
    ["two hours ahead", 2 * HOUR],
    ["two hours behind", -2 * HOUR],
  ])(
    "with its wall clock %s ends the agent at its wall, counted from the agent's start",
    {
      timeout: 120_000,
    },
    async (_, shift) => {
      const { env } = isolatedHome();
      const d = await dispatchAndOrphan(env, shift > 0 ? "ahead" : "behind");
      const proc = readJson(path.join(d.dir, "proc.json")) as { startedAt: string };
      const agentStart = Date.parse(proc.startedAt);
      await waitFor("the agent running unwatched", () =>
        Date.now() - agentStart >= ORPHANED_MS ? true : undefined,
      );
      const status = await runCli(["status", "--json"], {
        env: { ...env, CATHERD_TEST_ONLY_WALL_SHIFT_MS: String(shift) },
        timeoutMs: 60_000,
      });
      expect(status.code, status.stderr).toBe(0);
      expect(readJson(path.join(d.dir, "supervisor.json"))).toMatchObject({ adoptions: 1 });

      const exit = await waitForJson<{
        reason: string;
        startedAt: string;
        endedAt: string;
        durationMs: number;
      }>(path.join(d.dir, "exit.json"), 60_000);
      // When the adopter took over and stopped the agent, by the machine's clock (the files' mtimes): not
      // before the wall (ahead: not at once), and no later than the wall — or the adoption, if it came
      // after — allows (behind: not postponed, neither by the hours nor by the time it ran unwatched).
      const mtime = (file: string) => fs.statSync(path.join(d.dir, file)).mtimeMs - agentStart;
      const latest = Math.max(WALL_MS, mtime("supervisor.json")) + STOP_SLACK_MS;
      const stoppedAfterMs = mtime("exit.json");
      expect(exit.reason).toBe("wall-timeout");
      expect(stoppedAfterMs).toBeGreaterThanOrEqual(WALL_MS);
      expect(stoppedAfterMs).toBeLessThan(latest);
      expect(exit.durationMs).toBeGreaterThanOrEqual(WALL_MS);
      expect(exit.durationMs).toBeLessThan(latest);
      // One timeline: the first supervisor's start, and the end the duration after it.
      expect(Date.parse(exit.endedAt) - Date.parse(exit.startedAt)).toBe(exit.durationMs);
      const log = fs.readFileSync(path.join(d.dir, "supervisor.log"), "utf8");
      expect(log).toContain('"event":"adopted"');
      expect(log).not.toContain("clock-fallback");
      const record = await waitForJson<{ status: string }>(path.join(d.dir, "record.json"), 30_000);
      expect(record.status).toBe("timeout");
    },
  );
});
