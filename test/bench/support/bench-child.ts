/**
 * What the benchmarks share for their child processes: a child with an IPC channel
 * (request/reply by message type and id, bounded waits) and the CPU time of processes
 * read from /proc — from outside, so a process that stalls is still measured.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { machineBusySeconds, parseProcessStat } from './cpu-split';
import { enterIdleCgroup, removeGroup } from './idle-cgroup';

/** The repository root: the benchmarks run from test/bench/ or a compiled copy of it (dist/…, a cache folder). */
export function repositoryRoot(from: string = __dirname): string {
  let dir = from;
  for (let i = 0; i < 10; i++) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    dir = path.resolve(dir, '..');
  }
  throw new Error(`cannot find the repository root above ${from}`);
}

export interface ChildOptions {
  /** Where a child's `failed` message is reported (default: stdout). */
  log?: (text: string) => void;
  /**
   * The child's nice value (-20…19), set as soon as it starts. A process standing in for
   * clients on other machines runs at 19, so that its own CPU — which in production is
   * not on the service's cores — takes only what the service leaves idle.
   */
  niceness?: number;
  /**
   * Runs the child as if on a machine of its own: in a session of its own, whose
   * scheduling group gets the child's nice value (`niceness`, else this process's, e.g.
   * -10 under `nice -n -10`). Where the kernel groups processes by session
   * (`/proc/sys/kernel/sched_autogroup_enabled`), a nice value orders a process only
   * within its group and the groups share the cores by their own nice values; PostgreSQL
   * and RabbitMQ are each a group of their own. Children left in the benchmark's session
   * share one group's turn on the cores, so an attacker's CPU delays the service it
   * stands apart from, and `nice -n -10` on the benchmark puts the service no earlier
   * than the broker.
   */
  ownSession?: boolean;
  /** The cores the child (every thread of it) may run on, as `taskset -c` takes them (e.g. `1`); all when unset. */
  cpus?: string;
  /**
   * Runs the child in a CPU cgroup of its own with `cpu.idle` = 1 (support/idle-cgroup.ts):
   * it gets a core only when nothing else wants one, where a nice value still takes its
   * weighted turn. Where the machine has no such cgroup the child keeps `niceness` and
   * `ownSession`; `placement` says which it got.
   */
  idleCgroup?: boolean;
}

/** The nice value of the scheduling group of a session's leader, where the kernel has such groups (see `ChildOptions.ownSession`). */
function setGroupNiceness(pid: number, niceness: number): void {
  const autogroup = `/proc/${pid}/autogroup`;
  if (!existsSync(autogroup)) return;
  try {
    writeFileSync(autogroup, String(niceness));
  } catch {
    // A value below the group's needs CAP_SYS_NICE (as `nice -n -10` does): the child
    // keeps a session of its own at the default.
  }
}

/** A child process with an IPC channel, started through a shell that raises its file limit. */
export class Child<In, Out extends { type: string }> {
  readonly process: ChildProcess;
  private readonly waiters: { match: (m: Out) => boolean; resolve: (m: Out) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }[] = [];
  readonly exited: Promise<number | null>;
  /** How the child is scheduled, for the report: its idle cgroup, else its nice value and session. */
  readonly placement: string;
  private output = '';

  constructor(
    readonly name: string,
    script: string,
    nodeArgs: string[],
    env: Record<string, string>,
    options: ChildOptions = {},
  ) {
    const log = options.log ?? ((text: string) => process.stdout.write(`${text}\n`));
    // It goes into a shell command: only what taskset's list takes.
    if (options.cpus !== undefined && !/^[0-9]+([,-][0-9]+)*$/.test(options.cpus)) throw new Error(`cpus must be a core list such as 1 or 0-1, not ${JSON.stringify(options.cpus)}`);
    const command = `ulimit -n 65536 2>/dev/null || ulimit -n $(ulimit -Hn) 2>/dev/null; exec ${options.cpus ? `taskset -c ${options.cpus} ` : ''}"${process.execPath}" ${nodeArgs.join(' ')} "${script}"`;
    this.process = spawn('/bin/sh', ['-c', command], {
      cwd: repositoryRoot(),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      // setsid(): a session, and so a scheduling group, of its own (see `ownSession`).
      detached: options.ownSession === true,
    });
    const pid = this.process.pid;
    if (pid !== undefined) {
      if (options.niceness !== undefined) os.setPriority(pid, options.niceness);
      if (options.ownSession) setGroupNiceness(pid, options.niceness ?? os.getPriority());
    }
    const idleGroup = pid !== undefined && options.idleCgroup ? enterIdleCgroup(pid) : null;
    this.placement = idleGroup
      ? `idle cgroup ${idleGroup}`
      : `nice ${options.niceness ?? os.getPriority()}${options.ownSession ? ', a session of its own' : ''}${options.idleCgroup ? ' (no idle cgroup on this machine)' : ''}`;
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-20_000);
    };
    this.process.stdout!.on('data', keep);
    this.process.stderr!.on('data', keep);
    this.process.on('message', (message: Out) => {
      if (message.type === 'failed') log(`${name} reports a failure: ${(message as unknown as { error: string }).error}`);
      for (const waiter of [...this.waiters]) {
        if (waiter.match(message)) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          clearTimeout(waiter.timer);
          waiter.resolve(message);
        }
      }
    });
    this.exited = new Promise((resolve) =>
      this.process.once('exit', (code, signal) => {
        if (idleGroup) removeGroup(idleGroup);
        for (const waiter of this.waiters.splice(0)) {
          clearTimeout(waiter.timer);
          waiter.reject(new Error(`${name} exited (${code ?? signal}) while waiting:\n${this.output}`));
        }
        resolve(code ?? (signal ? 128 : null));
      }),
    );
  }

  send(message: In): void {
    if (this.process.connected) this.process.send(message as never);
  }

  wait<T extends Out['type']>(type: T, timeoutMs: number, match: (m: Extract<Out, { type: T }>) => boolean = () => true): Promise<Extract<Out, { type: T }>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`${this.name}: no '${type}' within ${timeoutMs} ms:\n${this.output.slice(-3000)}`));
      }, timeoutMs);
      const waiter = {
        match: (m: Out) => m.type === type && match(m as Extract<Out, { type: T }>),
        resolve: resolve as (m: Out) => void,
        reject,
        timer,
      };
      this.waiters.push(waiter);
    });
  }

  async request<T extends Out['type']>(message: In & { id: number }, type: T, timeoutMs: number): Promise<Extract<Out, { type: T }>> {
    const reply = this.wait(type, timeoutMs, (m) => (m as unknown as { id: number }).id === message.id);
    this.send(message);
    return reply;
  }

  /** Waits for a clean exit; after `timeoutMs` SIGKILL. Returns how it ended. */
  async finish(timeoutMs: number): Promise<string> {
    const killer = setTimeout(() => this.process.kill('SIGKILL'), timeoutMs);
    const code = await this.exited;
    clearTimeout(killer);
    return code === 0 ? 'clean exit (0)' : `NOT CLEAN: exit ${code}\n${this.output.slice(-2000)}`;
  }

  get running(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  get log(): string {
    return this.output;
  }
}

/** CPU seconds (user + system) used so far: the whole machine (busy, all cores) and some processes. */
export function cpuTimes(pids: Record<string, number | undefined>): { machine: number; byName: Record<string, number> } | null {
  try {
    const machine = machineBusySeconds();
    const byName: Record<string, number> = {};
    for (const [name, pid] of Object.entries(pids)) {
      if (pid) byName[name] = parseProcessStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).seconds;
    }
    return { machine, byName };
  } catch {
    return null;
  }
}
