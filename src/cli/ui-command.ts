import { spawn } from "node:child_process";
import { CatherdError } from "../domain/errors.js";
import { isValidId } from "../domain/ids.js";
import { systemClock } from "../infra/clock.js";
import { catherdHome } from "../infra/paths.js";
import { type Command, stringOption } from "./command-io.js";

export const uiCommand: Command<{ url: string } | null> = {
  name: "ui",
  synopsis: "",
  positionals: 0,
  summary:
    "Serves a live dashboard of every run of the home in the browser (specs/ui.md) and prints its address, " +
    "with a token made for this start: catherd ui: http://127.0.0.1:PORT/?token=… It listens on loopback " +
    "unless --host says otherwise; it opens the address in a browser where a desktop is there (never in CI, " +
    "never with --no-open). A foreground command: Ctrl-C ends it; the dispatches go on.",
  json: "{url}",
  options: {
    port: {
      type: "string",
      value: "<n>",
      description: "the port to listen on",
      integer: true,
      default: "any free one",
    },
    host: { type: "string", value: "<h>", description: "the address to listen on", default: "127.0.0.1" },
    run: {
      type: "string",
      value: "<r>",
      description: "the run whose page the address opens",
      default: "the list of runs",
    },
    "no-open": { type: "boolean", description: "print the address, do not open a browser" },
  },
  async handler(input) {
    const portText = stringOption(input, "port");
    const port = portText === undefined ? 0 : Number(portText);
    if (!/^\d{1,5}$/.test(portText ?? "0") || port > 65_535) {
      throw new CatherdError("E_INPUT_INVALID", `--port ${JSON.stringify(portText)} is not a port`, {
        fix: "give --port a whole number from 1 to 65535, or leave it out for any free one",
      });
    }
    const run = stringOption(input, "run") ?? null;
    if (run !== null && !isValidId(run)) {
      throw new CatherdError(
        "E_INPUT_INVALID",
        `--run ${JSON.stringify(run.slice(0, 80))} is not a run name`,
        {
          fix: "catherd status --run <r>: a name of A-Z a-z 0-9 . _ -",
        },
      );
    }
    const host = stringOption(input, "host") ?? "127.0.0.1";
    // The dashboard's code loads here and only here: no other verb pays for it.
    const { startUi } = await import("../ui/server/ui-server.js");
    const server = await startUi({ home: catherdHome(), host, port, run, clock: systemClock }).catch(
      (error: unknown) => {
        const e = error as NodeJS.ErrnoException;
        throw new CatherdError("E_INPUT_INVALID", `cannot listen on ${host}:${port}: ${e.message}`, {
          fix: e.code === "EADDRINUSE" ? "give another --port, or leave it out" : "check --host and --port",
          cause: error,
        });
      },
    );
    process.stdout.write(`catherd ui: ${server.url}\n`);
    if (!["127.0.0.1", "localhost", "::1"].includes(host)) {
      process.stderr.write(
        `catherd ui: warning: listening on ${host}: anyone who can reach this address and has the token can see every dispatch and cancel them\n`,
      );
    }
    if (input.values["no-open"] !== true) openBrowser(server.url);
    await untilInterrupted();
    await server.close();
    return { data: input.json ? { url: server.url } : null, text: "" };
  },
};

/** Resolves on Ctrl-C (SIGINT) or SIGTERM: the normal end of a foreground server, exit 0. */
function untilInterrupted(): Promise<void> {
  // The CLI's own SIGINT answer (exit 130, "interrupted") is for commands cut short; this one is done.
  process.removeAllListeners("SIGINT");
  return new Promise((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
}

/**
 * Opens the address in the person's browser where a desktop is there: never in CI, never without a
 * display. Best effort; the address is printed either way.
 */
function openBrowser(url: string): void {
  const env = process.env;
  if (env.CI !== undefined && env.CI !== "" && env.CI !== "false") return;
  const opener =
    process.platform === "darwin"
      ? "open"
      : process.platform === "linux" && (env.DISPLAY || env.WAYLAND_DISPLAY)
        ? "xdg-open"
        : null;
  if (opener === null) return;
  const child = spawn(opener, [url], { detached: true, stdio: "ignore" });
  child.once("error", () => {});
  child.unref();
}
