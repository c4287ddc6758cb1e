import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { dispatchFolders, isolatedHome, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/folders.js";

const aFile = path.join(tempDir(), "a-file");
fs.writeFileSync(aFile, "x");
const binaryBrief = path.join(tempDir(), "binary.bin");
fs.writeFileSync(binaryBrief, Buffer.from([0x89, 0x50, 0x00, 0xff, 0xfe]));
const hugeBrief = path.join(tempDir(), "huge.md");
fs.writeFileSync(hugeBrief, Buffer.alloc(50 * 1024 * 1024, 0x61));

const EXEC = ["--backend", "exec"];
const CMD = ["--", "true"];

const cases: {
  title: string;
  args: string[];
  code: string;
  exit: number;
  mentions: string;
  input?: string;
}[] = [
  { title: "a missing backend", args: [...CMD], code: "E_INPUT_INVALID", exit: 2, mentions: "--backend" },
  {
    title: "an unknown backend",
    args: ["--backend", "cursor", ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--backend",
  },
  {
    title: "a name with ..",
    args: [...EXEC, "--name", "a..b", ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--name",
  },
  {
    title: "a name with /",
    args: [...EXEC, "--name", "a/b", ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--name",
  },
  {
    title: "a name of 200 characters",
    args: [...EXEC, "--name", "n".repeat(200), ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--name",
  },
  {
    title: "a run of ..",
    args: [...EXEC, "--run", "..", ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--run",
  },
  {
    title: "an unknown flag",
    args: [...EXEC, "--frobnicate", ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "frobnicate",
  },
  {
    title: "a flag without its value",
    args: [...EXEC, "--name"],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--name",
  },
  {
    title: "a negative duration",
    args: [...EXEC, "--idle", "-5m", ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--idle",
  },
  {
    title: "an absurd duration",
    args: [...EXEC, "--wall", "9999h", ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--wall",
  },
  {
    title: "a duration without unit",
    args: [...EXEC, "--idle", "15", ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--idle",
  },
  {
    title: "a --cwd that is a file",
    args: [...EXEC, "--cwd", aFile, ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--cwd",
  },
  {
    title: "a --cwd that does not exist",
    args: [...EXEC, "--cwd", "/nonexistent/x", ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--cwd",
  },
  {
    title: "--env with a newline",
    args: [...EXEC, "--env", "A=1\n2", ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--env",
  },
  {
    title: "--env without =",
    args: [...EXEC, "--env", "NOPE", ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--env",
  },
  {
    title: "--owns outside the tree",
    args: [...EXEC, "--owns", "../x", ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--owns",
  },
  {
    title: "--max-parallel 0",
    args: [...EXEC, "--max-parallel", "0", ...CMD],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "--max-parallel",
  },
  {
    title: "an agent backend without a brief",
    args: ["--backend", "codex", "--bin", "/bin/true"],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "brief",
  },
  {
    title: "an empty brief",
    args: ["--backend", "codex", "--bin", "/bin/true", "--brief", ""],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "brief",
  },
  {
    title: "an empty brief on stdin",
    args: ["--backend", "codex", "--bin", "/bin/true"],
    input: "",
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "brief",
  },
  {
    title: "a binary brief",
    args: ["--backend", "codex", "--bin", "/bin/true", "--brief-file", binaryBrief],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "UTF-8",
  },
  {
    title: "a 50 MB brief",
    args: ["--backend", "codex", "--bin", "/bin/true", "--brief-file", hugeBrief],
    code: "E_INPUT_INVALID",
    exit: 2,
    mentions: "limit",
  },
  {
    title: "a missing CLI",
    args: ["--backend", "codex", "--bin", "/nonexistent/codex", "--brief", "hi"],
    code: "E_BACKEND_MISSING",
    exit: 3,
    mentions: "codex",
  },
  { title: "exec without a command", args: [...EXEC], code: "E_INPUT_INVALID", exit: 2, mentions: "command" },
];

describe("catherd dispatch refuses bad input before writing anything", () => {
  for (const c of cases) {
    it(`answers ${c.title} with ${c.code}, exit ${c.exit}, and a fix`, async () => {
      const { home, env } = isolatedHome();
      const text = await runCli(["dispatch", ...c.args], {
        env,
        ...(c.input === undefined ? {} : { input: c.input }),
      });
      expect(text.code).toBe(c.exit);
      expect(text.stderr).toMatch(new RegExp(`^error ${c.code}: .*\\nfix: .+\\n$`, "s"));
      expect(text.stderr).toContain(c.mentions);
      const json = await runCli(["dispatch", "--json", ...c.args], {
        env,
        ...(c.input === undefined ? {} : { input: c.input }),
      });
      expect(json.code).toBe(c.exit);
      expect(JSON.parse(json.stdout)).toMatchObject({
        error: { code: c.code, message: expect.any(String), fix: expect.any(String) },
      });
      expect(dispatchFolders(home)).toEqual([]);
    });
  }

  it("refuses CATHERD_BIN-style lookups that find nothing with E_BACKEND_MISSING naming the variable", async () => {
    const { env } = isolatedHome();
    const result = await runCli(["dispatch", "--backend", "codex", "--brief", "hi"], {
      env: { ...env, CATHERD_CODEX_BIN: "", PATH: "/nonexistent" },
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("CATHERD_CODEX_BIN");
  });
});
