import { type CleanReport, cleanRuns } from "../dispatch/clean.js";
import { existingRun, runNames } from "../dispatch/read/locate.js";
import { DEFAULT_CLEAN_AGE } from "../domain/clean-rule.js";
import { parseDuration } from "../domain/text/duration.js";
import { catherdHome, runName, runPaths } from "../infra/paths.js";
import { type Command, stringOption } from "./command-io.js";
import { bytes, paint } from "./render.js";

/** The oldest age `--older-than` takes: ten years. */
const MAX_AGE_MS = 3650 * 86_400_000;

export const cleanCommand: Command<{ clean: CleanReport }> = {
  name: "clean",
  synopsis: "",
  positionals: 0,
  summary:
    "Removes recorded dispatch folders that ended longer ago than --older-than, in every run or only in " +
    "--run, with their worktrees. Never a live or queued dispatch. A worktree with uncommitted changes, or " +
    "commits that no other branch contains, is kept with its folder and listed with why, unless --force; " +
    "no branch is ever deleted. --dry-run says what it would do and changes nothing.",
  json: "{clean: {dryRun, olderThanMs, removed, kept, freedBytes}}",
  options: {
    run: { type: "string", value: "<r>", description: "only this run", default: "every run of the home" },
    "older-than": {
      type: "string",
      value: "<d>",
      description: "remove records that ended longer ago than this, e.g. 7d; 0 for all",
      default: DEFAULT_CLEAN_AGE,
    },
    "dry-run": { type: "boolean", description: "say what would be removed, change nothing" },
    force: { type: "boolean", description: "also remove worktrees with uncommitted or unmerged work" },
  },
  async handler(input) {
    const home = catherdHome();
    const runFlag = stringOption(input, "run");
    const runs =
      runFlag === undefined
        ? runNames(home).map((name) => runPaths(home, name))
        : [existingRun(runPaths(home, runName(runFlag)), true)];
    const age = stringOption(input, "older-than") ?? DEFAULT_CLEAN_AGE;
    const olderThanMs = age === "0" ? 0 : parseDuration("--older-than", age, MAX_AGE_MS);
    const report = await cleanRuns(runs, {
      olderThanMs,
      force: input.values.force === true,
      dryRun: input.values["dry-run"] === true,
    });
    return { data: { clean: report }, text: renderClean(report) };
  },
};

export function renderClean(report: CleanReport): string {
  const lines: string[] = [];
  const verb = report.dryRun ? "would remove" : "removed";
  for (const d of report.removed) {
    const worktree = d.worktree === null ? "" : ` and worktree (branch ${d.worktree.branch} kept)`;
    lines.push(`${verb} ${d.run}/${d.name}/${d.dispatchId}${worktree}: ${bytes(d.bytes)}`);
  }
  for (const d of report.kept)
    lines.push(paint(`kept ${d.run}/${d.name}/${d.dispatchId}: ${d.why}`, "yellow"));
  const cgroups = report.cgroupsRemoved.length;
  if (cgroups > 0)
    lines.push(
      `${report.dryRun ? "would remove" : "removed"} ${cgroups} empty cgroup${cgroups === 1 ? "" : "s"} left by dispatches that are recorded or gone`,
    );
  const n = report.removed.length;
  const total = `${report.dryRun ? "would free" : "freed"} ${bytes(report.freedBytes)} (${n} dispatch${n === 1 ? "" : "es"})`;
  lines.push(report.kept.length === 0 ? total : `${total}; kept ${report.kept.length}`);
  return `${lines.join("\n")}\n`;
}
