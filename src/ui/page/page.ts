import { go, openStream, SessionGone, type View } from "./app.js";
import { h, link, replace } from "./dom.js";
import { DispatchView } from "./views/dispatch-view.js";
import { RunView } from "./views/run.js";
import { RunsView } from "./views/runs.js";

// The dashboard's page (specs/ui.md): three views, each with its own address — / (the runs),
// /runs/<run>, /runs/<run>/dispatches/<id> — drawn from the JSON API and kept live by /api/events.

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function viewFor(pathname: string): View | null {
  const parts = pathname
    .split("/")
    .filter((p) => p !== "")
    .map(decodeURIComponent);
  if (parts.length === 0) return new RunsView();
  const [runs, run, dispatches, id] = parts;
  if (runs !== "runs" || run === undefined || !ID.test(run)) return null;
  if (parts.length === 2) return new RunView(run);
  if (parts.length === 4 && dispatches === "dispatches" && id !== undefined && ID.test(id))
    return new DispatchView(run, id);
  return null;
}

const main = h("main", { id: "view" });
const liveDot = h("span", { class: "live-dot off", title: "connecting" });
const crumbs = h("nav", { class: "crumbs" });
document.body.append(h("header", null, link("/", h("strong", null, "catherd")), crumbs, liveDot), main);

let current: View | null = null;
let stream: EventSource | null = null;

async function show(): Promise<void> {
  current?.stop();
  stream?.close();
  const view = viewFor(location.pathname);
  const parts = location.pathname
    .split("/")
    .filter((p) => p !== "")
    .map(decodeURIComponent);
  replace(
    crumbs,
    parts[1] === undefined ? null : link(`/runs/${encodeURIComponent(parts[1])}`, parts[1]),
    parts[3] === undefined ? null : " / ",
    parts[3] ?? null,
  );
  document.title =
    parts.length === 0 ? "catherd" : `catherd · ${parts.filter((_, i) => i % 2 === 1).join(" / ")}`;
  current = view;
  if (view === null) {
    replace(main, h("p", { class: "empty" }, "No such page."));
    return;
  }
  stream = openStream(
    view.stream,
    (push) => view.push(push),
    (connected) => {
      liveDot.className = `live-dot ${connected ? "on" : "off"}`;
      liveDot.title = connected ? "live" : "reconnecting";
    },
  );
  try {
    await view.start(main);
  } catch (error) {
    replace(
      main,
      h(
        "p",
        { class: "error" },
        error instanceof SessionGone
          ? "This page's session is gone (catherd ui was restarted): open the address it printed."
          : `Cannot load this page: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
  }
}

document.addEventListener("click", (event) => {
  const a = (event.target as Element | null)?.closest("a[data-route]");
  if (a === null || a === undefined || event.ctrlKey || event.metaKey || event.shiftKey) return;
  event.preventDefault();
  go(a.getAttribute("href") ?? "/");
});
window.addEventListener("popstate", () => void show());
void show();
