import { describe, expect, it } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import { readinessThere } from "../../src/dispatch/request/readiness.js";
import type { CliThere } from "../../src/engines/engine.js";

// A CLI as the host of a placement found it, judged as this host's own readiness judges it (specs/
// placement.md, "Readiness on the host"): in the host's words, with a fix that names the host.

const codex = backendFor("codex");
const at = (version: CliThere["version"]): CliThere => ({
  id: "codex",
  path: "/opt/bin/codex",
  via: "PATH",
  version,
  login: null,
});

describe("judging a CLI on the host", () => {
  it.each<[string, CliThere, string | null, RegExp | null]>([
    ["ready at its minimum", at({ words: "codex-cli 0.171.0", code: 0 }), null, null],
    ["ready, newer", at({ words: "codex-cli 0.200.1", code: 0 }), null, null],
    [
      "missing",
      { id: "codex", path: null, via: null, version: null, login: null },
      "E_BACKEND_MISSING",
      /^codex: codex is not on box: not at this host's path there, nor on its login shell's PATH$/,
    ],
    [
      "failing",
      at({ words: "Error: Cannot find module 'x'", code: 1 }),
      "E_BACKEND_BROKEN",
      /^codex: \/opt\/bin\/codex --version on box failed \(exit code 1\): Error: Cannot find module 'x'$/,
    ],
    [
      "silent",
      at({ words: "", code: null }),
      "E_BACKEND_BROKEN",
      /^codex: \/opt\/bin\/codex --version on box did not answer in time$/,
    ],
    [
      "too old",
      at({ words: "codex-cli 0.100.0", code: 0 }),
      "E_BACKEND_TOO_OLD",
      /^codex: \/opt\/bin\/codex on box is version 0\.100\.0; catherd reads the stream format of 0\.171\.0 and later$/,
    ],
  ])("%s", (_title, there, code, message) => {
    const judged = readinessThere(codex, there, "box");
    expect(judged.problem?.code ?? null).toBe(code);
    if (message !== null) {
      expect(judged.problem?.message).toMatch(message);
      expect(judged.problem?.fix).toMatch(/ on box\b.*--placement local/);
    }
  });
});
