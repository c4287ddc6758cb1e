import { describe, expect, it } from "vitest";
import { tagging } from "../../src/dispatch/request/tag-input.js";

// `dispatch --tag` (specs/quota.md, "Budgets by period"): checked, written to admit.json, carried.

describe("--tag", () => {
  it("takes tags in the order given, each once, and writes them to admit.json", () => {
    const part = tagging.validate({ tag: ["nightly", "x.1", "nightly"] });
    expect(part).toEqual({ tags: ["nightly", "x.1"] });
    expect(tagging.toAdmit(part)).toEqual({ tags: ["nightly", "x.1"] });
    expect(tagging.toAdmit(tagging.validate({}))).toEqual({});
  });

  it.each([
    [["Nightly"], /--tag "Nightly": not a tag/],
    [["-x"], /not a tag/],
    [["a".repeat(41)], /not a tag/],
    [[""], /not a tag/],
    [Array.from({ length: 17 }, (_, i) => `t${i}`), /--tag given 17 times: at most 16/],
  ])("refuses %j", (tag, message) => {
    expect(() => tagging.validate({ tag })).toThrow(message);
  });

  it("is carried to a follow-up and a chain's next attempt, from admit.json, else the record", () => {
    const recorded = { spec: null, ladder: null, admit: { tags: ["nightly"] } } as never;
    expect(tagging.carry(recorded)).toEqual({ tags: ["nightly"] });
    expect(tagging.carry({ spec: null, ladder: null, record: { tags: ["x"] } } as never)).toEqual({
      tags: ["x"],
    });
  });
});
