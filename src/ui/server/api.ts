import type { IncomingMessage } from "node:http";
import { isValidId } from "../../domain/ids.js";
import type { DispatchWire, RunsWire, RunWire } from "../wire.js";
import { accountsWire } from "./accounts-wire.js";
import { attemptsOf } from "./detail.js";
import { cancelDispatch } from "./dispatch-reads.js";
import { sendJson, sendText } from "./guard.js";
import type { Entry } from "./row-wire.js";
import type { RunModel } from "./run-model.js";
import type { Exchange, Site } from "./site.js";

// The JSON API under /api/ (specs/ui.md, "The API"; types in src/ui/wire.ts). Runs and dispatches are
// named by the request, looked up among those the model knows; a path is never taken from a request.

/** A request's body is refused past this. */
const MAX_BODY_BYTES = 16 * 1024;

/** Answers a GET under /api/: the events stream, the accounts, the runs, a run, a dispatch's page. */
export async function answerApi(site: Site, ex: Exchange): Promise<void> {
  const parts = ex.parts.slice(1);
  const [first, runName, what, id] = parts;
  if (first === "events" && parts.length === 1) return site.streams.serve(ex.req, ex.res, ex.url);
  if (first === "accounts" && parts.length === 1)
    return sendJson(ex.res, 200, accountsWire(site.home, site.clock.wallNow().getTime()));
  if (first !== "runs") return sendText(ex.res, 404, "not found");
  if (runName === undefined) return sendJson(ex.res, 200, runsOf(site));
  const run = isValidId(runName) ? site.model.run(runName) : null;
  if (run === null) return sendJson(ex.res, 404, { error: `no run ${runName.slice(0, 80)}` });
  await run.loaded;
  if (what === undefined) return sendJson(ex.res, 200, runOf(site, runName, run));
  const known =
    what === "dispatches" && id !== undefined && parts.length === 4 ? run.entries.get(id) : undefined;
  if (known === undefined) return sendJson(ex.res, 404, { error: "no such dispatch in the run" });
  return sendJson(ex.res, 200, await dispatchOf(site, runName, run, known));
}

function runsOf(site: Site): RunsWire {
  return { home: site.home, runs: site.model.summaries(), now: site.clock.wallNow().getTime() };
}

function runOf(site: Site, runName: string, run: RunModel): RunWire {
  return { run: runName, rows: run.rows(), bars: run.bars(), now: site.clock.wallNow().getTime() };
}

/** A dispatch's page: its entry with every file of its folder read, and the attempts of its chain. */
async function dispatchOf(site: Site, runName: string, run: RunModel, known: Entry): Promise<DispatchWire> {
  const entry = await run.fullEntry(known);
  return site.details.of(
    runName,
    entry,
    attemptsOf(entry, (i) => run.entries.get(i)),
  );
}

/**
 * Answers a POST: the only change the page can ask for, cancel, by run and id
 * (`/api/runs/<run>/dispatches/<id>/cancel`) — never by a path the request names. Its answer is
 * `catherd cancel --json`'s, or 409 with the error.
 */
export async function answerCancel(site: Site, ex: Exchange): Promise<void> {
  const body = await readBody(ex.req);
  if (body === null) return sendText(ex.res, 413, "refused: body too large");
  const target = cancelTarget(ex.parts);
  if (target === null) return sendText(ex.res, 404, "not found");
  const run = site.model.run(target.run);
  await run?.loaded;
  const dir = run?.dirOf(target.id) ?? null;
  if (run === null || dir === null) return sendJson(ex.res, 404, { error: "no such dispatch in the run" });
  try {
    const result = await cancelDispatch(dir, site.clock);
    void run.flush();
    return sendJson(ex.res, 200, result);
  } catch (error) {
    const e = error as { code?: string; message?: string; fix?: string };
    return sendJson(ex.res, 409, {
      error: { code: e.code ?? "E_INTERNAL", message: e.message ?? String(error), fix: e.fix ?? null },
    });
  }
}

/** The run and id of a cancel's path, or null when the path is anything else. */
function cancelTarget(parts: string[]): { run: string; id: string } | null {
  const [api, runs, runName, dispatches, id, action] = parts;
  if (
    api !== "api" ||
    runs !== "runs" ||
    dispatches !== "dispatches" ||
    action !== "cancel" ||
    parts.length !== 6 ||
    runName === undefined ||
    id === undefined ||
    !isValidId(runName)
  )
    return null;
  return { run: runName, id };
}

/** A request's body, at most MAX_BODY_BYTES (null past that, or when the request fails). */
function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString("utf8")));
    req.on("error", () => resolve(null));
  });
}
