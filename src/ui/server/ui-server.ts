import * as http from "node:http";
import type { Clock } from "../../infra/clock.js";
import { hostsFor, shownAuthority } from "./address.js";
import { loadAssets } from "./assets.js";
import { Details } from "./detail.js";
import { EventStreams } from "./events.js";
import { Guard } from "./guard.js";
import { HomeModel } from "./home-model.js";
import { answerFailure, route } from "./routes.js";
import type { Site } from "./site.js";

// The dashboard's server (specs/ui.md): node's own http module — the page needs a handful of routes, a
// stream of server-sent events and strict headers, which a framework would add nothing to but weight and
// a second set of defaults to audit. It serves the bundled page (dist/ui/), a JSON API over the runs of
// one home, and /api/events, a stream of what changed. Everything passes the Guard first (routes.ts).

export interface UiOptions {
  home: string;
  /** The address to listen on: loopback unless told otherwise. */
  host: string;
  /** 0: any free port. */
  port: number;
  /** The run whose page the printed address opens. */
  run: string | null;
  /** What dates the pages' and pushes' `now` (the wall clock: the page sets its times against it). */
  clock: Clock;
}

export interface UiServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the server and resolves once it listens. */
export async function startUi(options: UiOptions): Promise<UiServer> {
  // The page's files first: a dashboard that cannot show its page starts nothing.
  const assets = loadAssets(import.meta.url);
  const model = new HomeModel(options.home, options.clock);
  const site: Site = {
    home: options.home,
    clock: options.clock,
    model,
    details: new Details(options.clock),
    assets,
    streams: new EventStreams(model),
  };
  // The Guard needs the port, known only once the server listens; requests before that are refused.
  let guard: Guard | null = null;
  const server = http.createServer((req, res) => {
    void route(site, guard, req, res).catch((error: unknown) => answerFailure(res, error));
  });
  const port = await listen(server, options);
  guard = new Guard(hostsFor(options.host, port), port);
  const where = options.run === null ? "/" : `/runs/${options.run}`;
  return {
    url: `http://${shownAuthority(options.host, port)}${where}?token=${guard.token}`,
    port,
    close: () => closeSite(server, site),
  };
}

/** Listens on the options' host and port; resolves with the port it got (a free one for port 0). */
async function listen(server: http.Server, options: UiOptions): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  return typeof address === "object" && address !== null ? address.port : options.port;
}

/** Stops watching, ends every stream and connection; resolves once the server has closed. */
function closeSite(server: http.Server, site: Site): Promise<void> {
  return new Promise<void>((resolve) => {
    site.model.close();
    site.streams.closeAll();
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
