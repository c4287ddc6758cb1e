import type { Turn } from "../dispatch/follow-up/conversation.js";
import { inertText } from "../domain/text/inert-text.js";

/**
 * A conversation for people, turn by turn: "turn 2 20261201T101500Z-k3x9qa ok 2026-12-01T10:15:00Z",
 * then "  brief: …" and the reply, indented.
 */
export function conversationText(turns: readonly Turn[]): string {
  const lines: string[] = [];
  for (const t of turns) {
    lines.push(`turn ${t.turn} ${t.dispatchId} ${t.status ?? t.state} ${t.admittedAt ?? "?"}`);
    lines.push(`  brief: ${t.brief === null ? "(none)" : inertText(t.brief)}`);
    const reply = t.reply === null ? ["(no reply)"] : inertText(t.reply).split("\n");
    lines.push(...reply.map((l, i) => `  ${i === 0 ? "reply: " : "       "}${l}`));
  }
  return `${lines.join("\n")}\n`;
}

/** The one line `show` adds for a dispatch that is a turn of a longer conversation. */
export function conversationLine(turns: readonly Turn[], dispatchId: string): string | null {
  if (turns.length < 2) return null;
  const at = turns.find((t) => t.attempts.includes(dispatchId))?.turn ?? "?";
  const listed = turns.map((t) => `${t.turn}:${t.dispatchId} ${t.status ?? t.state}`).join(" → ");
  return `conversation: turn ${at} of ${turns.length} (${listed})`;
}
