// @ts-check
// The digest of what dist/ is built from, written by scripts/build.mjs and checked before the tests run
// (test/helpers/fresh-build.setup.ts): most tests spawn the built programs, and a build older than the
// sources would test yesterday's code. Content, not mtimes: a checkout or a merge that touches files
// without changing them needs no build, and one that changes them always does.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

/** What the build reads, relative to the repository: folders are taken whole. */
export const BUILD_INPUTS = [
  "src",
  "supervisor",
  "scripts/build.mjs",
  "scripts/bundle.mjs",
  "scripts/bundle-shims",
  "tsconfig.json",
  "tsconfig.build.json",
  "tsconfig.web.json",
  "package.json",
  "package-lock.json",
];
/** Where the build leaves the digest of the inputs it read. */
export const DIGEST_FILE = "dist/source-digest";

/**
 * Every file under `entry` (itself if it is a file), relative to `root`, sorted.
 * @param {string} root
 * @param {string} entry
 * @returns {string[]}
 */
function filesUnder(root, entry) {
  const full = path.join(root, entry);
  if (!fs.existsSync(full)) return [];
  if (!fs.statSync(full).isDirectory()) return [entry];
  return fs
    .readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
    .sort();
}

/**
 * A digest of the build's inputs: their paths and contents.
 * @param {string} root the repository
 */
export function sourceDigest(root) {
  const hash = createHash("sha256");
  for (const file of BUILD_INPUTS.flatMap((entry) => filesUnder(root, entry))) {
    hash.update(`${file}\0`);
    hash.update(fs.readFileSync(path.join(root, file)));
    hash.update("\0");
  }
  return hash.digest("hex");
}

/**
 * Why dist/ cannot be trusted to hold the current sources, or null when it was built from them.
 * @param {string} root the repository
 * @returns {string | null}
 */
export function staleBuild(root) {
  const file = path.join(root, DIGEST_FILE);
  if (!fs.existsSync(file)) return "dist/ was not built by `npm run build` (or the build did not finish)";
  if (fs.readFileSync(file, "utf8").trim() !== sourceDigest(root)) {
    return `dist/ was built from other sources than ${BUILD_INPUTS.join(", ")} now hold`;
  }
  return null;
}
