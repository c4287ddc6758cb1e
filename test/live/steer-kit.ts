import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "vitest";
import { type CliResult, runCli } from "../helpers/cli.js";
import { diagnostics, dispatcherEnv, type LiveDispatch } from "./harness.js";
import type { MockModelServer } from "./mock-model-server.js";

// What the live steering files share (specs/live-suite.md, "Steering a running …"): the built `catherd`
// run against a live dispatch's home, a `send` that fails with the dispatch's diagnostics, and the CLI's
// stream read as objects.

/** Runs a built `catherd` command against the dispatch's CATHERD_HOME, in its work folder. */
export function catherdOn(d: LiveDispatch, args: string[]): Promise<CliResult> {
  return runCli(args, {
    env: dispatcherEnv(path.join(d.root, "catherd-home")),
    cwd: path.join(d.root, "work"),
    timeoutMs: 60_000,
  });
}

/** `catherd send NAME text --json …`: the message's id; a failed send fails the test with diagnostics. */
export async function sendLive(
  d: LiveDispatch,
  server: MockModelServer,
  to: { name: string; text: string; more?: string[] },
): Promise<string> {
  const result = await catherdOn(d, ["send", to.name, to.text, "--json", ...(to.more ?? [])]);
  expect(result.code, `${result.stdout}${result.stderr}\n${diagnostics(d, server)}`).toBe(0);
  return (JSON.parse(result.stdout) as { sent: { id: string } }).sent.id;
}

/** The CLI's stream (events.jsonl), one object per line that parses. */
export function streamObjects(d: LiveDispatch): Record<string, unknown>[] {
  const file = path.join(d.dir, "events.jsonl");
  const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
  return text.split("\n").flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}
