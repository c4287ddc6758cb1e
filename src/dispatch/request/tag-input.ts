import { MAX_TAGS, tagSchema } from "../../domain/quota/quota-schemas.js";
import type { Concern, Recorded } from "./concern.js";
import { invalid, shownValue } from "./text.js";

// `dispatch --tag T` (repeatable; specs/quota.md, "Budgets by period"): names under which the budgets by
// tag count the dispatch. Written to admit.json, the live marker and the record (`tags`); a follow-up and
// a chain's next attempt carry them.

export interface RawTagInput {
  tag?: readonly string[] | undefined;
}

export interface TagRequest {
  /** Its tags, each once, in the order given; empty: none. */
  tags: string[];
}

export const tagging = {
  options: {
    tag: {
      type: "string",
      value: "<tag>",
      multiple: true,
      description: `a name the budgets by tag count this dispatch under (catherd budget set tag:<tag> …); repeatable, at most ${MAX_TAGS}`,
    },
  },
  validate: (raw) => ({ tags: tagsOf(raw.tag ?? []) }),
  toAdmit: ({ tags }) => (tags.length === 0 ? {} : { tags }),
  carry: (recorded: Recorded) => ({ tags: [...(recorded.admit?.tags ?? recorded.record?.tags ?? [])] }),
} satisfies Concern<RawTagInput, TagRequest>;

/** The tags given: each 1-40 of a-z 0-9 . _ -, at most MAX_TAGS, repeats dropped. */
function tagsOf(given: readonly string[]): string[] {
  const fix = "give --tag 1-40 of a-z 0-9 . _ -, starting with a letter or digit (--tag nightly)";
  if (given.length > MAX_TAGS)
    throw invalid("--tag", `given ${given.length} times: at most ${MAX_TAGS}`, fix);
  for (const tag of given) {
    if (!tagSchema.safeParse(tag).success) throw invalid("--tag", `${shownValue(tag)}: not a tag`, fix);
  }
  return [...new Set(given)];
}
