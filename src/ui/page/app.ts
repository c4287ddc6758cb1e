import type { PushWire } from "../wire.js";
import { h, replace } from "./dom.js";

// What every view shares: the API, the live stream, notifications, the cancel confirmation, navigation.

export class SessionGone extends Error {}

/** GETs a JSON answer of the server; a 401 means the session is gone (the server was restarted). */
export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { Accept: "application/json" } });
  if (res.status === 401) throw new SessionGone("session gone");
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** A view: what it draws into `root`, what it does with a push, what it stops when left. */
export interface View {
  /** The query of /api/events it listens to. */
  stream: { run?: string; dispatch?: string };
  start(root: HTMLElement): Promise<void>;
  push(push: PushWire): void;
  stop(): void;
}

/** Follows a link of the page without reloading it. */
export function go(href: string): void {
  history.pushState(null, "", href);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

/** The live stream of changes; `onPush` gets each, `onState` whether it is connected. */
export function openStream(
  query: View["stream"],
  onPush: (push: PushWire) => void,
  onState: (connected: boolean) => void,
): EventSource {
  const params = new URLSearchParams();
  if (query.run !== undefined) params.set("run", query.run);
  if (query.dispatch !== undefined) params.set("dispatch", query.dispatch);
  const source = new EventSource(`/api/events?${params.toString()}`);
  source.onopen = () => onState(true);
  source.onerror = () => onState(false);
  source.onmessage = (event: MessageEvent<string>) => {
    try {
      onPush(JSON.parse(event.data) as PushWire);
    } catch {
      // a torn message is skipped; the next push or the view's own fetch brings the state
    }
  };
  return source;
}

/** Raises a browser notification when a dispatch of the run shown ends (when the person allowed them). */
export function notifyEnded(push: Extract<PushWire, { type: "ended" }>): void {
  if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
  try {
    new Notification(`catherd: ${push.name} ${push.status}`, {
      body: `run ${push.run}`,
      tag: push.dispatchId,
    });
  } catch {
    // some browsers allow notifications only from a service worker: the page's own toast still shows
  }
}

/** Asks before cancelling; resolves true when the person confirms. A dialog of the page, not confirm(). */
export function confirmCancel(what: string): Promise<boolean> {
  return new Promise((resolve) => {
    const keep = h("button", { class: "keep", type: "button" }, "Keep it running");
    const stop = h("button", { class: "danger confirm-cancel", type: "button" }, "Cancel it");
    const dialog = h(
      "div",
      { class: "modal", role: "dialog", "aria-modal": "true" },
      h(
        "div",
        { class: "modal-box" },
        h(
          "p",
          null,
          "Cancel ",
          h("strong", null, what),
          "? Its agent is stopped and it is recorded cancelled.",
        ),
        h("div", { class: "modal-actions" }, keep, stop),
      ),
    );
    const close = (answer: boolean) => {
      dialog.remove();
      resolve(answer);
    };
    keep.addEventListener("click", () => close(false));
    stop.addEventListener("click", () => close(true));
    dialog.addEventListener("keydown", (e) => {
      if (e.key === "Escape") close(false);
    });
    document.body.append(dialog);
    keep.focus();
  });
}

/** Sends the cancel; resolves to a line saying how it went. */
export async function cancel(run: string, dispatchId: string): Promise<string> {
  const res = await fetch(
    `/api/runs/${encodeURIComponent(run)}/dispatches/${encodeURIComponent(dispatchId)}/cancel`,
    {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    },
  );
  if (!res.ok) return `cancel refused: ${res.status} ${await res.text()}`;
  const body = (await res.json()) as { cancelled?: { state?: string; status?: string | null } };
  return `cancel: ${body.cancelled?.status ?? body.cancelled?.state ?? "requested"}`;
}

/** A short message at the foot of the page. */
export function toast(text: string): void {
  const box = document.getElementById("toasts") ?? document.body.appendChild(h("div", { id: "toasts" }));
  const item = h("div", { class: "toast" }, text);
  box.append(item);
  setTimeout(() => item.remove(), 6000);
}

/** The notification switch: asks the browser once, on the person's click. */
export function notifyButton(): HTMLElement {
  const button = h("button", { class: "notify", type: "button" });
  const label = () => {
    const state = typeof Notification === "undefined" ? "unsupported" : Notification.permission;
    replace(
      button,
      state === "granted"
        ? "Notifications on"
        : state === "denied"
          ? "Notifications blocked"
          : "Notify me when one ends",
    );
    button.disabled = state !== "default";
  };
  button.addEventListener("click", () => {
    void Notification.requestPermission().then(label);
  });
  label();
  return button;
}
