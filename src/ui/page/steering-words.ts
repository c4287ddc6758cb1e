import { unansweredWords } from "../../domain/steering/question-words.js";
import type { MessageWire, QuestionWire, RowWire } from "../wire.js";

// A steerable dispatch's talk in words, as the page shows it: what a row waiting for an answer says, and a
// line for each message and question of its page (as `status` and `show` say them). Pure: no DOM.

/** "asks: q1 run: npm test" for a live row with a question nobody answered (+ how many more); null else. */
export function askingWords(r: Pick<RowWire, "state" | "asking" | "questions">): string | null {
  if (r.state === "recorded" || r.asking == null) return null;
  const more = (r.questions ?? 1) - 1;
  return `asks: ${r.asking.id} ${r.asking.asks.replace(/\s+/g, " ")}${more > 0 ? ` (+${more} more)` : ""}`;
}

/** "sandbox refused 2 (first 127.0.0.1:9)" for a sandboxed dispatch that was refused something; null else. */
export function sandboxWords(r: Pick<RowWire, "fence">): string | null {
  const f = r.fence;
  if (f == null || f.denied === 0) return null;
  return `sandbox refused ${f.denied}${f.firstDenied === null ? "" : ` (first ${f.firstDenied})`}`;
}

/** A message: its state (with why, for failed), and its first line. */
export function messageWords(m: MessageWire): { state: string; text: string } {
  const why = m.state === "failed" && m.why !== null ? `: ${m.why}` : "";
  return {
    state: `${m.state}${m.interrupt ? " (interrupt)" : ""}${why}`,
    text: m.head === "" ? "(not a message)" : m.head,
  };
}

/** How a question was answered and by whom, or until when it waits for one. */
export function responseWords(q: QuestionWire): string {
  const a = q.answer;
  if (a === null) return unansweredWords(q);
  const what = a.text !== null ? `answered ${JSON.stringify(a.text)}` : a.allow ? "allowed" : "denied";
  return `${what}${a.why === null ? "" : ` (${a.why})`} by ${a.by}`;
}
