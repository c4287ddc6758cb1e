// @ts-check
// The floor of a dispatch: a bare node doing only what `catherd dispatch` cannot avoid — start a detached
// node (its supervisor) and wait until that node has taken the folder — and the child doing only what a
// supervisor must do before the dispatcher may return: read the folder's name on its pipe (as a standby
// does) and write a file in it. No catherd code and no module beyond node's own: what is left is two node
// starts, a spawn and the hand-over, the part of every figure of `dispatch.*` this design cannot remove.
//
//   node floor-dispatch.mjs <dir>   prints the child's pid once <dir>/named exists, then exits
// The child stays until SIGTERM (or 60 s), as a supervisor stays with its agent.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const [mode] = process.argv.slice(2);
if (mode === "--child") {
  process.stdin.once("data", (line) => {
    const folder = String(line).trim();
    fs.writeFileSync(path.join(folder, "named"), `${process.pid}\n`);
    setTimeout(() => process.exit(0), 60_000);
  });
} else if (mode !== undefined) {
  const folder = path.resolve(mode);
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), "--child"], {
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
  });
  child.stdin?.end(`${folder}\n`);
  const named = path.join(folder, "named");
  const watcher = fs.watch(folder, () => done());
  let told = false;
  const done = () => {
    if (told || !fs.existsSync(named)) return;
    told = true;
    watcher.close();
    child.unref();
    process.stdout.write(`${child.pid}\n`);
  };
  done();
} else {
  process.stderr.write("usage: node floor-dispatch.mjs <dir>\n");
  process.exitCode = 2;
}
