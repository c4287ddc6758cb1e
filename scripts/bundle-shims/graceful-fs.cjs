// Stands in for graceful-fs inside the bundle (scripts/bundle.mjs): proper-lockfile requires it only as
// its default `fs`, for queueing opens under EMFILE; a lock makes a handful of calls. Plain node:fs
// is already loaded, where graceful-fs clones and patches fs at every start (its cost: specs/performance.md,
// "Figures behind constants").
module.exports = require("node:fs");
