import type { IncomingMessage, ServerResponse } from "node:http";
import type { Clock } from "../../infra/clock.js";
import type { Assets } from "./assets.js";
import type { Details } from "./detail.js";
import type { EventStreams } from "./events.js";
import type { HomeModel } from "./home-model.js";

/** What every route of one server reads from: built once by startUi, shared by every request. */
export interface Site {
  home: string;
  /** Dates the `now` of every answer (the wall clock). */
  clock: Clock;
  model: HomeModel;
  details: Details;
  assets: Assets;
  streams: EventStreams;
}

/** One request past the Guard: its path split at the slashes, empty parts dropped. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  parts: string[];
}
