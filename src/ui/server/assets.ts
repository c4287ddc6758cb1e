import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

/** The page's files, read once at start: index.html, app.js, app.css. */
export interface Assets {
  html: Buffer;
  /** By name under /assets/: the body and its Content-Type. */
  files: Map<string, { body: Buffer; type: string }>;
}

/**
 * Reads dist/ui/ beside the program that `fromUrl` (an import.meta.url) names: dist/bin/../ui when
 * bundled, dist/ui above a compiled module. Throws, naming the fix, when the page is not built.
 */
export function loadAssets(fromUrl: string): Assets {
  const here = path.dirname(fileURLToPath(fromUrl));
  const dir = pageDirAbove(here);
  if (dir === null)
    throw new Error(
      `the dashboard's page is not built (no dist/ui/index.html above ${here}): run npm run build`,
    );
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const [name, type] of [
    ["app.js", "text/javascript; charset=utf-8"],
    ["app.css", "text/css; charset=utf-8"],
  ] as const) {
    files.set(name, { body: fs.readFileSync(path.join(dir, name)), type });
  }
  return { html: fs.readFileSync(path.join(dir, "index.html")), files };
}

/** The nearest `ui/` or `dist/ui/` holding an index.html, from `here` up to the root (null: none). */
function pageDirAbove(here: string): string | null {
  for (let d = here; ; d = path.dirname(d)) {
    for (const candidate of [path.join(d, "ui"), path.join(d, "dist", "ui")]) {
      if (fs.existsSync(path.join(candidate, "index.html"))) return candidate;
    }
    if (path.dirname(d) === d) return null;
  }
}
