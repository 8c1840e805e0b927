/** The idle CPU cgroup bench:hostile runs its attackers in (test/bench/support/idle-cgroup.ts), on this machine's kernel. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseProcessStat } from './bench/support/cpu-split';
import { enterIdleCgroup as enterGroup, removeGroup } from './bench/support/idle-cgroup';

/** Every group made here, removed (empty) after the file. */
const groups = new Set<string>();
function enterIdleCgroup(pid: number): string | null {
  const group = enterGroup(pid);
  if (group) groups.add(group);
  return group;
}

/** Whether this machine lets us make groups (root, cpu controller mounted): the benches fall back to nice 19 where not. */
function canMakeGroups(): boolean {
  const probe = start('sleep', ['5']);
  return enterIdleCgroup(probe.pid!) !== null;
}
const started: ChildProcess[] = [];
function start(command: string, args: string[]): ChildProcess {
  const child = spawn(command, args, { stdio: 'ignore' });
  started.push(child);
  return child;
}
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
const cpuSeconds = (pid: number) => parseProcessStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).seconds;

const supported = canMakeGroups();

afterEach(async () => {
  await Promise.all(started.splice(0).map(stop));
});
afterAll(() => {
  for (const group of groups) removeGroup(group);
});

describe.runIf(supported)('enterIdleCgroup', () => {
  it('moves the process into a group of its own with cpu.idle = 1, which is removed once empty', async () => {
    const child = start('sleep', ['30']);
    const group = enterIdleCgroup(child.pid!)!;
    expect(group).toMatch(/jiaowu-bench-idle-\d+$/);
    expect(readFileSync(path.join(group, 'cpu.idle'), 'utf8').trim()).toBe('1');
    expect(readFileSync(path.join(group, 'cgroup.procs'), 'utf8').split('\n')).toContain(String(child.pid));
    removeGroup(group); // refused: the process is still in it
    expect(existsSync(group)).toBe(true);
    await stop(child);
    removeGroup(group);
    expect(existsSync(group)).toBe(false);
  });

  it('removes the empty groups a killed run left behind', () => {
    const child = start('sleep', ['30']);
    const root = path.dirname(enterIdleCgroup(child.pid!)!);
    const stale = path.join(root, 'jiaowu-bench-idle-999999999');
    mkdirSync(stale);
    const other = start('sleep', ['30']);
    const group = enterIdleCgroup(other.pid!)!;
    expect(existsSync(stale)).toBe(false);
    // A group still holding its process is not stale.
    expect(existsSync(path.join(root, `jiaowu-bench-idle-${child.pid}`))).toBe(true);
    expect(existsSync(group)).toBe(true);
  });

  it('gives the group a core only when nothing else wants it', async () => {
    // Two busy loops on one core: the ordinary one takes it all but a sliver. (SCHED_IDLE
    // weighs 3 against nice 0's 1024; the margin below is sixty-fold that.)
    const loop = ['-c', '0', 'sh', '-c', 'while :; do :; done'];
    const ordinary = start('taskset', loop);
    const idle = start('taskset', loop);
    expect(enterIdleCgroup(idle.pid!)).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const before = [cpuSeconds(ordinary.pid!), cpuSeconds(idle.pid!)];
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const used = [cpuSeconds(ordinary.pid!) - before[0]!, cpuSeconds(idle.pid!) - before[1]!];
    expect(used[0]).toBeGreaterThan(0.2);
    expect(used[1]).toBeLessThan(used[0]! * 0.2);
  });
});
