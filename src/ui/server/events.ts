import type { IncomingMessage, ServerResponse } from "node:http";
import type { PushWire } from "../wire.js";
import { SECURITY_HEADERS, sendText } from "./guard.js";
import type { HomeModel } from "./home-model.js";

// /api/events: the server-sent events that tell each open page what changed (specs/ui.md, "Live, and
// light"). A stream is opened for the view its page shows (`?run=<r>&dispatch=<id>`) and gets only the
// pushes of that view, and every runs push, coalesced (the runs page: the accounts' too).

/** Idle streams get a comment this often, so that no proxy or browser takes them for dead. */
const KEEPALIVE_MS = 25_000;
/** Pushes of the runs list are coalesced to at most one per this long per page. */
const RUNS_PUSH_MS = 500;
/** More open pages than this are refused (503): each costs a subscriber and a timer. */
const MAX_STREAMS = 64;

/** What a page shows, as its stream's query names it (null: not given). */
interface StreamView {
  run: string | null;
  dispatch: string | null;
}

/** The open streams of one server: opened per request, each ended by its page or by closeAll. */
export class EventStreams {
  private readonly open = new Set<ServerResponse>();

  constructor(private readonly model: HomeModel) {}

  /** Answers GET /api/events: a stream that lasts until the page closes it (or closeAll). */
  serve(req: IncomingMessage, res: ServerResponse, url: URL): void {
    if (this.open.size >= MAX_STREAMS) {
      sendText(res, 503, "too many open pages");
      return;
    }
    const view = { run: url.searchParams.get("run"), dispatch: url.searchParams.get("dispatch") };
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "Content-Type": "text/event-stream; charset=utf-8",
      Connection: "keep-alive",
    });
    res.write("retry: 1000\n\n");
    this.open.add(res);
    const stopFeeding = this.feed(res, view);
    const keepAlive = setInterval(() => res.write(": keep-alive\n\n"), KEEPALIVE_MS);
    keepAlive.unref();
    req.on("close", () => {
      stopFeeding();
      clearInterval(keepAlive);
      this.open.delete(res);
    });
  }

  /** Ends every open stream (the server is closing). */
  closeAll(): void {
    for (const res of this.open) res.end();
  }

  /** Subscribes `res` to the model's pushes its view wants; returns how to stop (the timer included). */
  private feed(res: ServerResponse, view: StreamView): () => void {
    let runsPending: NodeJS.Timeout | null = null;
    const send = (push: PushWire) => res.write(`data: ${JSON.stringify(push)}\n\n`);
    const unsubscribe = this.model.subscribe((push) => {
      if (push.type === "accounts") {
        // Only the runs page shows the accounts.
        if (view.run === null) send(push);
      } else if (push.type !== "runs") {
        if (concerns(push, view)) send(push);
      } else if (runsPending === null) {
        // A runs push only says "fetch the list again": the first of a burst stands for all of it.
        runsPending = setTimeout(() => {
          runsPending = null;
          send(push);
        }, RUNS_PUSH_MS);
      }
    });
    return () => {
      unsubscribe();
      if (runsPending !== null) clearTimeout(runsPending);
    };
  }
}

/** Whether a push about a run (its rows, a dispatch's page, an ending) is for the page showing `view`. */
function concerns(push: Exclude<PushWire, { type: "runs" | "accounts" }>, view: StreamView): boolean {
  if (push.type === "dispatch") return push.run === view.run && push.dispatchId === view.dispatch;
  return push.run === view.run;
}
