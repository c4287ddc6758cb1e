import * as path from "node:path";
import { afterEach, expect } from "vitest";
import type { Dispatched } from "../../src/cli/dispatch-command.js";
import { findByDispatchVariable } from "../../src/infra/sweep.js";
import { runCli } from "./cli.js";
import { ROOT, reapAll } from "./folders.js";
import { isAlive, reapDispatch } from "./processes.js";
import { waitFor } from "./wait.js";

// The steering tests' stand-in CLI and their clean-up (specs/steering.md): a dispatch of the fake that
// speaks Claude Code's stream-json protocol, and an afterEach that waits for every supervisor to end by
// itself, then fails the test on anything of a dispatch (or its notifier) left running.

export const FAKE_CLAUDE = path.join(ROOT, "test/fixtures/fake-claude-stream.mjs");

export interface SteeredDispatches {
  /** Dispatches `claude-code` on the fake with `--json`; refuses a dispatch that did not start. */
  dispatch(
    env: NodeJS.ProcessEnv,
    name: string,
    brief: string,
    extra?: string[],
  ): Promise<Dispatched["dispatched"]>;
  /** A dispatch to reap too (one the test dispatched itself, a follow-up, a chain's next attempt), and its supervisor to wait for. */
  track(dispatchId: string, supervisorPid?: number | null): void;
}

export function useSteeredDispatches(): SteeredDispatches {
  const dispatched: string[] = [];
  const supervisors: number[] = [];
  afterEach(async () => {
    await waitFor("the supervisors to exit", () =>
      supervisors.every((pid) => !isAlive(pid)) ? true : undefined,
    ).finally(() => supervisors.splice(0));
    const ids = dispatched.splice(0);
    // A notifier outlives the last line it logs by a moment: waited for, not killed.
    await waitFor("the notifiers to exit", () =>
      ids.every((id) => findByDispatchVariable(`${id}.notify`).length === 0) ? true : undefined,
    ).catch(() => undefined);
    const notifiers = ids.reduce((n, id) => n + reapDispatch(`${id}.notify`), 0);
    expect(reapAll(ids) + notifiers, "processes left running").toBe(0);
  });
  return {
    async dispatch(env, name, brief, extra = []) {
      const result = await runCli(
        ["dispatch", "--backend", "claude-code", "--name", name, "--brief", brief, "--json", ...extra],
        { env: { CATHERD_CLAUDE_BIN: FAKE_CLAUDE, ...env } },
      );
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const d = (JSON.parse(result.stdout) as Dispatched).dispatched;
      dispatched.push(d.dispatchId);
      if (d.supervisorPid !== null) supervisors.push(d.supervisorPid);
      return d;
    },
    track(dispatchId, supervisorPid = null) {
      dispatched.push(dispatchId);
      if (supervisorPid !== null) supervisors.push(supervisorPid);
    },
  };
}
