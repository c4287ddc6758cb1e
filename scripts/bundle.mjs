// Bundles the compiled programs (dist/src/bin/, from tsc) into dist/bin/, one per file of src/bin/:
// catherd.js (the CLI, the package's bin), supervisor.js, promoter.js, notifier.js and simulated-agent.js,
// sharing chunks, each CLI command in a chunk of its own that loads only when used, and the paths every
// dispatch takes each in one chunk (START_PATHS): node's module loader was the largest item of every
// start-up profile (specs/performance.md). Not minified, so that stack traces keep their names, but ASCII
// and without JSDoc (the output options say why); zod's schemas are made without bound methods
// (zodWithoutBoundMethods). graceful-fs is replaced by node:fs (scripts/bundle-shims/graceful-fs.cjs says
// why). Each output has a source map (without the sources' text) that leads back through tsc's maps to
// src/ and supervisor/: coverage collected from the spawned programs (test/helpers/child-coverage.ts)
// counts against the TypeScript, and `node --enable-source-maps` shows TypeScript positions in stack
// traces.
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

/**
 * Loads each compiled module of dist/ with tsc's source map beside it, so that rolldown chains the bundle's
 * map through it to the TypeScript (rolldown does not read input maps by itself).
 * @returns {import("rolldown").Plugin}
 */
function withTscSourceMaps() {
  return {
    name: "tsc-source-maps",
    load(id) {
      if (!id.startsWith(dist) || !id.endsWith(".js")) return null;
      const mapFile = `${id}.map`;
      if (!fs.existsSync(mapFile)) return null;
      const code = fs.readFileSync(id, "utf8").replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n");
      return { code, map: fs.readFileSync(mapFile, "utf8") };
    },
  };
}

/**
 * zod 3's ZodType constructor binds 24 of its methods to every schema it makes (`this.parse =
 * this.parse.bind(this)`, …), so that a method can be passed around detached from its schema. catherd
 * never does that, nor does anything it bundles with zod (the MCP SDK calls them as methods), and the
 * programs make about a thousand schemas as they load: the bound functions were ~0.7 MiB of a quiet
 * supervisor's 6.7 MiB heap, and binding them a few ms of every start (specs/performance.md, "What a
 * schema costs"). Each bind becomes blanks of its length, so that positions and the source map hold; the
 * methods stay on the prototype. The build fails if zod's constructor no longer reads as expected.
 * @returns {import("rolldown").Plugin}
 */
function zodWithoutBoundMethods() {
  const bind = /^( *)this\.(\w+) = this\.\2\.bind\(this\);$/gm;
  return {
    name: "zod-without-bound-methods",
    transform(code, id) {
      if (!id.endsWith(path.join("node_modules", "zod", "v3", "types.js"))) return null;
      let bound = 0;
      const blanked = code.replace(bind, (line, indent) => {
        bound += 1;
        return indent + " ".repeat(line.length - indent.length);
      });
      if (bound !== 24)
        throw new Error(`zod's ZodType constructor: expected 24 bound methods, found ${bound}`);
      return { code: blanked, map: null };
    },
  };
}

/**
 * Modules no group takes: the CLI's verb table, whose dynamic imports reach every verb, stays in a chunk of
 * its own, so that the groups the supervisor and the promoter share with the command line reach no verb
 * (test/cli/mcp-loading.test.ts).
 */
const APART = ["src/cli/main.js"];

/**
 * The paths every dispatch starts down, each bundled into one chunk instead of the few dozen rolldown makes
 * by which dynamic imports reach each module: node's loader pays ~0.5–1 ms per module it resolves, reads
 * and links, so a dispatch that loaded 58 chunks spent more on loading them than on running them
 * (specs/performance.md, "Chunks by start path"). Each group is the static closure of its modules (every
 * module they import, node_modules included), less what an earlier group took; `with` makes it the part
 * shared with the closure of another list. The backends stay out: a supervisor loads one of them. In the
 * order a dispatch meets them: what the command line and the standby supervisor both load before the
 * standby is started; the rest of the command line's start; what the dispatcher and the supervisor both
 * load; each one's own (the supervisor loads all of its own while it stands by).
 * @type {{ name: string, from: string[], with?: string[] }[]}
 */
const START_PATHS = [
  { name: "base", from: ["src/cli/main.js"], with: ["supervisor/supervisor-main.js"] },
  { name: "cli", from: ["src/cli/main.js"] },
  {
    name: "start-shared",
    from: ["src/cli/dispatch-command.js"],
    with: ["supervisor/supervisor-main.js", "src/folder/record.js"],
  },
  { name: "supervise", from: ["supervisor/supervisor-main.js", "src/folder/record.js"] },
  { name: "dispatch", from: ["src/cli/dispatch-command.js"] },
];

/**
 * The codeSplitting groups of START_PATHS, and the plugin that reads the module graph they are made from:
 * rolldown calls a group's `test` only when it splits chunks, after every module is parsed.
 * @returns {{ plugin: import("rolldown").Plugin, groups: import("rolldown").CodeSplittingGroup[] }}
 */
function startPathGroups() {
  /** @type {Map<string, readonly string[]>} */
  const imports = new Map();
  /** Each module's group; null for one of APART. @type {Map<string, string | null> | null} */
  let groupOf = null;
  const backends = path.join(dist, "src/backends") + path.sep;
  /** @param {string[]} files */
  const closure = (files) => {
    const seen = new Set();
    const todo = files.map((file) => path.join(dist, file));
    for (let id = todo.pop(); id !== undefined; id = todo.pop()) {
      if (seen.has(id)) continue;
      seen.add(id);
      todo.push(...(imports.get(id) ?? []));
    }
    return seen;
  };
  const assign = () => {
    /** @type {Map<string, string | null>} */
    const taken = new Map(APART.map((file) => [path.join(dist, file), null]));
    for (const { name, from, with: other } of START_PATHS) {
      const shared = other === undefined ? null : closure(other);
      for (const id of closure(from)) {
        if (taken.has(id) || id.startsWith(backends) || (shared !== null && !shared.has(id))) continue;
        taken.set(id, name);
      }
    }
    return taken;
  };
  return {
    plugin: {
      name: "start-paths",
      buildEnd() {
        for (const id of this.getModuleIds()) imports.set(id, this.getModuleInfo(id)?.importedIds ?? []);
      },
    },
    groups: START_PATHS.map(({ name }, i) => ({
      name,
      priority: START_PATHS.length - i,
      test: (id) => {
        const groups = groupOf ?? assign();
        groupOf = groups;
        return groups.get(id) === name;
      },
    })),
  };
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
const out = path.join(dist, "bin");

/** The programs: one per file of src/bin/ (src/infra/programs.ts). */
const programs = fs
  .readdirSync(path.join(root, "src/bin"))
  .filter((file) => file.endsWith(".ts"))
  .map((file) => file.slice(0, -".ts".length));

fs.rmSync(out, { recursive: true, force: true });
const startPaths = startPathGroups();
await build({
  cwd: root,
  input: Object.fromEntries(programs.map((name) => [name, path.join(dist, "src/bin", `${name}.js`)])),
  platform: "node",
  logLevel: "warn",
  plugins: [withTscSourceMaps(), zodWithoutBoundMethods(), startPaths.plugin],
  resolve: { alias: { "graceful-fs": path.join(root, "scripts/bundle-shims/graceful-fs.cjs") } },
  output: {
    dir: out,
    codeSplitting: { groups: startPaths.groups },
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "[name]-[hash].js",
    // V8 keeps each module's source text for as long as the process runs (it compiles functions lazily),
    // and one character beyond ASCII makes the whole text two bytes a character: the bundle is ASCII, its
    // JSDoc left to the sources (licences stay), which halves what every supervisor holds of it.
    charset: "ascii",
    comments: { legal: true, annotation: false, jsdoc: false },
    sourcemap: true,
    sourcemapExcludeSources: true,
  },
});
for (const program of programs) fs.chmodSync(path.join(out, `${program}.js`), 0o755);
// The dashboard's page (src/ui/page/, browser code, read by rolldown from the TypeScript itself): one script,
// its stylesheet and its HTML in dist/ui/, served by `catherd ui` alone. Nothing from a CDN: it works offline.
const ui = path.join(dist, "ui");
await build({
  cwd: root,
  input: { app: path.join(root, "src/ui/page/page.ts") },
  platform: "browser",
  logLevel: "warn",
  output: { dir: ui, format: "esm", entryFileNames: "[name].js", sourcemap: false, minify: true },
});
fs.copyFileSync(path.join(root, "src/ui/page/index.html"), path.join(ui, "index.html"));
fs.copyFileSync(path.join(root, "src/ui/page/style.css"), path.join(ui, "app.css"));
