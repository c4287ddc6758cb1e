import * as fs from "node:fs";
import * as path from "node:path";
import { calcPrice } from "@pydantic/genai-prices";
import { describe, expect, it } from "vitest";
import { codexBackend } from "../../src/backends/codex.js";
import { ZERO_COUNTS } from "../../src/domain/spend/usage.js";
import { billingOf, pricedUsage } from "../../src/folder/spend.js";
import { loadPricer, PRICE_TABLE } from "../../src/infra/prices.js";
import { outcome, recording } from "../backends/recorded.js";
import { ROOT } from "../helpers/folders.js";

const AT = new Date("2026-11-29T08:00:00Z");
const tokens = { ...ZERO_COUNTS, input: 1_000_000, cachedInput: 200_000, output: 100_000, reasoning: 40_000 };

/** The table's own per-million rates for a model, read from its entry (a tiered rate's base: below its tiers). */
function rates(model: string, provider: string): Record<string, number> {
  const found = calcPrice({ input_tokens: 1, output_tokens: 1 }, model, {
    providerId: provider,
    timestamp: AT,
  });
  if (found === null) throw new Error(`${provider}/${model} is not in the table`);
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(found.model_price)) {
    if (typeof value === "number") out[key] = value;
    else if (value !== undefined) out[key] = value.base;
  }
  return out;
}

describe("prices from the bundled table", () => {
  it("names the snapshot it prices with, pinned in package.json", () => {
    const installed = JSON.parse(
      fs.readFileSync(path.join(ROOT, "node_modules/@pydantic/genai-prices/package.json"), "utf8"),
    ) as { version: string };
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    expect(PRICE_TABLE).toBe(`@pydantic/genai-prices ${installed.version}`);
    expect(manifest.dependencies["@pydantic/genai-prices"]).toBe(installed.version);
  });

  it.each([
    ["openai", "gpt-5"],
    ["openai", "o3"],
    ["google", "gemini-2.5-flash"],
  ])(
    "prices %s %s at the table's own rates: uncached input, cache reads and output",
    async (provider, model) => {
      const price = await loadPricer();
      const r = rates(model, provider);
      const cacheRate = r.cache_read_mtok ?? r.input_mtok ?? 0;
      const want =
        ((tokens.input - tokens.cachedInput) * (r.input_mtok ?? 0) +
          tokens.cachedInput * cacheRate +
          tokens.output * (r.output_mtok ?? 0)) /
        1e6;
      expect(price(provider, model, tokens, AT)).toBeCloseTo(want, 9);
    },
  );

  it("prices Anthropic's cache writes at its cache-write rate", async () => {
    const price = await loadPricer();
    const r = rates("claude-sonnet-4-5", "anthropic");
    const small = { ...ZERO_COUNTS, input: 10_000, cachedInput: 6000, cacheWrite: 3000, output: 500 };
    const want =
      (1000 * (r.input_mtok ?? 0) +
        6000 * (r.cache_read_mtok ?? 0) +
        3000 * (r.cache_write_mtok ?? 0) +
        500 * (r.output_mtok ?? 0)) /
      1e6;
    expect(price("anthropic", "claude-sonnet-4-5", small, AT)).toBeCloseTo(want, 9);
  });

  it("prices a sum of requests at the base rates, not at the long-context tier one request would reach", async () => {
    const price = await loadPricer();
    const r = rates("claude-sonnet-4-5", "anthropic");
    const summed = { ...ZERO_COUNTS, input: 1_000_000, output: 10_000 };
    expect(price("anthropic", "claude-sonnet-4-5", summed, AT)).toBeCloseTo(
      (1_000_000 * (r.input_mtok ?? 0) + 10_000 * (r.output_mtok ?? 0)) / 1e6,
      9,
    );
  });

  it.each([
    ["openai", "mock-model"],
    ["mock", "gpt-5"],
    [null, "gpt-5"],
    ["google", "gemini-mock"],
  ])("gives no price, never a guess, for %s %s", async (provider, model) => {
    const price = await loadPricer();
    expect(price(provider, model, tokens, AT)).toBeNull();
  });

  it("gives no price for counts the table cannot decompose, rather than throwing", async () => {
    const price = await loadPricer();
    expect(
      price("openai", "gpt-5", { ...ZERO_COUNTS, input: 10, cachedInput: 20, output: 1 }, AT),
    ).toBeNull();
  });

  it("prices a recorded codex run on a model the table knows, and records which table did", async () => {
    const rec = recording("codex", "tool2");
    const got = outcome(codexBackend, rec);
    const billing = billingOf(codexBackend, { args: ["exec", "--json", "-m", "gpt-5", "-"], env: {} }, {});
    const spend = pricedUsage(got.usage.models, billing, await loadPricer(), AT);
    const r = rates("gpt-5", "openai");
    expect(spend.costSource).toBe("priced");
    expect(spend.pricedBy).toBe(PRICE_TABLE);
    expect(spend.costUsd).toBeCloseTo((20263 * (r.input_mtok ?? 0) + 29 * (r.output_mtok ?? 0)) / 1e6, 9);
    expect(spend.usage.models).toEqual([
      expect.objectContaining({ model: "gpt-5", input: 20263, output: 29, costSource: "priced" }),
    ]);
    // The same run on the recorded mock provider: no price, and no table named.
    const mock = billingOf(codexBackend, { args: rec.meta.args, env: {} }, {});
    expect(pricedUsage(got.usage.models, mock, await loadPricer(), AT)).toMatchObject({
      costUsd: null,
      costSource: null,
      pricedBy: null,
    });
  });
});
