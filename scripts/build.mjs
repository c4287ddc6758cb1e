#!/usr/bin/env node
// @ts-check
// `npm run build`: dist/ from scratch — tsc (tsconfig.build.json, emit only), then the bundles of scripts/bundle.mjs —
// and last the digest of the inputs it read (scripts/source-digest.mjs), taken before the build started so
// that a source edited during the build reads as stale. With `--if-stale` it builds only when dist/ does
// not hold the current sources (the suites run after `npm test` in CI need no second build).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { DIGEST_FILE, sourceDigest, staleBuild } from "./source-digest.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
if (process.argv.includes("--if-stale") && staleBuild(root) === null) {
  console.log("dist/ holds the current sources: not rebuilt");
  process.exit(0);
}
const digest = sourceDigest(root);
fs.rmSync(path.join(root, "dist"), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
// Emitted without type checking (`--noCheck`: the same files, in a third of the time): the types of src/
// and supervisor/ are checked once, with the tests', by `npm run typecheck` (tsconfig.json), in the gate.
for (const args of [
  [tsc, "-p", "tsconfig.build.json", "--noCheck"],
  [path.join(root, "scripts/bundle.mjs")],
]) {
  const step = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  if (step.status !== 0) process.exit(step.status ?? 1);
}
fs.writeFileSync(path.join(root, DIGEST_FILE), `${digest}\n`);
