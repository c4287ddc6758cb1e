import { describe, expect, it } from "vitest";
import { allBackends, backendFor } from "../../src/backends/registry.js";
import { BACKEND_IDS } from "../../src/domain/vocab.js";

describe("backend registry", () => {
  it.each(BACKEND_IDS)("has a backend module for %s", (id) => {
    expect(backendFor(id)?.id).toBe(id);
  });

  it("lists every backend once, each with its own override variable", () => {
    const backends = allBackends();
    expect(backends.map((b) => b.id).sort()).toEqual([...BACKEND_IDS].sort());
    expect(new Set(backends.map((b) => b.binEnv)).size).toBe(backends.length);
  });

  it("has the agent CLIs speak event streams, read by their parse, and only exec print plain text", () => {
    expect(allBackends().map((b) => [b.id, b.plainText])).toEqual(
      allBackends().map((b) => [b.id, b.id === "exec"]),
    );
  });
});
