import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { afterEach, expect } from "vitest";
import type { Dispatched } from "../../src/cli/dispatch-command.js";
import { runCli } from "./cli.js";
import { ROOT, reapAll } from "./folders.js";
import { isAlive } from "./processes.js";
import { waitFor } from "./wait.js";

// Sandboxed dispatches (specs/sandbox.md) as real processes: `catherd dispatch --sandbox …` of the sandbox
// probe or any command, loopback servers for them to reach, and an afterEach that waits for every
// supervisor to end by itself, closes the servers, and fails the test for any process left running.

export const SANDBOX_PROBE = path.join(ROOT, "test/fixtures/sandbox-probe.mjs");

/** A loopback HTTP server that answers every request with `body`; `hits` counts them. */
export interface LoopbackServer {
  port: number;
  hits(): number;
}

export interface SandboxedDispatches {
  dispatch(
    env: NodeJS.ProcessEnv,
    name: string,
    flags: readonly string[],
    command: readonly string[],
  ): Promise<Dispatched["dispatched"]>;
  server(body: string, handler?: http.RequestListener): Promise<LoopbackServer>;
}

export function useSandboxedDispatches(): SandboxedDispatches {
  const dispatched: string[] = [];
  const supervisors: number[] = [];
  const servers: http.Server[] = [];
  afterEach(async () => {
    // Whatever happened — a supervisor that does not end is the test's failure, not a reason to leave its
    // processes running — the servers close and every process of its dispatches is reaped.
    try {
      await waitFor("the supervisors to exit", () =>
        supervisors.every((pid) => !isAlive(pid)) ? true : undefined,
      );
    } finally {
      supervisors.splice(0);
      for (const server of servers.splice(0)) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
      expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
    }
  });
  return {
    async dispatch(env, name, flags, command) {
      const result = await runCli(
        [
          "dispatch",
          "--backend",
          "exec",
          "--name",
          name,
          "--json",
          "--kill-grace",
          "500ms",
          ...flags,
          "--",
          ...command,
        ],
        { env },
      );
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const d = (JSON.parse(result.stdout) as Dispatched).dispatched;
      dispatched.push(d.dispatchId);
      if (d.supervisorPid !== null) supervisors.push(d.supervisorPid);
      return d;
    },
    async server(body, handler) {
      let hits = 0;
      const server = http.createServer((request, response) => {
        hits += 1;
        if (handler !== undefined) handler(request, response);
        else response.end(body);
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return { port: (server.address() as AddressInfo).port, hits: () => hits };
    },
  };
}

/** The record of a dispatch, once `catherd wait` returns. */
export async function recordOf(env: NodeJS.ProcessEnv, name: string): Promise<Record<string, unknown>> {
  const waited = await runCli(["wait", name, "--timeout", "60s", "--json"], { env, timeoutMs: 70_000 });
  expect(waited.stderr).toBe("");
  return (JSON.parse(waited.stdout) as { records: Record<string, unknown>[] }).records[0] as Record<
    string,
    unknown
  >;
}

/** The probe's reports, by attempt. */
export function probeReports(dir: string): Map<string, { ok: boolean; detail: string }> {
  const reports = new Map<string, { ok: boolean; detail: string }>();
  for (const line of fs.readFileSync(path.join(dir, "events.jsonl"), "utf8").split("\n")) {
    if (!line.startsWith("{")) continue;
    const report = JSON.parse(line) as { try: string; ok: boolean; detail: string };
    reports.set(report.try, { ok: report.ok, detail: report.detail });
  }
  return reports;
}

/** Every file under a folder, with its text, for a search of what must not be there. */
export function filesUnder(dir: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out.push({ file, text: fs.readFileSync(file, "latin1") });
  }
  return out;
}
