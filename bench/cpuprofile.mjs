#!/usr/bin/env node
// @ts-check
// Summarises a V8 .cpuprofile (from `node --cpu-prof`): self time by module/package, the top functions by
// self and by inclusive time, and when the first and last sample of chosen functions fell.
// Usage: node bench/cpuprofile.mjs <file.cpuprofile> [--from <functionName>] [--top n] [--mark fn,fn…]
//   --from fn   only samples from the first one whose stack holds fn (e.g. watchAgent: the steady state)
import * as fs from "node:fs";

/** @typedef {{ functionName: string, url: string, lineNumber: number }} CallFrame */
/** @typedef {{ id: number, callFrame: CallFrame, children?: number[] }} ProfileNode */
/** What `node --cpu-prof` writes. @typedef {{ nodes: ProfileNode[], samples: number[], timeDeltas: number[] }} CpuProfile */

const args = process.argv.slice(2);
const file = args[0] ?? "";
/** @param {string} name @param {string | null} fallback */
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : args[i + 1];
};
const top = Number(opt("--top", "15"));
const from = opt("--from", null);
const marks = (opt("--mark", "") ?? "").split(",").filter(Boolean);

/** @type {CpuProfile} */
const profile = JSON.parse(fs.readFileSync(file, "utf8"));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
/** child id → parent id @type {Map<number, number>} */
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/**
 * Where a frame's time goes: a package, a file of catherd's build, a part of node, or a V8 pseudo-frame.
 * @param {CallFrame} frame
 */
function bucket(frame) {
  const { url, functionName } = frame;
  if (url === "")
    return functionName.startsWith("(") ? functionName : `(native) ${functionName || "anonymous"}`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return `pkg ${nm[1]}`;
  const dist = /\/dist\/(.+)$/.exec(url);
  if (dist) return `catherd ${dist[1]}`;
  if (url.startsWith("node:internal/modules") || url.includes("internal/modules"))
    return "node: module loader";
  if (url.startsWith("node:")) return `node: ${url.slice(5).split("/").slice(0, 2).join("/")}`;
  return url;
}
/**
 * A sample's node and its ancestors, innermost first.
 * @param {number} id
 */
const stackOf = (id) => {
  /** @type {ProfileNode[]} */
  const out = [];
  for (let /** @type {number | undefined} */ cur = id; cur !== undefined; cur = parent.get(cur)) {
    const node = byId.get(cur);
    if (node !== undefined) out.push(node);
  }
  return out;
};

// Sample times (µs since profile start).
const times = [];
let t = 0;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i] ?? 0;
  times.push(t);
}
let startIndex = 0;
if (from !== null) {
  startIndex = profile.samples.findIndex((id) => stackOf(id).some((n) => n.callFrame.functionName === from));
  if (startIndex === -1) startIndex = profile.samples.length;
}
const self = new Map();
const selfFn = new Map();
const inclusiveFn = new Map();
const firstLast = new Map();
let total = 0;
let busy = 0;
for (let i = startIndex; i < profile.samples.length; i++) {
  const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000; // the time until the next sample, in ms
  const node = byId.get(profile.samples[i] ?? -1);
  if (node === undefined) continue;
  total += dt;
  const b = bucket(node.callFrame);
  if (b !== "(idle)") busy += dt;
  self.set(b, (self.get(b) ?? 0) + dt);
  const fnKey = `${node.callFrame.functionName || "(anonymous)"} ${bucket(node.callFrame)}:${node.callFrame.lineNumber + 1}`;
  selfFn.set(fnKey, (selfFn.get(fnKey) ?? 0) + dt);
  const seen = new Set();
  for (const n of stackOf(node.id)) {
    const key = `${n.callFrame.functionName || "(anonymous)"} ${bucket(n.callFrame)}:${n.callFrame.lineNumber + 1}`;
    if (seen.has(key)) continue;
    seen.add(key);
    inclusiveFn.set(key, (inclusiveFn.get(key) ?? 0) + dt);
    if (marks.includes(n.callFrame.functionName)) {
      const fl = firstLast.get(n.callFrame.functionName) ?? { first: times[i], last: times[i] };
      fl.last = times[i];
      firstLast.set(n.callFrame.functionName, fl);
    }
  }
}
/** @param {Map<string, number>} map @param {number} n */
const show = (map, n) =>
  [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `  ${v.toFixed(1).padStart(8)} ms  ${k}`)
    .join("\n");
console.log(
  `${file}\nsampled ${total.toFixed(0)} ms${from ? ` from the first ${from}` : ""}, busy (not idle) ${busy.toFixed(0)} ms\n`,
);
console.log(`self time by module:\n${show(self, top)}\n`);
console.log(`top functions, self:\n${show(selfFn, top)}\n`);
console.log(
  `top functions, inclusive (excluding idle):\n${show(new Map([...inclusiveFn].filter(([k]) => !k.startsWith("(idle)") && !k.startsWith("(root)"))), top)}\n`,
);
if (marks.length > 0) {
  console.log("first / last sample of:");
  for (const m of marks) {
    const fl = firstLast.get(m);
    console.log(
      `  ${m.padEnd(24)} ${fl ? `${(fl.first / 1000).toFixed(1)} ms … ${(fl.last / 1000).toFixed(1)} ms` : "not sampled"}`,
    );
  }
}
