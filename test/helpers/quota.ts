import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "vitest";
import { runCli } from "./cli.js";
import { recordedLines } from "./fake-cli.js";
import { tempDir } from "./folders.js";

// What the quota's real-process tests share (test/quota/): a fake Claude Code that logs each start, and
// dispatching to it and waiting for its records through the built CLI.

export interface Start {
  name: string;
  at: number;
  config: string | null;
}

/**
 * A fake claude that appends `{name, at, config}` to `log` as it starts (its brief is its name), then
 * plays `scenario`'s recorded stream; a run whose `ratelimit` file exists plays the rate-limit recording,
 * its reset `resetMs` ahead, once (the file is removed).
 */
export function fakeClaude(
  log: string,
  resetMs = 6000,
): { bin: string; limitOnce: () => void; go: () => void } {
  const dir = tempDir();
  const limitFile = path.join(dir, "ratelimit");
  const goFile = path.join(dir, "go");
  const text = path.join(dir, "text.jsonl");
  const limited = path.join(dir, "limited.jsonl");
  fs.writeFileSync(text, `${recordedLines("claude", "text").join("\n")}\n`);
  fs.writeFileSync(limited, `${recordedLines("claude", "ratelimit-long").join("\n")}\n`);
  const bin = path.join(dir, "claude");
  fs.writeFileSync(
    bin,
    `#!${process.execPath}
const fs = require("node:fs");
if (process.argv[2] === "--version") { console.log("2.1.197 (Claude Code)"); process.exit(0); }
const brief = fs.readFileSync(0, "utf8").trim();
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ name: brief, at: Date.now(), config: process.env.CLAUDE_CONFIG_DIR ?? null }) + "\\n");
let limit = false;
try { fs.unlinkSync(${JSON.stringify(limitFile)}); limit = true; } catch {}
const reset = new Date(Math.ceil((Date.now() + ${resetMs}) / 1000) * 1000).toISOString().replace(".000Z", "Z");
const lines = fs.readFileSync(limit ? ${JSON.stringify(limited)} : ${JSON.stringify(text)}, "utf8");
const play = () => {
  process.stdout.write(lines.replace(/resets at \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ/g, "resets at " + reset));
  process.exit(limit ? 1 : 0);
};
// A limited run waits for its go, so that the test can queue work behind it first.
const look = () => (!limit || fs.existsSync(${JSON.stringify(goFile)}) ? play() : setTimeout(look, 50));
look();
`,
    { mode: 0o755 },
  );
  return {
    bin,
    limitOnce: () => fs.writeFileSync(limitFile, ""),
    go: () => fs.writeFileSync(goFile, ""),
  };
}

export function startsIn(log: string): Start[] {
  if (!fs.existsSync(log)) return [];
  return fs
    .readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Start);
}

/** Dispatches `name` to the fake claude (its brief is its name); its id goes into `dispatched`. */
export async function dispatchClaude(
  env: NodeJS.ProcessEnv,
  name: string,
  dispatched: string[],
  extra: string[] = [],
) {
  const result = await runCli(
    ["dispatch", "--backend", "claude-code", "--name", name, "--brief", name, "--json", ...extra],
    { env, timeoutMs: 60_000 },
  );
  if (result.code !== 0) throw new Error(`dispatch ${name} failed: ${result.stdout}${result.stderr}`);
  const d = JSON.parse(result.stdout).dispatched;
  dispatched.push(d.dispatchId);
  return d as { dir: string; queued: boolean; blockedBy: string | null };
}

/** Waits until every one of `names` is recorded (whatever its status). */
export async function waitAll(env: NodeJS.ProcessEnv, names: string[]) {
  const waited = await runCli(["wait", ...names, "--json", "--timeout", "90s"], { env, timeoutMs: 120_000 });
  const records = (JSON.parse(waited.stdout) as { records?: unknown[] }).records ?? [];
  expect(records.length, waited.stdout + waited.stderr).toBe(names.length);
}
