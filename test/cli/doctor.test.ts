import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { ROOT, tempDir } from "../helpers/folders.js";

/** A stand-in CLI: a shell script that prints `output` for --version (and exits `code`). */
function fakeCli(output: string, code = 0): string {
  const bin = path.join(tempDir(), "fake-cli");
  fs.writeFileSync(bin, `#!/bin/sh\necho '${output}'\nexit ${code}\n`, { mode: 0o755 });
  return bin;
}

describe("catherd doctor", () => {
  it("finds a CLI through its CATHERD_<B>_BIN variable and reports its version, ready", async () => {
    const bin = fakeCli("codex-cli 0.171.0");
    const { env } = isolatedHome();
    const result = await runCli(["doctor", "codex", "--json"], { env: { ...env, CATHERD_CODEX_BIN: bin } });
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { backends: unknown }).backends).toEqual([
      {
        backend: "codex",
        found: true,
        path: bin,
        via: "CATHERD_CODEX_BIN",
        version: "0.171.0",
        minVersion: "0.171.0",
        ready: true,
        problem: null,
        fix: null,
        // The script answers --version and nothing else: --steerable's app-server never answers.
        steerable: {
          ok: false,
          detail: "exited (exit code 0) before it answered",
          fix: expect.stringContaining("plain dispatches are unaffected"),
        },
      },
    ]);
  });

  it("probes the session protocol --steerable uses: codex's app-server and gemini's ACP answer initialize, or say why not", async () => {
    const { env } = isolatedHome();
    const steerable = async (bin: string) => {
      const result = await runCli(["doctor", "codex", "--json"], { env: { ...env, CATHERD_CODEX_BIN: bin } });
      expect(result.code).toBe(0);
      return (JSON.parse(result.stdout) as { backends: { steerable: unknown }[] }).backends[0]?.steerable;
    };
    const fake = path.join(ROOT, "test/fixtures/fake-codex-app-server.mjs");
    expect(await steerable(fake)).toEqual({
      ok: true,
      detail: "codex app-server answered initialize",
      fix: null,
    });
    const refusing = path.join(tempDir(), "codex");
    const answer = JSON.stringify({ id: "catherd-probe", error: { code: -32600, message: "Not today" } });
    fs.writeFileSync(
      refusing,
      `#!/bin/sh\nif [ "$1" = --version ]; then echo 'codex-cli 0.171.0'; exit 0; fi\nread line\necho '${answer}'\nsleep 30\n`,
      { mode: 0o755 },
    );
    expect(await steerable(refusing)).toMatchObject({
      ok: false,
      detail: "codex app-server refused initialize: Not today",
    });
    const gemini = await runCli(["doctor", "gemini", "--json"], {
      env: { ...env, CATHERD_GEMINI_BIN: path.join(ROOT, "test/fixtures/fake-gemini-acp.mjs") },
    });
    expect(
      (JSON.parse(gemini.stdout) as { backends: { steerable: unknown }[] }).backends[0]?.steerable,
    ).toEqual({
      ok: true,
      detail: "gemini --acp answered initialize",
      fix: null,
    });
    const text = await runCli(["doctor", "codex"], { env: { ...env, CATHERD_CODEX_BIN: refusing } });
    expect(text.stdout).toContain(
      "--steerable: cannot start (codex app-server refused initialize: Not today)",
    );
  });

  it("exits 3 with the install command when a named backend is missing", async () => {
    const { env } = isolatedHome();
    const result = await runCli(["doctor", "gemini"], {
      env: { ...env, PATH: tempDir(), CATHERD_GEMINI_BIN: "", NO_COLOR: "1" },
    });
    expect(result.code).toBe(3);
    expect(result.stdout).toContain("missing gemini");
    expect(result.stdout).toContain("fix: npm install -g @google/gemini-cli");
  });

  it("shows a CLI older than catherd reads as too old, with both versions and the install command", async () => {
    const { env } = isolatedHome();
    const bin = fakeCli("2.0.3 (Claude Code)");
    const result = await runCli(["doctor", "claude-code"], {
      env: { ...env, CATHERD_CLAUDE_BIN: bin, NO_COLOR: "1" },
    });
    expect(result.code).toBe(3);
    expect(result.stdout).toContain("too old claude-code 2.0.3");
    expect(result.stdout).toContain("is version 2.0.3; catherd reads the stream format of 2.1.197 and later");
    expect(result.stdout).toContain("fix: npm install -g @anthropic-ai/claude-code@latest");
  });

  it("shows a CLI whose --version fails as broken, in its own words", async () => {
    const { env } = isolatedHome();
    const bin = fakeCli('Error: Cannot find module "undici"', 1);
    const result = await runCli(["doctor", "opencode", "--json"], {
      env: { ...env, CATHERD_OPENCODE_BIN: bin },
    });
    expect(result.code).toBe(3);
    const [check] = (JSON.parse(result.stdout) as { backends: Record<string, unknown>[] }).backends;
    expect(check).toMatchObject({
      ready: false,
      version: null,
      problem: {
        code: "E_BACKEND_BROKEN",
        message: expect.stringContaining(
          '--version failed (exit code 1): Error: Cannot find module "undici"',
        ),
      },
    });
  });

  it("reports every agent backend without failing when none is named", async () => {
    const { env } = isolatedHome();
    const result = await runCli(["doctor", "--json"], { env: { ...env, PATH: tempDir() } });
    expect(result.code).toBe(0);
    const names = (JSON.parse(result.stdout) as { backends: { backend: string }[] }).backends.map(
      (b) => b.backend,
    );
    expect(names.sort()).toEqual(["claude-code", "codex", "gemini", "opencode"]);
  });

  it("says whether the sandbox can run here, and what to install where it cannot", async () => {
    const { env } = isolatedHome();
    const here = await runCli(["doctor", "exec", "--json"], { env });
    const sandbox = (
      JSON.parse(here.stdout) as { fence: { checks: { what: string; ok: boolean }[]; modes: string[] } }
    ).fence;
    expect(sandbox.checks.map((c) => c.what)).toEqual(["bubblewrap", "user namespaces", "socat"]);
    // CI installs bubblewrap and socat, and its kernel gives user namespaces.
    expect(sandbox.modes).toEqual(["files", "files+net"]);
    const nowhere = await runCli(["doctor", "exec"], { env: { ...env, PATH: tempDir(), NO_COLOR: "1" } });
    expect(nowhere.stdout).toContain("missing bubblewrap       bwrap is not on PATH");
    expect(nowhere.stdout).toContain("fix: install bubblewrap (Debian: apt-get install bubblewrap)");
    expect(nowhere.stdout).toContain("the sandbox cannot run here");
  });

  it("refuses an unknown backend name as a usage error", async () => {
    const result = await runCli(["doctor", "cursor"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("E_INPUT_INVALID");
  });
});
