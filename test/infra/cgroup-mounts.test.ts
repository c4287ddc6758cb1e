import { describe, expect, it } from "vitest";
import { folderOf, parseMountInfo, parseProcCgroup } from "../../src/infra/cgroup/cgroup-mounts.js";

// The kernel's descriptions of cgroups, as found on the kinds of machine catherd runs on.

const HYBRID_MOUNTINFO = `22 1 0:20 / /sys rw,nosuid - sysfs sysfs rw
30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
36 30 0:33 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate
`;

const HYBRID_CGROUP = `9:name=systemd:/
8:pids:/
6:freezer:/
4:memory:/process_api/d4c05c
1:cpu,cpuacct:/
0::/
`;

describe("parseMountInfo", () => {
  it("finds the v2 hierarchy and the v1 controllers catherd uses on a hybrid machine", () => {
    expect(parseMountInfo(HYBRID_MOUNTINFO)).toEqual([
      { version: 1, mountPoint: "/sys/fs/cgroup/cpu,cpuacct", root: "/", controllers: ["cpuacct"] },
      { version: 1, mountPoint: "/sys/fs/cgroup/memory", root: "/", controllers: ["memory"] },
      { version: 1, mountPoint: "/sys/fs/cgroup/freezer", root: "/", controllers: ["freezer"] },
      { version: 1, mountPoint: "/sys/fs/cgroup/pids", root: "/", controllers: ["pids"] },
      { version: 1, mountPoint: "/sys/fs/cgroup/systemd", root: "/", controllers: [] },
      { version: 2, mountPoint: "/sys/fs/cgroup/unified", root: "/", controllers: [] },
    ]);
  });

  it("reads a unified machine, optional fields before the separator, and octal-escaped paths", () => {
    const text =
      "29 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n" +
      "50 29 0:26 /a\\040b /mnt/my\\040cgroup rw master:3 - cgroup2 cgroup2 rw\n" +
      "not a mountinfo line\n";
    expect(parseMountInfo(text)).toEqual([
      { version: 2, mountPoint: "/sys/fs/cgroup", root: "/", controllers: [] },
      { version: 2, mountPoint: "/mnt/my cgroup", root: "/a b", controllers: [] },
    ]);
  });
});

describe("parseProcCgroup", () => {
  it("maps each v1 controller and the v2 hierarchy to the process's cgroup", () => {
    expect(parseProcCgroup(HYBRID_CGROUP)).toEqual({
      unified: "/",
      v1: { pids: "/", freezer: "/", memory: "/process_api/d4c05c", cpuacct: "/" },
    });
  });

  it("says unified null for a v1-only machine, and reads a v2-only one", () => {
    expect(parseProcCgroup("4:memory:/user.slice\n").unified).toBeNull();
    expect(parseProcCgroup("0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope\n")).toEqual({
      unified: "/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope",
      v1: {},
    });
  });
});

describe("folderOf", () => {
  const v2 = { version: 2 as const, mountPoint: "/sys/fs/cgroup", root: "/", controllers: [] };

  it("places a cgroup path under its mount point", () => {
    expect(folderOf(v2, "/")).toBe("/sys/fs/cgroup");
    expect(folderOf(v2, "/user.slice/app.scope")).toBe("/sys/fs/cgroup/user.slice/app.scope");
  });

  it("strips the mounted subtree's root, and has no folder for a path outside it", () => {
    const container = { ...v2, root: "/docker/abc" };
    expect(folderOf(container, "/docker/abc")).toBe("/sys/fs/cgroup");
    expect(folderOf(container, "/docker/abc/inner")).toBe("/sys/fs/cgroup/inner");
    expect(folderOf(container, "/docker/abcd")).toBeNull();
    expect(folderOf(container, "/")).toBeNull();
  });
});
