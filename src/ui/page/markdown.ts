// A small Markdown reader for agents' replies: headings, paragraphs, emphasis, inline code, fenced and
// indented code, lists (nested), block quotes, rules and links. It makes a tree, never HTML: the page
// builds DOM nodes from the tree with text nodes only (markdown-dom.ts), so no markup an agent writes can
// become an element or an attribute, and a link keeps only an http(s) or mailto address (a `javascript:`
// link becomes text). Raw HTML in the reply shows as the text it is. Pure: no DOM. Nesting is bounded, so
// a hostile reply cannot exhaust the stack.

export type Inline =
  | { t: "text"; v: string }
  | { t: "code"; v: string }
  | { t: "em" | "strong"; c: Inline[] }
  | { t: "link"; href: string | null; c: Inline[] }
  | { t: "br" };

export type Block =
  | { t: "h"; level: number; c: Inline[] }
  | { t: "p"; c: Inline[] }
  | { t: "code"; lang: string; v: string }
  | { t: "list"; ordered: boolean; start: number; items: Block[][] }
  | { t: "quote"; c: Block[] }
  | { t: "hr" };

const MAX_DEPTH = 12;
/** How far ahead a closing mark is looked for: bounded, so unmatched marks cost linear time. */
const SPAN_LIMIT = 1000;
/** A paragraph longer than this is shown as plain text. */
const MAX_INLINE_CHARS = 50_000;

// Sticky: each matches at one place (lastIndex), never copying the rest of the text.
const TICKS = /`+/y;
const LINK = /\[([^\]\n]{0,500})\]\(\s*<?([^\s)>]{0,2000})>?(?:\s+"[^"\n]{0,200}")?\s*\)/y;
const AUTOLINK = /<((?:https?:\/\/|mailto:)[^\s<>]{1,2000})>/iy;

/** Where `needle` occurs in `text` from `from`, within `limit` characters; -1 when not. */
function findWithin(text: string, needle: string, from: number, limit = SPAN_LIMIT): number {
  const last = Math.min(text.length - needle.length, from + limit);
  for (let j = from; j <= last; j++) if (text.startsWith(needle, j)) return j;
  return -1;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(?: *\1){2,} *$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])( +|$)/;

export function parseMarkdown(text: string): Block[] {
  return blocks(text.replace(/\r\n?/g, "\n").split("\n"), 0);
}

function blocks(lines: string[], depth: number): Block[] {
  const out: Block[] = [];
  if (depth > MAX_DEPTH) {
    out.push({ t: "p", c: [{ t: "text", v: lines.join("\n") }] });
    return out;
  }
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (line.trim() === "") {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence !== null) {
      const mark = fence[1] as string;
      const body: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] as string).trimStart().startsWith(mark))
        body.push(lines[i++] as string);
      i++;
      out.push({ t: "code", lang: fence[2] ?? "", v: body.join("\n") });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading !== null) {
      out.push({ t: "h", level: (heading[1] as string).length, c: inlines(heading[2] ?? "", depth) });
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push({ t: "hr" });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (i < lines.length && QUOTE.test(lines[i] as string))
        body.push((lines[i++] as string).replace(QUOTE, ""));
      out.push({ t: "quote", c: blocks(body, depth + 1) });
      continue;
    }
    const item = ITEM.exec(line);
    if (item !== null) {
      i = list(lines, i, depth, out);
      continue;
    }
    if (/^ {4}|^\t/.test(line)) {
      const body: string[] = [];
      while (i < lines.length && (/^ {4}|^\t/.test(lines[i] as string) || (lines[i] as string).trim() === ""))
        body.push((lines[i++] as string).replace(/^ {4}|^\t/, ""));
      while (body.at(-1)?.trim() === "") body.pop();
      out.push({ t: "code", lang: "", v: body.join("\n") });
      continue;
    }
    const para: string[] = [];
    while (i < lines.length) {
      const l = lines[i] as string;
      if (
        l.trim() === "" ||
        FENCE.test(l) ||
        HEADING.test(l) ||
        RULE.test(l) ||
        QUOTE.test(l) ||
        ITEM.test(l)
      )
        break;
      para.push(l);
      i++;
    }
    out.push({ t: "p", c: inlines(para.join("\n"), depth) });
  }
  return out;
}

/** A list starting at `lines[start]`; returns the index after it. */
function list(lines: string[], start: number, depth: number, out: Block[]): number {
  const first = ITEM.exec(lines[start] as string) as RegExpExecArray;
  const ordered = /\d/.test(first[2] as string);
  const items: Block[][] = [];
  let i = start;
  while (i < lines.length) {
    const m = ITEM.exec(lines[i] as string);
    if (m === null || /\d/.test(m[2] as string) !== ordered) break;
    const indent = (m[0] as string).length;
    const body = [(lines[i] as string).slice(indent)];
    i++;
    while (i < lines.length) {
      const l = lines[i] as string;
      if (l.trim() === "") {
        const next = lines[i + 1];
        if (next !== undefined && /^\s+/.test(next) && next.trim() !== "") {
          body.push("");
          i++;
          continue;
        }
        break;
      }
      const lead = (/^ */.exec(l) as RegExpExecArray)[0].length;
      if (lead >= Math.min(indent, 4)) body.push(l.slice(Math.min(lead, indent)));
      else if (ITEM.test(l) || FENCE.test(l) || HEADING.test(l) || QUOTE.test(l) || RULE.test(l)) break;
      else body.push(l); // a lazy continuation of the item's paragraph
      i++;
    }
    items.push(blocks(body, depth + 1));
  }
  out.push({ t: "list", ordered, start: ordered ? Number.parseInt(first[2] as string, 10) : 1, items });
  return i;
}

/** Inline markup of one paragraph's text. */
export function inlines(text: string, depth = 0): Inline[] {
  const out: Inline[] = [];
  let plain = "";
  const flush = () => {
    if (plain !== "") out.push({ t: "text", v: plain });
    plain = "";
  };
  if (depth > MAX_DEPTH || text.length > MAX_INLINE_CHARS) return [{ t: "text", v: text }];
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === "\\" && i + 1 < text.length && /[\\`*_[\]()#+\-.!<>]/.test(text[i + 1] as string)) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === "`") {
      TICKS.lastIndex = i;
      const run = (TICKS.exec(text) as RegExpExecArray)[0];
      const end = findWithin(text, run, i + run.length);
      if (end !== -1) {
        flush();
        out.push({ t: "code", v: text.slice(i + run.length, end).replace(/\n/g, " ") });
        i = end + run.length;
        continue;
      }
    }
    if (ch === "*" || ch === "_") {
      const strong = text[i + 1] === ch;
      const mark = strong ? ch + ch : ch;
      const end = findWithin(text, mark, i + mark.length + 1);
      const inner = end === -1 ? "" : text.slice(i + mark.length, end);
      if (end !== -1 && inner.trim() === inner && !(ch === "_" && /\w/.test(text[i - 1] ?? ""))) {
        flush();
        out.push({ t: strong ? "strong" : "em", c: inlines(inner, depth + 1) });
        i = end + mark.length;
        continue;
      }
    }
    if (ch === "[") {
      LINK.lastIndex = i;
      const link = LINK.exec(text);
      if (link !== null) {
        flush();
        out.push({ t: "link", href: safeHref(link[2] as string), c: inlines(link[1] as string, depth + 1) });
        i += (link[0] as string).length;
        continue;
      }
    }
    if (ch === "<") {
      AUTOLINK.lastIndex = i;
      const auto = AUTOLINK.exec(text);
      if (auto !== null) {
        flush();
        out.push({ t: "link", href: safeHref(auto[1] as string), c: [{ t: "text", v: auto[1] as string }] });
        i += (auto[0] as string).length;
        continue;
      }
    }
    if (ch === "\n") {
      const hard = plain.endsWith("  ") || plain.endsWith("\\");
      if (hard) {
        plain = plain.replace(/ +$|\\$/, "");
        flush();
        out.push({ t: "br" });
      } else plain += " ";
      i++;
      continue;
    }
    plain += ch;
    i++;
  }
  flush();
  return out;
}

/**
 * The address a link may have: an absolute http, https or mailto URL, else null (the link shows as text).
 * Control characters and spaces are dropped first, as browsers drop them (`java\tscript:` is javascript:).
 */
export function safeHref(raw: string): string | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: dropping them is the point
  const url = raw.replace(/[\u0000-\u0020\u007f-\u009f]/g, "");
  return /^(?:https?:\/\/|mailto:)/i.test(url) ? url : null;
}
