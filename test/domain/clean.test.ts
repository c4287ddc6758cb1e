import { describe, expect, it } from "vitest";
import {
  type CleanFacts,
  type CleanVerdict,
  judgeForClean,
  type WorktreeFacts,
} from "../../src/domain/clean-rule.js";

const DAY = 86_400_000;
const NOW = Date.parse("2026-12-01T00:00:00Z");
const rule = { now: NOW, olderThanMs: 7 * DAY, force: false };
const clean: WorktreeFacts = {
  insideRun: true,
  exists: true,
  dirty: false,
  unmerged: 0,
  branch: "catherd/fix-k3x9qa",
};
const old: CleanFacts = { recorded: true, at: NOW - 8 * DAY, worktree: null };

describe("judgeForClean", () => {
  const cases: [string, Partial<CleanFacts>, boolean, CleanVerdict][] = [
    ["a recorded dispatch older than the age", {}, false, { action: "remove", worktree: "none" }],
    ["one exactly at the age", { at: NOW - 7 * DAY }, false, { action: "remove", worktree: "none" }],
    ["one a millisecond younger than the age", { at: NOW - 7 * DAY + 1 }, false, { action: "young" }],
    ["one whose age is unknown", { at: null }, true, { action: "young" }],
    [
      "an old dispatch that is not recorded, even forced",
      { recorded: false },
      true,
      { action: "keep", why: "not recorded (live, queued, or not yet settled)" },
    ],
    ["a clean worktree", { worktree: clean }, false, { action: "remove", worktree: "remove" }],
    [
      "a worktree whose folder is gone",
      { worktree: { ...clean, exists: false, dirty: null, unmerged: null } },
      false,
      { action: "remove", worktree: "remove" },
    ],
    [
      "a dirty worktree",
      { worktree: { ...clean, dirty: true } },
      false,
      { action: "keep", why: "uncommitted changes in its worktree (--force removes it, work and all)" },
    ],
    [
      "a dirty worktree, forced",
      { worktree: { ...clean, dirty: true } },
      true,
      { action: "remove", worktree: "force" },
    ],
    [
      "a worktree with commits only on its branch",
      { worktree: { ...clean, unmerged: 2 } },
      false,
      {
        action: "keep",
        why: "2 commits on catherd/fix-k3x9qa that no other branch contains (--force removes it, work and all)",
      },
    ],
    [
      "a dirty worktree with one unmerged commit",
      { worktree: { ...clean, dirty: true, unmerged: 1 } },
      false,
      {
        action: "keep",
        why: "uncommitted changes in its worktree; 1 commit on catherd/fix-k3x9qa that no other branch contains (--force removes it, work and all)",
      },
    ],
    [
      "a worktree git cannot inspect",
      { worktree: { ...clean, dirty: null } },
      false,
      { action: "keep", why: "its worktree cannot be inspected (--force removes it, work and all)" },
    ],
    [
      "a worktree git cannot inspect, forced",
      { worktree: { ...clean, unmerged: null } },
      true,
      { action: "remove", worktree: "force" },
    ],
    [
      "a worktree outside the run, even forced",
      { worktree: { ...clean, insideRun: false } },
      true,
      { action: "keep", why: "its worktree lies outside the run's worktrees folder" },
    ],
  ];
  for (const [title, facts, force, verdict] of cases) {
    it(`judges ${title}`, () => {
      expect(judgeForClean({ ...old, ...facts }, { ...rule, force })).toEqual(verdict);
    });
  }
});
