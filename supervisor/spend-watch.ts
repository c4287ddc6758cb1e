import type { Backend, Billing } from "../src/backends/types.js";
import { type Crossing, crossing, type Spend, type SpendCaps } from "../src/domain/spend/budget.js";
import { billedTokens, type ModelAccount, totalOf } from "../src/domain/spend/usage.js";
import { billingOf, type PricedUsage, pricedUsage, wantsTable } from "../src/folder/spend.js";
import { loadPricer, type Pricer } from "../src/infra/prices.js";
import type { SupervisorLog } from "./log.js";

// What the dispatch has spent while it runs, against its caps (specs/supervisor.md, "Spending"). The
// price table is loaded only when a --max-cost must be watched and some tokens have no dollar figure of
// the CLI's yet: a dispatch without --max-cost never loads it here (its record prices at the end).

/** supervisor.log gets this many usage-ignored lines in full; after them, one line per this many more. */
const IGNORED_LINES = 20;
const IGNORED_EVERY = 1000;

export class SpendWatch {
  readonly billing: Billing;
  private pricer: Pricer | null = null;
  private ignored = 0;
  private warnedUnpriced = false;

  constructor(
    backend: Backend,
    spec: { args: string[]; env: Record<string, string> },
    private readonly caps: SpendCaps,
    private readonly log: SupervisorLog,
  ) {
    this.billing = billingOf(backend, spec);
  }

  /** Whether a cap is set: without one the loop never asks for the spend. */
  get capped(): boolean {
    return this.caps.maxTokens !== null || this.caps.maxCostUsd !== null;
  }

  /** A usage report of `file` that did not add up: logged, the first ones in full, then a count. */
  ignore(file: string, why: string): void {
    this.ignored += 1;
    if (this.ignored <= IGNORED_LINES || this.ignored % IGNORED_EVERY === 0) {
      this.log("usage-ignored", { file, why, count: this.ignored });
    }
  }

  /** Usage and cost as far as known now: the CLI's figures, and catherd's prices once the table is loaded. */
  priced(accounts: readonly ModelAccount[], at: Date): PricedUsage {
    return pricedUsage(accounts, this.billing, this.pricer, at);
  }

  /**
   * The spend so far: tokens billed and dollars. With `dollars` (a --max-cost, or a run's usd budget, to
   * watch), the price table is loaded first when some tokens have no figure of the CLI's.
   */
  async spendNow(accounts: readonly ModelAccount[], at: Date, dollars: boolean): Promise<Spend> {
    if (dollars && this.pricer === null && wantsTable(accounts, this.billing)) {
      this.pricer = await loadPricer();
      this.log("prices-loaded", {});
    }
    const priced = this.priced(accounts, at);
    return {
      tokens: billedTokens(totalOf(accounts)),
      costUsd: priced.costUsd,
      priced: priced.costSource === "priced",
    };
  }

  /** The cap the spend has reached, or null. Loads the price table first when --max-cost needs it. */
  async crossed(accounts: readonly ModelAccount[], at: Date): Promise<Crossing | null> {
    const spend = await this.spendNow(accounts, at, this.caps.maxCostUsd !== null);
    if (this.caps.maxCostUsd !== null && spend.costUsd === null && spend.tokens > 0) {
      this.unpriced(accounts);
    }
    return crossing(this.caps, spend);
  }

  /** --max-cost cannot be watched while some tokens have no price: said once, in supervisor.log. */
  private unpriced(accounts: readonly ModelAccount[]): void {
    if (this.warnedUnpriced) return;
    this.warnedUnpriced = true;
    this.log("max-cost-unpriced", {
      provider: this.billing.provider,
      models: accounts.map((a) => a.model ?? this.billing.model),
    });
  }
}
