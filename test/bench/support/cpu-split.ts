/**
 * Whose CPU a benchmark window used, from /proc: this process, PostgreSQL (every
 * `postgres` process: backends, WAL writer, checkpointer), RabbitMQ (`beam.smp`), and
 * the whole machine. A window's split says which side a figure is bound by — and, per
 * job, what a system costs the machine beside its rate. (A process that exits inside
 * the window takes its ticks with it: take the window's end before closing pools.)
 */
import fs from 'node:fs';
import os from 'node:os';

export interface CpuSplit {
  /** CPU seconds (user + system). */
  self: number;
  postgres: number;
  rabbitmq: number;
  machine: number;
}

const COMMANDS = { postgres: 'postgres', rabbitmq: 'beam.smp' } as const;
const TICKS_PER_SECOND = 100;

/** CPU seconds used so far (a sample; subtract two with `cpuSpent`). */
export function cpuSample(): CpuSplit {
  const split: CpuSplit = { self: 0, postgres: 0, rabbitmq: 0, machine: 0 };
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  split.machine = (fields.reduce((a, b) => a + b, 0) - idle) / TICKS_PER_SECOND;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const seconds = (Number(rest[11]) + Number(rest[12])) / TICKS_PER_SECOND;
    if (Number(pid) === process.pid) split.self += seconds;
    else if (command === COMMANDS.postgres) split.postgres += seconds;
    else if (command === COMMANDS.rabbitmq) split.rabbitmq += seconds;
  }
  return split;
}

export function cpuSpent(from: CpuSplit, to: CpuSplit): CpuSplit {
  return { self: to.self - from.self, postgres: to.postgres - from.postgres, rabbitmq: to.rabbitmq - from.rabbitmq, machine: to.machine - from.machine };
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
