import * as fs from "node:fs";
import type { Backend, Billing } from "../backends/types.js";
import type { SpecFile, UsageField } from "../domain/schemas.js";
import {
  billedTokens,
  type CostSource,
  costOf,
  type ModelAccount,
  needsPrice,
  type PriceOf,
  type TokenCounts,
  totalOf,
} from "../domain/spend/usage.js";
import type { Tokens } from "../domain/watch/facts.js";
import { loadPricer, PRICE_TABLE, type Pricer } from "../infra/prices.js";

// A dispatch's usage as record.json and activity.json say it (specs/record.md, "usage"): the accounts
// the stream folded, their model named where the stream named none, and their dollars — the CLI's own,
// else catherd's price of the tokens from the bundled table, else none.

/** Who bills a dispatch, from its spec's command line and the environment it ran in. */
export function billingOf(
  backend: Backend,
  spec: Pick<SpecFile, "args" | "env"> | null,
  environment: NodeJS.ProcessEnv = process.env,
): Billing {
  if (backend.billing === undefined) return { provider: null, model: null };
  return backend.billing({
    args: spec?.args ?? [],
    env: { ...environment, ...(spec?.env ?? {}) },
    readText: readSmallText,
  });
}

/** A configuration file's text, or null: missing, unreadable, or over 1 MiB (no configuration is). */
function readSmallText(file: string): string | null {
  try {
    const stat = fs.statSync(file);
    return stat.isFile() && stat.size <= 1024 * 1024 ? fs.readFileSync(file, "utf8") : null;
  } catch {
    return null;
  }
}

export interface PricedUsage {
  /** schema 1's summary: input (cached and cache writes included), cached, output. */
  tokens: Tokens;
  usage: UsageField;
  costUsd: number | null;
  costSource: CostSource | null;
  /** PRICE_TABLE when catherd priced some of it, else null. */
  pricedBy: string | null;
}

/** The price of a model's tokens for a dispatch billed by `billing`; null without a pricer or a price. */
function priceFor(billing: Billing, pricer: Pricer | null, at: Date): PriceOf {
  return (model, tokens) => {
    const name = model ?? billing.model;
    if (pricer === null || name === null) return null;
    return pricer(billing.provider, name, tokens, at);
  };
}

function countsField(counts: TokenCounts): TokenCounts {
  return {
    input: counts.input,
    cachedInput: counts.cachedInput,
    cacheWrite: counts.cacheWrite,
    output: counts.output,
    reasoning: counts.reasoning,
  };
}

function saysSomething(account: ModelAccount): boolean {
  return billedTokens(account.tokens) > 0 || (account.reportedUsd ?? 0) > 0;
}

/** Usage and cost from accounts, priced with `pricer` (null: only the CLI's own figures count). */
export function pricedUsage(
  accounts: readonly ModelAccount[],
  billing: Billing,
  pricer: Pricer | null,
  at: Date,
): PricedUsage {
  const price = priceFor(billing, pricer, at);
  const total = totalOf(accounts);
  const cost = costOf(accounts, price);
  return {
    tokens: { input: total.input, cached: total.cachedInput, output: total.output },
    usage: {
      ...countsField(total),
      // A model that used nothing and cost nothing (a failed request's empty stats) says nothing.
      models: accounts.filter(saysSomething).map((a) => {
        const own = costOf([a], price);
        return {
          model: a.model ?? billing.model,
          ...countsField(a.tokens),
          costUsd: own.usd,
          costSource: own.source,
        };
      }),
    },
    costUsd: cost.usd,
    costSource: cost.source,
    pricedBy: cost.source === "priced" ? PRICE_TABLE : null,
  };
}

/**
 * Whether pricing `accounts` needs the table: some tokens have no figure of the CLI's, and a provider and
 * model to look them up by (without those, no table can price them).
 */
export function wantsTable(accounts: readonly ModelAccount[], billing: Billing): boolean {
  if (billing.provider === null || !needsPrice(accounts)) return false;
  return accounts.some((a) => needsPrice([a]) && (a.model ?? billing.model) !== null);
}

/** As pricedUsage, loading the price table only when wantsTable says it is needed. */
export async function priceUsage(
  accounts: readonly ModelAccount[],
  billing: Billing,
  at: Date,
): Promise<PricedUsage> {
  const pricer = wantsTable(accounts, billing) ? await loadPricer() : null;
  return pricedUsage(accounts, billing, pricer, at);
}
