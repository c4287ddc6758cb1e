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
 *   (and so its supervisor, which runs on the dispatcher's node), and each `node -e ''` baseline. The
 *   in-process measurements (ingest, admit()) run on the bench's own node.
 * @property {Scratch} scratch
 * @property {Reaper} reaper
 * @property {Report} report
 */

/** The temporary folders of one bench run, under one root that run.mjs removes at the end. */
export class Scratch {
  #homes = 0;
  /** @type {string | null} */
  #recorded = null;

  /** @param {string} root an empty folder */
  constructor(root) {
    this.root = root;
    /** The --cwd of every dispatch: a folder outside any git work tree. */
    this.workDir = path.join(root, "work");
    fs.mkdirSync(this.workDir);
  }

  /**
   * A fresh CATHERD_HOME.
   * @param {string} label
   */
  home(label) {
    const home = path.join(this.root, `home-${++this.#homes}-${label}`);
    fs.mkdirSync(home, { recursive: true });
    return home;
  }

  /**
   * A fresh folder for the agents' stamps.
   * @param {string} label
   */
  marks(label) {
    const dir = path.join(this.root, `marks-${label}`);
    fs.mkdirSync(dir);
    return dir;
  }

  /**
   * A home with 1000 recorded dispatches in its default run, written once and shared by the sections that
   * read it (the time it took goes to extra.generate1000Ms).
   * @param {Record<string, any>} extra
   */
  recordedHome(extra) {
    if (this.#recorded === null) {
      this.#recorded = this.home("recorded-1000");
      const t = performance.now();
      generateRecorded(this.#recorded, 1000, {
        workDir: this.workDir,
        events: path.join(RECORDED, "codex/tool2.jsonl"),
      });
      extra.generate1000Ms = performance.now() - t;
    }
    return this.#recorded;
  }
}
