import type { RowWire } from "../wire.js";

// A race in the run's table (specs/ui.md, "A run"): one line of its own that opens into its attempts. Pure:
// the table's lines in order, and the words of a race's line, from the rows the server sent.

/** The attempts of one race, in the order of their numbers. */
export interface RaceGroup {
  key: string;
  name: string;
  rows: RowWire[];
}

/** One line of the table: a dispatch's row (an attempt names its race's key), or a race's own line. */
export type TableLine =
  | { kind: "row"; row: RowWire; race: string | null }
  | { kind: "race"; group: RaceGroup };

/** The key of a race's line: its id, which no dispatch id can be mistaken for beside the prefix. */
export function raceKey(race: NonNullable<RowWire["race"]>): string {
  return `race:${race.raceId}`;
}

/**
 * The table's lines, given the rows in their order: a race's line where its first attempt in that order
 * stands, then its attempts by number; every other row where it stands.
 */
export function tableLines(ordered: readonly RowWire[]): TableLine[] {
  const groups = new Map<string, RaceGroup>();
  for (const row of ordered) {
    if (row.race == null) continue;
    const key = raceKey(row.race);
    const group = groups.get(key) ?? { key, name: row.race.name, rows: [] };
    group.rows.push(row);
    groups.set(key, group);
  }
  const lines: TableLine[] = [];
  const placed = new Set<string>();
  for (const row of ordered) {
    if (row.race == null) {
      lines.push({ kind: "row", row, race: null });
      continue;
    }
    const key = raceKey(row.race);
    if (placed.has(key)) continue;
    placed.add(key);
    const group = groups.get(key) as RaceGroup;
    group.rows.sort((a, b) => (a.race?.attempt ?? 0) - (b.race?.attempt ?? 0));
    lines.push(
      { kind: "race", group },
      ...group.rows.map((r) => ({ kind: "row" as const, row: r, race: key })),
    );
  }
  return lines;
}

/** A race's state as its line shows it: racing while an attempt lives, else ended. */
export function raceState(group: RaceGroup): "racing" | "ended" {
  return group.rows.some((r) => r.state !== "recorded") ? "racing" : "ended";
}

/**
 * "3 attempts: 2 running, 1 ok · 1 passed its check" — how its attempts stand, by state (by status once
 * recorded), and how many passed the check that judges them (the row's `check`).
 */
export function raceWords(group: RaceGroup): string {
  const counts = new Map<string, number>();
  for (const r of group.rows) {
    const key = r.state === "recorded" ? (r.status ?? "recorded") : r.state;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const parts = [...counts].map(([key, n]) => `${n} ${key}`);
  const passed = group.rows.filter((r) => r.state === "recorded" && r.check?.passed === true).length;
  return `${group.rows.length} attempts: ${parts.join(", ")}${passed === 0 ? "" : ` · ${passed} passed its check`}`;
}
