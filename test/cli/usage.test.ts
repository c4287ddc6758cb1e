import { describe, expect, it } from "vitest";
import { cancelCommand } from "../../src/cli/cancel-command.js";
import { cleanCommand } from "../../src/cli/clean-command.js";
import { type Command, usageOf } from "../../src/cli/command-io.js";
import { demoCommand } from "../../src/cli/demo-command.js";
import { dispatchCommand } from "../../src/cli/dispatch-command.js";
import { doctorCommand } from "../../src/cli/doctor-command.js";
import { guideCommand } from "../../src/cli/guide-command.js";
import { lockCommand } from "../../src/cli/lock-command.js";
import { logsCommand } from "../../src/cli/logs-command.js";
import { mcpCommand } from "../../src/cli/mcp-command.js";
import { resultCommand } from "../../src/cli/result-command.js";
import { showCommand } from "../../src/cli/show-command.js";
import { statusCommand } from "../../src/cli/status-command.js";
import { uiCommand } from "../../src/cli/ui-command.js";
import { waitCommand } from "../../src/cli/wait-command.js";
import { runCli } from "../helpers/cli.js";

// Each verb's --help is made from its option table: a flag is described once, for the command line and
// for the MCP tool alike, and every flag the command parses is in its help.

const COMMANDS = [
  cancelCommand,
  cleanCommand,
  demoCommand,
  dispatchCommand,
  doctorCommand,
  guideCommand,
  lockCommand,
  logsCommand,
  mcpCommand,
  resultCommand,
  showCommand,
  statusCommand,
  uiCommand,
  waitCommand,
] as Command<unknown>[];

describe("each verb's usage", () => {
  it.each(COMMANDS.map((c) => [c.name, c] as const))(
    "names every flag of %s, with --json",
    (_name, command) => {
      const usage = usageOf(command);
      expect(usage.startsWith(`usage: catherd ${command.name} `)).toBe(true);
      for (const flag of [...Object.keys(command.options), "json"]) {
        expect(usage, flag).toMatch(new RegExp(`^  --${flag}\\b`, "m"));
      }
      expect(usage.split("\n").every((line) => line.length <= 100)).toBe(true);
    },
  );

  it("states dispatch's defaults where they apply, not example values that read as defaults", () => {
    const usage = usageOf(dispatchCommand as Command<unknown>);
    const entry = (flag: string) => {
      const lines = usage.split("\n");
      const at = lines.findIndex((l) => l.startsWith(`  --${flag} `));
      const next = lines.findIndex((l, i) => i > at && l.startsWith("  --"));
      return lines.slice(at, next).join(" ").replace(/\s+/g, " ");
    };
    expect(entry("idle")).toContain("(default: 15m for an agent CLI, 10m for exec)");
    expect(entry("wall")).toContain("(default: 1h30m for an agent CLI, 2h for exec)");
    expect(entry("kill-grace")).toContain("(default: 10s)");
    expect(entry("run")).toContain("(default: $CATHERD_RUN, else default)");
    expect(entry("backend")).toContain("(codex, claude-code, opencode, gemini, exec)");
  });

  it("states the limits of dispatch's --repair, --keep-open and --on-question wait", () => {
    const usage = usageOf(dispatchCommand as Command<unknown>).replace(/\s+/g, " ");
    expect(usage).toMatch(/--repair <n> .*\(0: none; at most 5\) \(default: 1\)/);
    expect(usage).toMatch(/--keep-open <duration> [^-]*at most 1d\)/);
    expect(usage).toMatch(/--on-question <policy> .*`wait 10m` gives a person that long \(at most 1d\)/);
  });

  it("is what catherd <verb> --help prints, exit 0", async () => {
    const result = await runCli(["wait", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${usageOf(waitCommand as Command<unknown>)}\n`);
  });
});

describe("catherd --help", () => {
  it("parts each verb's usage from its summary by two spaces or a line, within 100 columns", async () => {
    const text = (await runCli(["--help"])).stdout;
    const { verbs } = JSON.parse((await runCli(["help", "--json"])).stdout) as {
      verbs: { verb: string; synopsis: string; summary: string }[];
    };
    expect(verbs.length).toBeGreaterThan(10);
    const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    for (const { verb, synopsis, summary } of verbs) {
      const usage = `catherd ${verb}${synopsis === "" ? "" : ` ${synopsis}`}`;
      const start = summary.split(" ").slice(0, 3).join(" ");
      expect(text, usage).toMatch(new RegExp(`^  ${literal(usage)}( {2,}|\\n {4,})${literal(start)}`, "m"));
    }
    expect(text.split("\n").filter((line) => line.length > 100)).toEqual([]);
  });
});
