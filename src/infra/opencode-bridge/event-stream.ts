import type { ServeClient } from "./serve-client.js";

// The server's event stream (GET /event, server-sent events): each `data:` line a JSON event. It is known
// to close a moment into a turn (anomalyco/opencode#38458), so it is opened again as soon as it ends, for
// as long as the bridge runs; what a closed stream missed, the bridge's polls make up (a turn's end, the
// asks). An event larger than the bound is dropped with its stream, which is opened again.

/** The most one event may hold before the stream is dropped and opened again. */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;
/** The pause before opening a closed stream again. */
const REOPEN_MS = 200;

/** Follows the stream until `signal` aborts, calling `onEvent` with each event that parses. */
export async function followEvents(
  client: ServeClient,
  onEvent: (event: Record<string, unknown>) => void,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    try {
      const response = await client.events(signal);
      if (response.body !== null) await readEvents(response.body, onEvent);
    } catch {
      // closed, refused or timed out: opened again below
    }
    if (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, REOPEN_MS));
  }
}

async function readEvents(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: Record<string, unknown>) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    if (buffer.length > MAX_EVENT_CHARS) return;
    let end = buffer.indexOf("\n");
    while (end >= 0) {
      dataOf(buffer.slice(0, end), onEvent);
      buffer = buffer.slice(end + 1);
      end = buffer.indexOf("\n");
    }
  }
}

function dataOf(line: string, onEvent: (event: Record<string, unknown>) => void): void {
  if (!line.startsWith("data:")) return;
  try {
    const event: unknown = JSON.parse(line.slice("data:".length));
    if (typeof event === "object" && event !== null && !Array.isArray(event)) {
      onEvent(event as Record<string, unknown>);
    }
  } catch {
    // not JSON: not an event
  }
}
