/**
 * The chaos benchmark's service processes: API and worker processes of the real
 * service (test/support/service-process.ts with the chaos stand-ins), a worker killed
 * with SIGKILL on demand and a replacement started as a process manager would, and a
 * record of every process that died without being killed.
 */
import { spawnService, type ServiceProcess } from '../../support/spawn-service';
import type { SeededRandom } from './seeded-random';

export type FleetRole = 'api' | 'worker';

export interface FleetMember {
  name: string;
  role: FleetRole;
  process: ServiceProcess;
}

export interface UnexpectedExit {
  name: string;
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  atMs: number;
  outputTail: string;
}

/** How often a replacement may fail to start (the broker or database may be down) before the run gives up on it. */
const REPLACEMENT_ATTEMPTS = 10;
const REPLACEMENT_PAUSE_MS = 2_000;
/** A start waits up to ~30 s for the broker (the transport's first-connect retries), so allow more. */
const START_TIMEOUT_MS = 90_000;

export class ChaosFleet {
  readonly apis: FleetMember[] = [];
  /** Workers that are up and not (yet) killed. */
  readonly workers: FleetMember[] = [];
  readonly unexpectedExits: UnexpectedExit[] = [];
  /** Replacement starts that failed (counted; each is tried again). */
  failedStarts = 0;
  replacementsStarted = 0;
  private readonly everyone = new Set<ServiceProcess>();
  private readonly killedByUs = new WeakSet<ServiceProcess>();
  private readonly pending = new Set<Promise<void>>();
  private workerNumber = 0;
  private stopping = false;

  constructor(
    private readonly deps: {
      envFor: (role: FleetRole) => Record<string, string>;
      log: (line: string) => void;
      startedAt: number;
      /** A compiled service-process.js to start (default: spawnService's own choice). */
      entry?: string;
    },
  ) {}

  async startApis(count: number): Promise<void> {
    const members = await Promise.all(Array.from({ length: count }, (_, i) => this.spawn('api', `api-${i + 1}`)));
    this.apis.push(...members);
  }

  async startWorkers(count: number): Promise<void> {
    const members = await Promise.all(Array.from({ length: count }, () => this.spawn('worker', `worker-${++this.workerNumber}`)));
    this.workers.push(...members);
  }

  /** SIGKILLs a random live worker and starts its replacement in the background. */
  async killRandomWorker(random: SeededRandom): Promise<FleetMember | null> {
    if (this.workers.length === 0) return null;
    const victim = random.pick(this.workers);
    this.workers.splice(this.workers.indexOf(victim), 1);
    this.killedByUs.add(victim.process);
    await victim.process.kill9();
    this.everyone.delete(victim.process);
    this.startReplacement();
    return victim;
  }

  /** The last log lines of every live process, for a report on jobs that did not finish. */
  recentOutput(lines = 5): { name: string; pid: number; lines: string }[] {
    return [...this.apis, ...this.workers]
      .filter((member) => this.everyone.has(member.process))
      .map((member) => ({ name: member.name, pid: member.process.pid, lines: digest(member.process.output(), lines) }));
  }

  /** Replacement starts still in progress. */
  get starting(): number {
    return this.pending.size;
  }

  /** Kills every process (and any that is still starting); safe to call twice. */
  async stopAll(): Promise<void> {
    this.stopping = true;
    const all = [...this.everyone];
    for (const member of all) this.killedByUs.add(member);
    await Promise.all(all.map((member) => member.kill9().catch(() => undefined)));
    await Promise.all([...this.pending].map((p) => p.catch(() => undefined)));
    this.everyone.clear();
  }

  private startReplacement(): void {
    const name = `worker-${++this.workerNumber}`;
    const task = (async () => {
      for (let attempt = 1; attempt <= REPLACEMENT_ATTEMPTS && !this.stopping; attempt++) {
        try {
          const startedAt = Date.now();
          const member = await this.spawn('worker', name);
          if (this.stopping) return;
          this.workers.push(member);
          this.replacementsStarted++;
          this.deps.log(`${name} (pid ${member.process.pid}) up in ${((Date.now() - startedAt) / 1000).toFixed(1)} s, replacing a killed worker`);
          return;
        } catch (error) {
          if (this.stopping) return;
          this.failedStarts++;
          this.deps.log(`${name} failed to start (attempt ${attempt}): ${firstLine(error)}`);
          await new Promise((resolve) => setTimeout(resolve, REPLACEMENT_PAUSE_MS));
        }
      }
    })();
    this.pending.add(task);
    void task.finally(() => this.pending.delete(task));
  }

  private async spawn(role: FleetRole, name: string): Promise<FleetMember> {
    const process = await spawnService({ ...this.deps.envFor(role), ROLE: role }, START_TIMEOUT_MS, this.deps.entry);
    if (this.stopping) {
      await process.kill9();
      return { name, role, process };
    }
    this.everyone.add(process);
    process.child.once('exit', (code, signal) => {
      this.everyone.delete(process);
      if (this.killedByUs.has(process) || this.stopping) return;
      this.unexpectedExits.push({
        name,
        pid: process.pid,
        code,
        signal,
        atMs: Date.now() - this.deps.startedAt,
        outputTail: digest(process.output()),
      });
      this.deps.log(`${name} (pid ${process.pid}) DIED ON ITS OWN (${code ?? signal})`);
      const index = this.workers.findIndex((m) => m.process === process);
      if (index >= 0) {
        this.workers.splice(index, 1);
        this.startReplacement();
      }
    });
    return { name, role, process };
  }
}

/** The last lines of a process's output, JSON log lines shortened to level, message and error. */
function digest(output: string, lines = 30): string {
  return output
    .trim()
    .split('\n')
    .slice(-lines)
    .map((line) => {
      try {
        const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { type?: string; message?: string; code?: string } };
        const err = entry.err ? ` — ${entry.err.type ?? 'Error'}${entry.err.code ? ` ${entry.err.code}` : ''}: ${entry.err.message ?? ''}` : '';
        return `[${entry.level ?? '?'}] ${entry.msg ?? ''}${err}`.slice(0, 400);
      } catch {
        return line.slice(0, 400);
      }
    })
    .join('\n');
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 300);
}
