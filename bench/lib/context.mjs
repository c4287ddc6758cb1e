// @ts-check
// What every section gets: the node binary it measures, its scratch space, the reaper and the report.
import * as fs from "node:fs";
import * as path from "node:path";
import { RECORDED } from "./config.mjs";
import { generateRecorded } from "./generate.mjs";

/** @typedef {import("./reaper.mjs").Reaper} Reaper */
/** @typedef {import("./report.mjs").Report} Report */

/**
 * @typedef {object} BenchContext
 * @property {string} node      the node binary of every process a section starts: each catherd command
 *   (and so its supervisor, which runs on the dispatcher's node), and each `node -e ''` baseline. A section
 *   runs in a process on this same node, so its in-process measurements (ingest, admit()) do too.
 * @property {number} nodeMajor  its major version, for the targets that differ by runtime
 * @property {Scratch} scratch
 * @property {Reaper} reaper
 * @property {Report} report
 */

/**
 * The temporary folders of one runtime's column, under one root that run.mjs removes at the end. Each
 * section runs in a process of its own on the same root: names never repeat, and the 1000 recorded
 * dispatches are written once and found again by the next section.
 */
export class Scratch {
  /** @param {string} root a folder (created if missing) */
  constructor(root) {
    this.root = root;
    /** The --cwd of every dispatch: a folder outside any git work tree. */
    this.workDir = path.join(root, "work");
    fs.mkdirSync(this.workDir, { recursive: true });
  }

  /**
   * A fresh CATHERD_HOME.
   * @param {string} label
   */
  home(label) {
    return fs.mkdtempSync(path.join(this.root, `home-${label}-`));
  }

  /**
   * A fresh folder for the agents' stamps.
   * @param {string} label
   */
  marks(label) {
    return fs.mkdtempSync(path.join(this.root, `marks-${label}-`));
  }

  /**
   * A home with 1000 recorded dispatches in its default run, written by the first section that asks and
   * shared by the ones that read it (the time it took goes to extra.generate1000Ms).
   * @param {Record<string, any>} extra
   */
  recordedHome(extra) {
    const home = path.join(this.root, "home-recorded-1000");
    const complete = path.join(home, ".complete");
    if (fs.existsSync(complete)) return home;
    fs.rmSync(home, { recursive: true, force: true });
    fs.mkdirSync(home);
    const t = performance.now();
    generateRecorded(home, 1000, { workDir: this.workDir, events: path.join(RECORDED, "codex/tool2.jsonl") });
    extra.generate1000Ms = performance.now() - t;
    fs.writeFileSync(complete, "");
    return home;
  }
}
