/**
 * A CPU cgroup with `cpu.idle` = 1 for one benchmark child: the kernel schedules the
 * group as SCHED_IDLE, so its processes run only on a core nothing else wants. A nice
 * value cannot do that: nice 19 still has a weight (15 against 1024 at 0), its group's
 * turn comes round every scheduling period, and on two cores a client process standing
 * in for other machines takes that turn from the service it measures.
 *
 * Needs the cpu controller mounted and writable (cgroup v1 at /sys/fs/cgroup/cpu, or v2
 * with cpu in the root's subtree_control) and a kernel with `cpu.idle` (5.15+). Where any
 * of that is missing `enterIdleCgroup` answers null and the caller keeps its fallback.
 * Each group is named for the child's pid and removed when it is empty; groups left by
 * a benchmark that was killed are removed by the next one.
 */
import { existsSync, readdirSync, readFileSync, rmdirSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const GROUP_PREFIX = 'jiaowu-bench-idle-';
const V1_CPU = '/sys/fs/cgroup/cpu';
const V2_ROOT = '/sys/fs/cgroup';

/** The hierarchy whose groups can be made idle here, or null. */
function cpuHierarchy(): string | null {
  if (existsSync(path.join(V1_CPU, 'cpu.shares'))) return V1_CPU;
  try {
    if (readFileSync(path.join(V2_ROOT, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('cpu')) return V2_ROOT;
  } catch {
    // no v2 hierarchy at the root
  }
  return null;
}

/** Removes this module's groups that hold no process (left by a run that was killed). */
function removeStaleGroups(root: string): void {
  for (const name of readdirSync(root)) {
    if (!name.startsWith(GROUP_PREFIX)) continue;
    removeGroup(path.join(root, name));
  }
}

/** Removes a group if it is empty; a group still holding a process stays (the kernel refuses). */
export function removeGroup(group: string): void {
  try {
    rmdirSync(group);
  } catch {
    // still has a process, or already gone
  }
}

/**
 * Moves process `pid` (all its threads, and what it starts later) into a new idle group.
 * Returns the group's path, or null where the machine cannot (see the header).
 */
export function enterIdleCgroup(pid: number): string | null {
  const root = cpuHierarchy();
  if (!root) return null;
  const group = path.join(root, `${GROUP_PREFIX}${pid}`);
  try {
    removeStaleGroups(root);
    mkdirSync(group);
    writeFileSync(path.join(group, 'cpu.idle'), '1');
    writeFileSync(path.join(group, 'cgroup.procs'), String(pid));
    return group;
  } catch {
    removeGroup(group);
    return null;
  }
}
