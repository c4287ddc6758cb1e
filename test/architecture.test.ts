import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/folders.js";

// The layering of the README's "Layout" and specs/dispatch.md's "The dispatch room", read from the
// import statements themselves.

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .flatMap((entry) =>
      entry.isFile() && entry.name.endsWith(".ts")
        ? [path.relative(ROOT, path.join(entry.parentPath, entry.name))]
        : [],
    );
}

/** What a module imports; with `runtimeOnly`, not its `import type` and `export type` statements (erased). */
function importsOf(file: string, { runtimeOnly = false } = {}): string[] {
  const source = fs.readFileSync(path.join(ROOT, file), "utf8");
  const text = runtimeOnly ? source.replace(/^(?:import|export) type [^;]*;/gm, "") : source;
  const found: string[] = [];
  // `import … from "x"`, `export … from "x"`, a bare `import "x"`, and `import("x")`.
  const imports = /(?:import|export)\s[^;]*?from\s+"([^"]+)"|import\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g;
  for (const m of text.matchAll(imports)) {
    found.push((m[1] ?? m[2] ?? m[3]) as string);
  }
  return found;
}

/** Where an import lands, relative to the repository: "src/infra/x.js", "node:fs" or "zod". */
function target(file: string, spec: string): string {
  return spec.startsWith(".")
    ? path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, file)), spec))
    : spec;
}

/** Every circle of run-time imports among our modules, each as the files along it (none is allowed). */
function importCircles(): string[][] {
  const files = [...sourceFiles("src"), ...sourceFiles("supervisor")];
  const edges = new Map(
    files.map((file) => [
      file,
      importsOf(file, { runtimeOnly: true })
        .filter((spec) => spec.startsWith("."))
        .map((spec) => target(file, spec).replace(/\.js$/, ".ts"))
        .filter((to) => files.includes(to)),
    ]),
  );
  const circles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const to of edges.get(file) ?? []) {
      if (state.get(to) === "open") circles.push([...stack.slice(stack.indexOf(to)), to]);
      else if (state.get(to) === undefined) visit(to);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of files) if (state.get(file) === undefined) visit(file);
  return circles;
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

/**
 * Each layer and the layers of ours it may import besides itself (README, "Layout"): cli → dispatch →
 * folder → backends, infra → domain; cli → lock → folder, infra, domain; the supervisor → folder,
 * backends, infra, domain. src/bin holds the programs' entries, the only files that see both the CLI and
 * the supervisor.
 */
const LAYERS: Record<string, readonly string[]> = {
  "src/domain": [],
  "src/backends": ["src/domain"],
  "src/infra": ["src/domain"],
  "src/folder": ["src/domain", "src/backends", "src/infra"],
  "src/engines": ["src/domain", "src/infra", "src/folder"],
  "src/quota": ["src/domain", "src/infra"],
  "src/dispatch": ["src/domain", "src/backends", "src/infra", "src/folder", "src/engines", "src/quota"],
  "src/demo": ["src/domain"],
  // The dashboard: its server (server/) reads through the use cases; its page (page/), run by the
  // browser, imports only domain and the wire (wire.ts), the types the two share.
  "src/ui": [
    "src/domain",
    "src/backends",
    "src/infra",
    "src/folder",
    "src/engines",
    "src/quota",
    "src/dispatch",
  ],
  "src/lock": ["src/domain", "src/infra", "src/folder"],
  "src/cli": [
    "src/domain",
    "src/engines",
    "src/backends",
    "src/infra",
    "src/folder",
    "src/dispatch",
    "src/demo",
    "src/ui",
    "src/lock",
    "src/quota",
  ],
  supervisor: [
    "src/domain",
    "src/backends",
    "src/infra",
    "src/folder",
    "src/engines",
    "src/quota",
    "src/lock",
  ],
  "src/bin": [
    "src/quota",
    "src/domain",
    "src/engines",
    "src/backends",
    "src/infra",
    "src/folder",
    "src/dispatch",
    "src/demo",
    "src/cli",
    "supervisor",
  ],
};

/**
 * The rooms of src/dispatch and those each may import besides itself (specs/dispatch.md, "The dispatch
 * room"): reading a dispatch and validating a request need nothing else of dispatch; recording and
 * starting a supervisor read; admitting validates and reads; the queue and ladder admit, start and record.
 * The files at the top of src/dispatch are the use cases (the reader gate, dispatch, cancel, wait, result,
 * status, clean): they may import every room, and no room imports them.
 */
const DISPATCH_ROOMS: Record<string, readonly string[]> = {
  "src/dispatch/request": [],
  "src/dispatch/read": [],
  "src/dispatch/settle": ["src/dispatch/read"],
  "src/dispatch/start": ["src/dispatch/read", "src/dispatch/settle"],
  "src/dispatch/admit": ["src/dispatch/request", "src/dispatch/read"],
  "src/dispatch/follow-up": ["src/dispatch/request", "src/dispatch/read", "src/dispatch/admit"],
  "src/dispatch/steer": ["src/dispatch/request", "src/dispatch/read"],
  "src/dispatch/queue": [
    "src/dispatch/request",
    "src/dispatch/read",
    "src/dispatch/settle",
    "src/dispatch/start",
    "src/dispatch/admit",
  ],
};

/** The layer of ours an import lands in, or null for node: and npm modules. */
function layerOf(to: string): string | null {
  if (
    !to.includes("/") ||
    to.startsWith("node:") ||
    !(to.startsWith("src/") || to.startsWith("supervisor/"))
  ) {
    return null;
  }
  return Object.keys(LAYERS).find((layer) => to.startsWith(`${layer}/`)) ?? to;
}

/** The identifiers a module's code uses (not its comments, not its strings). */
function identifiersOf(file: string): Set<string> {
  const source = ts.createSourceFile(
    file,
    fs.readFileSync(path.join(ROOT, file), "utf8"),
    ts.ScriptTarget.Latest,
  );
  const found = new Set<string>();
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) found.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The engines, each a folder of src/engines (specs/architecture.md, "Engines"). */
function engineFolders(): string[] {
  return fs
    .readdirSync(path.join(ROOT, "src/engines"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

describe("architecture", () => {
  for (const [layer, below] of Object.entries(LAYERS)) {
    it(`lets ${layer} import only ${below.length === 0 ? "itself" : below.join(", ")}`, () => {
      expect(
        violations(layer, (to) => {
          const lands = layerOf(to);
          return lands !== null && lands !== layer && !below.includes(lands);
        }),
      ).toEqual([]);
    });
  }

  for (const [room, below] of Object.entries(DISPATCH_ROOMS)) {
    it(`lets ${room} import only ${below.length === 0 ? "itself" : below.join(", ")} of src/dispatch`, () => {
      expect(
        violations(room, (to) => {
          if (!to.startsWith("src/dispatch/")) return false;
          const lands = Object.keys(DISPATCH_ROOMS).find((r) => to.startsWith(`${r}/`)) ?? "src/dispatch";
          return lands !== room && !below.includes(lands);
        }),
      ).toEqual([]);
    });
  }

  it("has a room for every folder of src/dispatch", () => {
    const folders = fs
      .readdirSync(path.join(ROOT, "src/dispatch"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `src/dispatch/${entry.name}`);
    expect(folders.filter((folder) => DISPATCH_ROOMS[folder] === undefined)).toEqual([]);
  });

  it("has no import circle in src/ or the supervisor", () => {
    expect(importCircles()).toEqual([]);
  });

  it("has a layer for every folder of src/ and for the supervisor", () => {
    const folders = fs
      .readdirSync(path.join(ROOT, "src"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `src/${entry.name}`);
    expect([...folders, "supervisor"].filter((folder) => LAYERS[folder] === undefined)).toEqual([]);
  });

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

  it("keeps the page's code fit for a browser: no node: modules, no package, nothing of ours but domain", () => {
    expect(
      violations(
        "src/ui/page",
        (to) => !to.startsWith("src/ui/page") && to !== "src/ui/wire.js" && !to.startsWith("src/domain"),
      ),
    ).toEqual([]);
  });

  it("keeps the dashboard's server and page apart: they share the wire alone, and it imports nothing", () => {
    const entries = fs.readdirSync(path.join(ROOT, "src/ui"), { withFileTypes: true });
    expect(entries.map((entry) => entry.name).sort()).toEqual(["page", "server", "wire.ts"]);
    expect(violations("src/ui/server", (to) => to.startsWith("src/ui/page"))).toEqual([]);
    expect(importsOf("src/ui/wire.ts")).toEqual([]);
  });

  it("keeps backends off the world: no node: I/O, nothing of ours but src/domain", () => {
    expect(
      violations(
        "src/backends",
        (to) => to.startsWith("node:") || (to.includes("/") && !to.startsWith("src/")),
      ),
    ).toEqual([]);
  });

  it("never lets the supervisor import the CLI or dispatch, nor dispatch the supervisor", () => {
    expect(
      violations("supervisor", (to) => to.startsWith("src/cli") || to.startsWith("src/dispatch")),
    ).toEqual([]);
    expect(violations("src/dispatch", (to) => to.startsWith("supervisor"))).toEqual([]);
  });

  it("lets nothing but the programs' entries import the CLI, and the CLI never import the supervisor", () => {
    const below = [
      "src/ui",
      "src/dispatch",
      "src/lock",
      "src/folder",
      "src/infra",
      "src/domain",
      "src/backends",
      "src/demo",
      "supervisor",
    ];
    expect(below.flatMap((dir) => violations(dir, (to) => to.startsWith("src/cli")))).toEqual([]);
    expect(violations("src/cli", (to) => to.startsWith("supervisor"))).toEqual([]);
  });

  it("lets the dashboard's server borrow nothing from a command module (it calls the use cases)", () => {
    const command = (to: string) => /^src\/cli\/[a-z-]+-command\.js$/.test(to);
    expect(violations("src/ui/server", command)).toEqual([]);
  });

  it("keeps each engine behind the seam: only the registry imports an engine's folder", () => {
    const engines = engineFolders();
    expect(engines).toContain("slurm");
    const outside = [...sourceFiles("src"), ...sourceFiles("supervisor")];
    const found = engines.flatMap((engine) =>
      outside
        .filter(
          (file) => !file.startsWith(`src/engines/${engine}/`) && file !== "src/engines/engine-registry.ts",
        )
        .flatMap((file) =>
          importsOf(file)
            .map((spec) => target(file, spec))
            .filter((to) => to.startsWith(`src/engines/${engine}/`))
            .map((to) => `${file} imports ${to}`),
        ),
    );
    expect(found).toEqual([]);
  });

  // An identifier names an engine when one of its words is the engine's name: `slurmJob`, `SLURM_JOB_ID`
  // do; `tokenCountsShape` (whose letters hold "ssh") does not.
  const wordsOf = (name: string) =>
    name
      .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
      .split(/_+/)
      .map((word) => word.toLowerCase());

  it("names no engine in code outside its own folder (comments and strings may)", () => {
    const files = [...sourceFiles("src"), ...sourceFiles("supervisor")];
    const found = engineFolders().flatMap((engine) =>
      files
        .filter(
          (file) => !file.startsWith(`src/engines/${engine}/`) && file !== "src/engines/engine-registry.ts",
        )
        .flatMap((file) =>
          [...identifiersOf(file)]
            .filter((name) => wordsOf(name).includes(engine))
            .map((name) => `${file}: ${name}`),
        ),
    );
    expect(found).toEqual([]);
  });

  it("finds static and dynamic imports: only the programs' entries in src/bin load the supervisor", () => {
    expect(violations("src", (to) => to.startsWith("supervisor/"))).toEqual([
      "src/bin/catherd.ts imports supervisor/supervisor-main.js",
      "src/bin/supervisor.ts imports supervisor/supervisor-main.js",
    ]);
    expect(layerOf("zod")).toBeNull();
    expect(layerOf("node:fs")).toBeNull();
  });
});

describe("the specs' citations", () => {
  // Paths that appear in examples of an agent's work ("edit src/a.ts"), not as citations of this repository.
  const EXAMPLES = new Set(["src/a.ts", "src/parser.ts"]);
  const CITED = /(?<![\w./<>*-])((?:src|supervisor|test|bench)\/[\w./<>*-]*[\w>*-])/g;
  // What the bench writes (git-ignored), cited as where a run's figures are kept.
  const GENERATED = new Set(["bench/results.json"]);
  // The docs whose citations are checked: the README, the specs and the bench's history.
  const DOCS = [
    "README.md",
    ...fs
      .readdirSync(path.join(ROOT, "specs"))
      .filter((name) => name.endsWith(".md"))
      .map((name) => `specs/${name}`),
    "bench/HISTORY.md",
  ];

  /** A cited pattern (`test/faults/**\/*.fault.ts`, `test/live/sandboxed-<cli>.live.ts`) as a regular expression. */
  function patternOf(cited: string): RegExp {
    const source = cited.replace(/<[^>]*>|\*\*\/|\*|[.+?^${}()|[\]\\]/g, (part) =>
      part.startsWith("<") ? "[^/]+" : part === "**/" ? "(?:.*/)?" : part === "*" ? "[^/]*" : `\\${part}`,
    );
    return new RegExp(`^${source}$`);
  }

  it("cites only source, supervisor, test and bench paths that exist (a pattern: that some file matches)", () => {
    const files = ["src", "supervisor", "test", "bench"].flatMap((dir) =>
      fs
        .readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })
        .map((entry) => `${dir}/${entry}`),
    );
    const missing: string[] = [];
    for (const doc of DOCS) {
      const text = fs.readFileSync(path.join(ROOT, doc), "utf8");
      for (const match of text.matchAll(CITED)) {
        const cited = match[1] as string;
        if (EXAMPLES.has(cited) || GENERATED.has(cited)) continue;
        const found = /[*<]/.test(cited)
          ? files.some((file) => patternOf(cited).test(file))
          : fs.existsSync(path.join(ROOT, cited));
        if (!found) missing.push(`${doc}: ${cited}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("loads from dist/ only modules whose sources exist, in the bench and the build scripts", () => {
    // They import the built modules by path strings ("src/domain/watch/watch.js"), which a move of the
    // source does not rewrite and no type check sees: a dead one fails a bench section or a script.
    const DIST_PATH = /["'`](?:dist\/)?((?:src|supervisor)\/[\w./-]+)\.js["'`]/g;
    const dead: string[] = [];
    for (const file of [...scriptFiles("bench"), ...scriptFiles("scripts")]) {
      const text = fs.readFileSync(path.join(ROOT, file), "utf8");
      for (const [, stem] of text.matchAll(DIST_PATH)) {
        if (!fs.existsSync(path.join(ROOT, `${stem}.ts`))) dead.push(`${file}: ${stem}.js`);
      }
    }
    expect(dead).toEqual([]);
  });

  // A section cited by its doc and its words: `dispatch.md`, "Following up" (backticks and the comma
  // optional). It is alive when some line of that doc opens with those words: a heading (its number
  // aside), a table row's first cell, a list item, a bold lead or a paragraph's first words. A bare name
  // is a spec (README.md aside); a name with a folder (`bench/HISTORY.md`) is a path from the root.
  const SECTION = /`?\b((?:[\w-]+\/)*[\w-]+\.md)`?,?\s+"([^"\n]{2,100})"/g;

  /** The line openings of a doc that a citation may name, marks and numbering taken off. */
  function anchorsOf(doc: string): string[] | null {
    const file =
      doc === "README.md" || doc.includes("/") ? path.join(ROOT, doc) : path.join(ROOT, "specs", doc);
    if (!fs.existsSync(file)) return null;
    return fs
      .readFileSync(file, "utf8")
      .split("\n")
      .map((line) => line.replace(/[`*]/g, "").replace(/^[\s#|>-]*(?:\d+(?:\.\d+)*\.?\s+)?/, ""));
  }

  function opensWith(line: string, words: string): boolean {
    return line.startsWith(words) && !/^\w/.test(line.slice(words.length));
  }

  /** The bench's and the build scripts' own code, which cites the specs as the sources do. */
  function scriptFiles(dir: string): string[] {
    return fs
      .readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
      .flatMap((entry) =>
        entry.isFile() && /\.(?:mjs|cjs|js|ts)$/.test(entry.name)
          ? [path.relative(ROOT, path.join(entry.parentPath, entry.name))]
          : [],
      );
  }

  it("cites only sections that exist, in the specs, the README, the bench's history and the code", () => {
    const texts = DOCS.concat(
      sourceFiles("src"),
      sourceFiles("supervisor"),
      scriptFiles("bench"),
      scriptFiles("scripts"),
    );
    const dead: string[] = [];
    for (const file of texts) {
      const text = fs.readFileSync(path.join(ROOT, file), "utf8");
      for (const [, doc, cited] of text.matchAll(SECTION)) {
        const words = (cited as string).replace(/`/g, "");
        const anchors = anchorsOf(doc as string);
        if (!anchors?.some((line) => opensWith(line, words))) dead.push(`${file}: ${doc}, "${words}"`);
      }
    }
    expect(dead).toEqual([]);
  });
});

describe("the size of functions", () => {
  // specs/architecture.md, "Function size": no function over 80 lines, none with more than four positional
  // parameters.
  /** `file name` of each function in src/ and supervisor/ over 80 lines or over four parameters. */
  function oversized(): string[] {
    const found: string[] = [];
    for (const file of [...sourceFiles("src"), ...sourceFiles("supervisor")]) {
      const text = fs.readFileSync(path.join(ROOT, file), "utf8");
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
          const lines =
            source.getLineAndCharacterOfPosition(node.end).line -
            source.getLineAndCharacterOfPosition(node.getStart()).line +
            1;
          if (lines > 80 || node.parameters.length > 4) found.push(`${file} ${functionName(node)}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    return found.sort();
  }

  function functionName(node: ts.SignatureDeclaration): string {
    // An arrow or a function expression goes by what it is assigned to: a variable, a property.
    const named = node.name ?? (node.parent as { name?: ts.Node }).name;
    return named?.getText() ?? "(anonymous)";
  }

  it("has no function over 80 lines or four parameters", () => {
    expect(oversized()).toEqual([]);
  });
});
