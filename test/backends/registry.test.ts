import { describe, expect, it } from "vitest";
import { allBackends, backendFor, backendNamed } from "../../src/backends/backend-registry.js";
import { BACKEND_IDS } from "../../src/domain/vocab.js";

describe("backend registry", () => {
  it.each(BACKEND_IDS)("has a backend module for %s", (id) => {
    expect(backendFor(id).id).toBe(id);
  });

  it("lists every backend once, each with its own override variable", () => {
    const backends = allBackends();
    expect(backends.map((b) => b.id).sort()).toEqual([...BACKEND_IDS].sort());
    expect(new Set(backends.map((b) => b.binEnv)).size).toBe(backends.length);
  });

  it("labels each backend within status's 8-column BACKEND cell, and says where its command comes from", () => {
    for (const backend of allBackends()) expect(backend.label.length).toBeLessThanOrEqual(8);
    expect(backendFor("claude-code").label).toBe("claude");
    expect(
      allBackends()
        .filter((b) => b.command === "args")
        .map((b) => b.id),
    ).toEqual(["exec"]);
    expect(
      allBackends()
        .filter((b) => b.command === "cli")
        .every((b) => b.defaultBin !== ""),
    ).toBe(true);
  });

  it("finds a backend by the name a user typed, or none", () => {
    expect(backendNamed("gemini")?.id).toBe("gemini");
    expect(backendNamed("gpt")).toBeNull();
    expect(backendNamed("")).toBeNull();
  });

  it("has the agent CLIs speak event streams, read by their parse, and only exec print plain text", () => {
    expect(allBackends().map((b) => [b.id, b.plainText])).toEqual(
      allBackends().map((b) => [b.id, b.id === "exec"]),
    );
  });
});
