import * as fs from "node:fs";
import * as path from "node:path";
import { agentEnvironment } from "../src/domain/env.js";
import { CatherdError } from "../src/domain/errors.js";
import type { Spec } from "../src/domain/schemas.js";
import { makePrivateTemp } from "../src/folder/private-temp.js";
import { makeDir } from "../src/infra/atomic.js";
import { addWorktree } from "../src/infra/git-worktree.js";

// The agent's place, made ready just before the spawn: its worktree (when the spec asks for one), its
// folder, its private temp folder, and its environment.

/**
 * Creates what the agent needs and returns its environment. Throws E_SPAWN_FAILED when its worktree
 * cannot be created, E_SPEC_INVALID when a variable it is to get by name is not in this environment (a
 * supervisor started by hand without it).
 */
export async function prepareWorkplace(
  dir: string,
  spec: Spec,
  inherited: NodeJS.ProcessEnv,
  run: string | null,
): Promise<Record<string, string>> {
  const missing = spec.passEnv.filter((name) => inherited[name] === undefined);
  if (missing.length > 0) {
    throw new CatherdError(
      "E_SPEC_INVALID",
      `passEnv ${missing.join(", ")}: not set in the supervisor's environment (it comes from the dispatcher's, and is never written down)`,
    );
  }
  if (spec.worktree !== null) await ensureWorktree(spec.worktree);
  if (spec.worktree !== null) fs.mkdirSync(spec.cwd, { recursive: true });
  const tmp = makePrivateTemp(dir);
  return agentEnvironment(inherited, {
    overrides: spec.env,
    markers: { dispatchId: spec.dispatchId, run, dir },
    place: { cwd: spec.cwd, tmp },
    passed: spec.passEnv,
  });
}

/** The worktree the spec names; one already there (a supervisor started again before the spawn) is used. */
async function ensureWorktree(plan: NonNullable<Spec["worktree"]>): Promise<void> {
  if (fs.existsSync(path.join(plan.path, ".git"))) return;
  makeDir(path.dirname(plan.path));
  const added = await addWorktree(plan.repo, plan);
  if (!added.ok) {
    throw new CatherdError("E_SPAWN_FAILED", `cannot create the worktree ${plan.path}: ${added.reason}`);
  }
}
