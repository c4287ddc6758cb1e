import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * catherd's version, from the package.json of the installed package: the nearest one named "catherd"
 * above `fromUrl` (the caller's import.meta.url; bundled or compiled, it sits under the package). Read
 * only when asked (`catherd --version`), so no start path pays for it. Null when it cannot be found.
 */
export function catherdVersion(fromUrl: string): string | null {
  for (let dir = path.dirname(fileURLToPath(fromUrl)); ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === "catherd" && typeof pkg.version === "string") return pkg.version;
    } catch {
      // no package.json here (or not readable): look higher
    }
    if (path.dirname(dir) === dir) return null;
  }
}
