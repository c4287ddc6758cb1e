import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/folders.js";

// The layering of style.md, read from the import statements themselves.

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .flatMap((entry) =>
      entry.isFile() && entry.name.endsWith(".ts")
        ? [path.relative(ROOT, path.join(entry.parentPath, entry.name))]
        : [],
    );
}

function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), "utf8");
  const found: string[] = [];
  for (const m of text.matchAll(/(?:import|export)\s[^;]*?from\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g)) {
    found.push((m[1] ?? m[2]) as string);
  }
  return found;
}

/** Where an import lands, relative to the repository: "src/infra/x.js", "node:fs" or "zod". */
function target(file: string, spec: string): string {
  return spec.startsWith(".")
    ? path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, file)), spec))
    : spec;
}

function violations(dir: string, forbidden: (to: string) => boolean): string[] {
  return sourceFiles(dir).flatMap((file) =>
    importsOf(file)
      .map((spec) => target(file, spec))
      .filter(forbidden)
      .map((to) => `${file} imports ${to}`),
  );
}

/** The packages the shipped program may import: package.json's dependencies, never a devDependency. */
function runtimeDependencies(): string[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  return Object.keys(manifest.dependencies ?? {});
}

/** The package an import names ("zod" of "zod/v4", "@scope/x" of "@scope/x/y"), or null for ours and node's. */
function packageOf(to: string): string | null {
  if (to.startsWith("node:") || to.startsWith("src/") || to.startsWith("supervisor/")) return null;
  const parts = to.split("/");
  return to.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
}

describe("architecture", () => {
  it("ships only runtime dependencies: src/ and supervisor/ import no devDependency", () => {
    const allowed = new Set(runtimeDependencies());
    const imported = (to: string) => {
      const pkg = packageOf(to);
      return pkg !== null && !allowed.has(pkg);
    };
    expect([...violations("src", imported), ...violations("supervisor", imported)]).toEqual([]);
  });

  it("keeps src/domain pure: no node: modules and nothing of ours outside domain", () => {
    expect(
      violations(
        "src/domain",
        (to) => to.startsWith("node:") || (to.includes("/") && !to.startsWith("src/domain")),
      ),
    ).toEqual([]);
  });

  it("keeps backends off the world: no src/infra, no src/dispatch, no node: I/O", () => {
    expect(
      violations(
        "src/backends",
        (to) =>
          to.startsWith("node:") ||
          to.startsWith("src/infra") ||
          to.startsWith("src/dispatch") ||
          to.startsWith("src/cli"),
      ),
    ).toEqual([]);
  });

  it("never lets the supervisor import the CLI", () => {
    expect(violations("supervisor", (to) => to.startsWith("src/cli"))).toEqual([]);
  });

  it("keeps infra below dispatch and the CLI", () => {
    expect(
      violations(
        "src/infra",
        (to) => to.startsWith("src/dispatch") || to.startsWith("src/cli") || to.startsWith("supervisor"),
      ),
    ).toEqual([]);
  });

  it("keeps dispatch below the CLI", () => {
    expect(violations("src/dispatch", (to) => to.startsWith("src/cli"))).toEqual([]);
  });
});
