// Stands in for graceful-fs inside the bundle (scripts/bundle.mjs): proper-lockfile requires it only as
// its default `fs`, for queueing opens under EMFILE; a lock makes a handful of calls. Plain node:fs
// loads at no cost, where graceful-fs costs ~15 ms of every start (it clones and patches fs).
module.exports = require("node:fs");
