/**
 * Whose CPU a benchmark window used, from /proc: this process, PostgreSQL (every
 * `postgres` process: backends, WAL writer, checkpointer), RabbitMQ (`beam.smp`), and
 * the whole machine. A window's split says which side a figure is bound by — and, per
 * job, what a system costs the machine beside its rate. Counted per process: one that
 * started inside the window counts whole; one that exited inside it is counted under
 * `other` (its ticks are gone from /proc, not from the machine's total).
 */
import fs from 'node:fs';
import os from 'node:os';

/** CPU seconds so far of each process the split names, and of the machine. */
export interface CpuSample {
  machine: number;
  processes: Map<number, { group: Exclude<keyof CpuSplit, 'machine'>; seconds: number }>;
}

export interface CpuSplit {
  /** CPU seconds (user + system). */
  self: number;
  postgres: number;
  rabbitmq: number;
  machine: number;
}

const COMMANDS = { postgres: 'postgres', rabbitmq: 'beam.smp' } as const;
const TICKS_PER_SECOND = 100;

/** CPU seconds the whole machine was busy so far (all cores; idle and I/O wait left out). */
export function machineBusySeconds(): number {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return (fields.reduce((a, b) => a + b, 0) - idle) / TICKS_PER_SECOND;
}

/** A process's command and CPU seconds (user + system) so far, from its `/proc/<pid>/stat`. */
export function parseProcessStat(stat: string): { command: string; seconds: number } {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { command: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), seconds: (Number(rest[11]) + Number(rest[12])) / TICKS_PER_SECOND };
}

/** CPU used so far (subtract two with `cpuSpent`). */
export function cpuSample(): CpuSample {
  const sample: CpuSample = { machine: machineBusySeconds(), processes: new Map() };
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const { command, seconds } = parseProcessStat(stat);
    const group = Number(pid) === process.pid ? 'self' : command === COMMANDS.postgres ? 'postgres' : command === COMMANDS.rabbitmq ? 'rabbitmq' : null;
    if (group) sample.processes.set(Number(pid), { group, seconds });
  }
  return sample;
}

/** What each group spent between two samples (processes alive at the second). */
export function cpuSpent(from: CpuSample, to: CpuSample): CpuSplit {
  const split: CpuSplit = { self: 0, postgres: 0, rabbitmq: 0, machine: to.machine - from.machine };
  for (const [pid, { group, seconds }] of to.processes) split[group] += seconds - (from.processes.get(pid)?.seconds ?? 0);
  return split;
}

/** E.g. `0.31 this process + 0.26 PostgreSQL + 0.17 RabbitMQ + 0.05 other = 0.79 ms of CPU per job; 1.66 of 2 cores busy`. */
export function describeCpuPerJob(spent: CpuSplit, jobs: number, seconds: number): string {
  const ms = (s: number) => ((s * 1000) / jobs).toFixed(2);
  const other = Math.max(0, spent.machine - spent.self - spent.postgres - spent.rabbitmq);
  return (
    `${ms(spent.self)} this process + ${ms(spent.postgres)} PostgreSQL + ${ms(spent.rabbitmq)} RabbitMQ + ${ms(other)} other = ` +
    `${ms(spent.machine)} ms of CPU per job; ${(spent.machine / seconds).toFixed(2)} of ${os.cpus().length} cores busy`
  );
}
