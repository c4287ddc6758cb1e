// Bundles the compiled programs (dist/src/bin/, from tsc) into dist/bin/, one per file of src/bin/:
// catherd.js (the CLI, the package's bin), supervisor.js, promoter.js, notifier.js and simulated-agent.js,
// sharing chunks, with each CLI command in a chunk of its own that loads only when used. One file per program instead of ~40 ES modules plus zod's: node's module loader
// was the largest item of every start-up profile, and the supervisor's resident memory shrinks with it
// (specs/performance.md). Not minified: stack traces keep their names. graceful-fs is replaced by
// node:fs (scripts/bundle-shims/graceful-fs.cjs says why). Each output has a source map (without the
// sources' text) that leads back through tsc's maps to src/ and supervisor/: coverage collected from the
// spawned programs (test/helpers/child-coverage.ts) counts against the TypeScript, and
// `node --enable-source-maps` shows TypeScript positions in stack traces.
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

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
const out = path.join(dist, "bin");

/** The programs: one per file of src/bin/ (src/infra/programs.ts). */
const programs = fs
  .readdirSync(path.join(root, "src/bin"))
  .filter((file) => file.endsWith(".ts"))
  .map((file) => file.slice(0, -".ts".length));

fs.rmSync(out, { recursive: true, force: true });
await build({
  cwd: root,
  input: Object.fromEntries(programs.map((name) => [name, path.join(dist, "src/bin", `${name}.js`)])),
  platform: "node",
  logLevel: "warn",
  plugins: [withTscSourceMaps()],
  resolve: { alias: { "graceful-fs": path.join(root, "scripts/bundle-shims/graceful-fs.cjs") } },
  output: {
    dir: out,
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "[name]-[hash].js",
    sourcemap: true,
    sourcemapExcludeSources: true,
  },
});
for (const program of programs) fs.chmodSync(path.join(out, `${program}.js`), 0o755);
// The dashboard's page (src/web/, browser code, read by rolldown from the TypeScript itself): one script,
// its stylesheet and its HTML in dist/ui/, served by `catherd ui` alone. Nothing from a CDN: it works offline.
const ui = path.join(dist, "ui");
await build({
  cwd: root,
  input: { app: path.join(root, "src/web/main.ts") },
  platform: "browser",
  logLevel: "warn",
  output: { dir: ui, format: "esm", entryFileNames: "[name].js", sourcemap: false, minify: true },
});
fs.copyFileSync(path.join(root, "src/web/index.html"), path.join(ui, "index.html"));
fs.copyFileSync(path.join(root, "src/web/style.css"), path.join(ui, "app.css"));
