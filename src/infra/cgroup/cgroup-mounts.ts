// The two texts the kernel describes cgroups with, parsed without touching the world:
// /proc/self/mountinfo (where each hierarchy is mounted) and /proc/self/cgroup (where this process sits
// in each). See the kernel's cgroup-v1 and cgroup-v2 documentation and proc(5).

/** The v1 controllers catherd uses; on a hybrid machine each may be bound to a v1 hierarchy of its own. */
export const V1_CONTROLLERS = ["memory", "pids", "freezer", "cpuacct"] as const;
export type V1Controller = (typeof V1_CONTROLLERS)[number];

/** One mounted cgroup hierarchy. */
export interface CgroupMount {
  version: 1 | 2;
  /** Where it is mounted, e.g. /sys/fs/cgroup or /sys/fs/cgroup/memory. */
  mountPoint: string;
  /** Which cgroup of the hierarchy is mounted there: "/" unless a container bind-mounted a subtree. */
  root: string;
  /** v1: the controllers of V1_CONTROLLERS bound to it; v2: always empty (read cgroup.controllers). */
  controllers: V1Controller[];
}

/**
 * The cgroup mounts of a mountinfo text, first mount of each hierarchy first. A line is
 * `id parent major:minor root mountpoint options [optional…] - fstype source superoptions`; paths escape
 * space, tab, newline and backslash as octal (`\040`).
 */
export function parseMountInfo(text: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of text.split("\n")) {
    const separator = line.indexOf(" - ");
    if (separator < 0) continue;
    const before = line.slice(0, separator).split(" ");
    const [fsType, , superOptions = ""] = line.slice(separator + 3).split(" ");
    const root = before[3];
    const mountPoint = before[4];
    if (root === undefined || mountPoint === undefined) continue;
    if (fsType === "cgroup2") {
      mounts.push({
        version: 2,
        mountPoint: unescapeOctal(mountPoint),
        root: unescapeOctal(root),
        controllers: [],
      });
    } else if (fsType === "cgroup") {
      const options = new Set(superOptions.split(","));
      const controllers = V1_CONTROLLERS.filter((c) => options.has(c));
      mounts.push({
        version: 1,
        mountPoint: unescapeOctal(mountPoint),
        root: unescapeOctal(root),
        controllers,
      });
    }
  }
  return mounts;
}

function unescapeOctal(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** Where a process sits: the v2 path (null when it is in no v2 hierarchy) and each v1 controller's path. */
export interface CgroupPaths {
  unified: string | null;
  v1: Partial<Record<V1Controller, string>>;
}

/** Parses /proc/<pid>/cgroup: `hierarchy-id:controllers:path` lines, `0::path` being the v2 hierarchy. */
export function parseProcCgroup(text: string): CgroupPaths {
  const paths: CgroupPaths = { unified: null, v1: {} };
  for (const line of text.split("\n")) {
    const first = line.indexOf(":");
    const second = line.indexOf(":", first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    const where = line.slice(second + 1);
    if (line.slice(0, first) === "0" && controllers === "") {
      paths.unified = where;
      continue;
    }
    for (const name of controllers.split(",")) {
      if ((V1_CONTROLLERS as readonly string[]).includes(name)) paths.v1[name as V1Controller] = where;
    }
  }
  return paths;
}

/**
 * The folder of cgroup `cgroupPath` under a mount: the mount shows the hierarchy from `root` down, so a
 * path outside that subtree (another namespace's view) has no folder here: null.
 */
export function folderOf(mount: CgroupMount, cgroupPath: string): string | null {
  const root = mount.root === "/" ? "" : mount.root.replace(/\/+$/, "");
  if (cgroupPath !== root && !cgroupPath.startsWith(`${root}/`)) return null;
  const rest = cgroupPath.slice(root.length).replace(/^\/+/, "");
  return rest === "" ? mount.mountPoint : `${mount.mountPoint.replace(/\/+$/, "")}/${rest}`;
}
