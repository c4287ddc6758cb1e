import { execFile } from "node:child_process";
import { allBackends, backendNamed } from "../backends/registry.js";
import type { Backend } from "../backends/types.js";
import { CatherdError } from "../domain/errors.js";
import { BACKEND_IDS, type BackendId } from "../domain/vocab.js";
import { resolveExecutable } from "../infra/which.js";
import type { Command } from "./kit.js";
import { cell, paint } from "./render.js";

/** A CLI's --version gets this long before doctor reports it as not answering. */
const VERSION_TIMEOUT_MS = 10_000;

export interface BackendCheck {
  backend: BackendId;
  found: boolean;
  path: string | null;
  /** Where the path came from: the CATHERD_<B>_BIN variable or PATH. */
  via: string | null;
  version: string | null;
  fix: string | null;
}

export const doctorCommand: Command<{ backends: BackendCheck[] }> = {
  name: "doctor",
  usage: `usage: catherd doctor [<backend>…] [--json]

Which agent CLIs catherd can run here: found or not (and where), their versions, and how to fix what is
missing. Exit 3 when a backend you name is missing.`,
  options: {},
  async handler(input) {
    const named = input.positionals.map((name) => {
      const backend = backendNamed(name);
      if (backend === null) {
        throw new CatherdError("E_INPUT_INVALID", `unknown backend ${JSON.stringify(name)}`, {
          fix: `name one of ${BACKEND_IDS.join(", ")}`,
        });
      }
      return backend;
    });
    const targets = (named.length > 0 ? named : allBackends()).filter((b) => b.command === "cli");
    const backends = await Promise.all(targets.map((b) => check(b, process.env)));
    const missing = named.length > 0 && backends.some((b) => !b.found);
    return { data: { backends }, text: render(backends), exitCode: missing ? 3 : 0 };
  },
};

async function check(backend: Backend, env: NodeJS.ProcessEnv): Promise<BackendCheck> {
  const fromEnv = env[backend.binEnv];
  const wanted = fromEnv !== undefined && fromEnv !== "" ? fromEnv : backend.defaultBin;
  const found = resolveExecutable(wanted, env.PATH ?? "");
  const via = fromEnv !== undefined && fromEnv !== "" ? backend.binEnv : "PATH";
  if (found === null) {
    const fix =
      via === "PATH"
        ? `${backend.installHint}, or set ${backend.binEnv}`
        : `${backend.binEnv} names ${wanted}, which is not an executable`;
    return { backend: backend.id, found: false, path: null, via: null, version: null, fix };
  }
  const version = await versionOf(found, backend.versionArgs);
  return {
    backend: backend.id,
    found: true,
    path: found,
    via,
    version,
    fix:
      version === null
        ? `${found} ${backend.versionArgs.join(" ")} did not answer; reinstall: ${backend.installHint}`
        : null,
  };
}

function versionOf(bin: string, args: readonly string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(bin, [...args], { timeout: VERSION_TIMEOUT_MS, encoding: "utf8" }, (error, stdout, stderr) => {
      const line = `${stdout}\n${stderr}`.split("\n").find((l) => /\d+\.\d+/.test(l));
      resolve(error === null || line !== undefined ? (line?.trim() ?? null) : null);
    });
  });
}

function render(checks: BackendCheck[]): string {
  const lines = checks.map((c) => {
    const mark = c.found ? paint("ok     ", "green") : paint("missing", "red");
    const head =
      `${mark} ${cell(c.backend, 11)} ${c.found ? (c.version ?? "version unknown") : ""}`.trimEnd();
    const where = c.found ? [`        at ${c.path} (via ${c.via})`] : [];
    const fix = c.fix === null ? [] : [`        fix: ${c.fix}`];
    return [head, ...where, ...fix].join("\n");
  });
  return `${lines.join("\n")}\n`;
}
