import { mergeWindows, type QuotaWindow, type SeenWindow } from "../src/domain/spend/quota.js";
import { FILES } from "../src/folder/layout.js";
import { NOTHING, type Sensor } from "./sensor.js";

/** Writes one folder file (the loop's notice writer: a refused write is logged, never fatal). */
type Notice = (file: typeof FILES.quota, body: { windows: SeenWindow[] }) => void;

/**
 * Keeps quota.json: the windows the CLI reported (a line's `quota`, its usage log's), merged as quota.ts
 * says, each window stamped with the wall time of the line that reported it. Reports are merged as they
 * come and the file is written at most once per look of the loop (`flush`): an adopter replaying a long
 * backlog, which reports the same windows again from nothing, writes it once, not once per past report.
 */
export class QuotaKeeper {
  private windows: SeenWindow[] = [];
  private dirty = false;

  constructor(
    private readonly notice: Notice,
    private readonly wallOf: (mono: number) => number,
  ) {}

  /** One report, at the monotonic time of the line that made it. */
  note(quota: readonly QuotaWindow[], at: number): void {
    const merged = mergeWindows(this.windows, quota, new Date(this.wallOf(at)).toISOString());
    if (merged === null) return;
    this.windows = merged;
    this.dirty = true;
  }

  /** Writes quota.json if a report changed it since the last write. */
  flush(): void {
    if (!this.dirty) return;
    this.dirty = false;
    this.notice(FILES.quota, { windows: this.windows });
  }
}

/** quota.json, written at the look that follows the reports: after the sensors that read the CLI's output. */
export function quotaSensor(keeper: QuotaKeeper): Sensor {
  return {
    look() {
      keeper.flush();
      return NOTHING;
    },
  };
}
