import type { DispatchWire, PushWire } from "../../wire.js";
import { getJson, notifyEnded, toast, type View } from "../app.js";
import { morph } from "../dom.js";
import { dispatchHead } from "./dispatch-head.js";
import { dispatchParts } from "./dispatch-parts.js";

// A dispatch's view: its page (dispatch-head.ts, then dispatch-parts.ts) fetched and drawn whole, its
// unchanged sections kept in place. A push about it says its folder moved: the page is fetched again, at most once per REFETCH_MS, keeping the
// window's scroll and, when the events list was scrolled to its end, keeping it there.

const REFETCH_MS = 300;

export class DispatchView implements View {
  readonly stream: { run: string; dispatch: string };
  private root: HTMLElement | null = null;
  private refetch: number | null = null;

  constructor(
    private readonly run: string,
    private readonly id: string,
  ) {
    this.stream = { run, dispatch: id };
  }

  async start(root: HTMLElement): Promise<void> {
    this.root = root;
    await this.load();
  }

  private async load(): Promise<void> {
    const data = await getJson<DispatchWire>(
      `/api/runs/${encodeURIComponent(this.run)}/dispatches/${encodeURIComponent(this.id)}`,
    );
    if (this.root === null) return;
    const events = this.root.querySelector(".events");
    const stick = events === null || events.scrollTop + events.clientHeight >= events.scrollHeight - 4;
    const scroll = window.scrollY;
    morph(this.root, ...this.sections(data));
    window.scrollTo(0, scroll);
    const list = this.root.querySelector(".events");
    if (list !== null && stick) list.scrollTop = list.scrollHeight;
  }

  push(push: PushWire): void {
    if (push.type === "ended" && push.run === this.run) {
      notifyEnded(push);
      toast(`${push.name}: ${push.status}`);
    }
    const mine =
      (push.type === "dispatch" && push.dispatchId === this.id) ||
      (push.type === "rows" && push.run === this.run && push.rows.some((r) => r.dispatchId === this.id));
    if (!mine || this.refetch !== null) return;
    this.refetch = window.setTimeout(() => {
      this.refetch = null;
      void this.load();
    }, REFETCH_MS);
  }

  stop(): void {
    this.root = null;
    if (this.refetch !== null) clearTimeout(this.refetch);
  }

  /** The page's head and parts, in order, leaving out those that do not apply. */
  private sections(d: DispatchWire): Node[] {
    return [...dispatchHead(d, this.run), ...dispatchParts(d)].filter((n): n is HTMLElement => n !== null);
  }
}
