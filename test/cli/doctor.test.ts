import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/folders.js";

function fakeCli(output: string): string {
  const bin = path.join(tempDir(), "fake-cli");
  fs.writeFileSync(bin, `#!/bin/sh\necho '${output}'\n`, { mode: 0o755 });
  return bin;
}

describe("catherd doctor", () => {
  it("finds a CLI through its CATHERD_<B>_BIN variable and reports its version", async () => {
    const bin = fakeCli("codex-cli 0.171.0");
    const result = await runCli(["doctor", "codex", "--json"], {
      env: { ...process.env, CATHERD_CODEX_BIN: bin },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      backends: [
        {
          backend: "codex",
          found: true,
          path: bin,
          via: "CATHERD_CODEX_BIN",
          version: "codex-cli 0.171.0",
          fix: null,
        },
      ],
    });
  });

  it("exits 3 with the install command when a named backend is missing", async () => {
    const env = { ...process.env, PATH: tempDir(), CATHERD_GEMINI_BIN: "" };
    const result = await runCli(["doctor", "gemini"], { env: { ...env, NO_COLOR: "1" } });
    expect(result.code).toBe(3);
    expect(result.stdout).toContain("missing gemini");
    expect(result.stdout).toContain("fix: npm install -g @google/gemini-cli");
  });

  it("reports every agent backend without failing when none is named", async () => {
    const result = await runCli(["doctor", "--json"], { env: { ...process.env, PATH: tempDir() } });
    expect(result.code).toBe(0);
    const names = (JSON.parse(result.stdout) as { backends: { backend: string }[] }).backends.map(
      (b) => b.backend,
    );
    expect(names.sort()).toEqual(["claude-code", "codex", "gemini", "opencode"]);
  });

  it("refuses an unknown backend name as a usage error", async () => {
    const result = await runCli(["doctor", "cursor"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("E_INPUT_INVALID");
  });
});
