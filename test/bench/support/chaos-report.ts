/**
 * The chaos benchmark's verdict and printout: the bar (0 lost, 0 doubled, 0 stuck,
 * every subscription ends with its job's final status — plus no final status that
 * changed afterwards and no effect that disagrees with its job), and the figures.
 */
import type { CancelPlan } from './chaos-cancels';
import type { Census } from './chaos-census';
import type { UnexpectedExit } from './chaos-fleet';
import type { ChaosOptions } from './chaos-options';
import type { WatchRecord } from './chaos-subscriptions';
import { quantile } from './quantile';

export type FaultKind = 'worker kill' | 'broker restart' | 'PostgreSQL restart';

export interface FaultRecord {
  what: FaultKind;
  detail: string;
  /** ms since the run started */
  startedAtMs: number;
  endedAtMs: number;
  /** Jobs not finished when it began (null: unknown, the count could not be read). */
  unfinishedJobs: number | null;
}

export interface ChaosRunData {
  options: ChaosOptions;
  command: string;
  /** Wall clock (ms since epoch) the run started; the other times are ms since then. */
  startedAtEpochMs: number;
  enqueueStartMs: number;
  enqueueEndMs: number;
  /** The workers were up (they start after the enqueue, on the whole backlog). */
  drainStartMs: number;
  lastFaultEndMs: number;
  /** When the drain wait ended: every job finished, or the quiet deadline passed. */
  drainEndMs: number;
  faults: FaultRecord[];
  census: Census;
  finals: Map<string, { status: string; finishedAtMs: number | null }>;
  subscriptions: WatchRecord[];
  /** For subscriptions left open on a finished job: what a fresh subscription on the same API got first. */
  probes: { jobId: string; status: string | null }[];
  cancels: CancelPlan[];
  fleet: {
    replacementsStarted: number;
    failedStarts: number;
    unexpectedExits: UnexpectedExit[];
    /** The last log lines of each process still up at the end. */
    recentOutput: { name: string; pid: number; lines: string }[];
  };
}

export interface SubscriptionVerdict {
  record: WatchRecord;
  ok: boolean;
  /** What went wrong, in general terms (for counting), and in detail. */
  category: string | null;
  problem: string | null;
}

export interface ChaosVerdict {
  passed: boolean;
  /** One line per broken promise; empty when the bar is met. */
  failures: string[];
  lost: number;
  stuck: number;
  doubled: number;
  contradictions: number;
  subscriptionFailures: number;
  /** Subscriptions still open although their job had finished in the database. */
  hungSubscriptions: number;
  faultsPlanned: Record<FaultKind, number>;
  faultsDone: Record<FaultKind, number>;
  /** ms from the end of the last fault until the last job finished (null: not every job finished). */
  lastFaultToAllFinishedMs: number | null;
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

export function judgeSubscription(record: WatchRecord, finals: ChaosRunData['finals']): SubscriptionVerdict {
  const final = finals.get(record.jobId);
  const finalStatus = final?.status ?? '(unknown)';
  const fail = (category: string, problem: string): SubscriptionVerdict => ({ record, ok: false, category: `${category} (job ${finalStatus})`, problem });
  switch (record.state) {
    case 'completed':
      if (TERMINAL.has(finalStatus) && record.lastStatus === finalStatus) return { record, ok: true, category: null, problem: null };
      return fail(`completed after ${record.lastStatus ?? 'no event'}`, `completed after ${record.lastStatus ?? 'no event'}, but the job is ${finalStatus}`);
    case 'open':
      return fail('never ended', `never ended: last saw ${record.lastStatus} (sequence ${record.lastSequence}, ${record.events} events); the job is ${finalStatus}`);
    case 'starting':
      return fail('never got its snapshot', `never got its snapshot (${record.startFailures} failed starts; last: ${record.error ?? 'none'})`);
    case 'gave-up':
      return fail('could not start', `could not start in ${record.startFailures} tries: ${record.error}`);
    case 'errored':
      return fail('failed after its snapshot', `failed after its snapshot: ${record.error}`);
  }
}

export function judge(data: ChaosRunData): ChaosVerdict {
  const { census, options } = data;
  const failures: string[] = [];
  const lost = census.unfinished.length;
  const stuck = census.unfinished.filter((job) => job.stuck).length;
  const doubledIds = new Set([...census.doubledEffects.map((d) => d.jobId), ...census.doubledSuccesses.map((d) => d.jobId)]);
  const contradictions = census.reopened.length + census.effectsWithoutSuccess + census.successesWithoutEffect;
  const subscriptionVerdicts = data.subscriptions.map((record) => judgeSubscription(record, data.finals));
  const subscriptionFailures = subscriptionVerdicts.filter((v) => !v.ok).length;
  const hungSubscriptions = subscriptionVerdicts.filter((v) => v.record.state === 'open' && TERMINAL.has(data.finals.get(v.record.jobId)?.status ?? '')).length;
  const faultsPlanned: Record<FaultKind, number> = {
    'worker kill': options.kills ?? 1,
    'broker restart': options.brokerRestarts,
    'PostgreSQL restart': options.postgresRestarts,
  };
  const faultsDone: Record<FaultKind, number> = { 'worker kill': 0, 'broker restart': 0, 'PostgreSQL restart': 0 };
  for (const fault of data.faults) faultsDone[fault.what]++;

  if (census.total !== options.jobs) failures.push(`${census.total} jobs in the database, ${options.jobs} enqueued`);
  if (lost > 0) failures.push(`${lost} job(s) lost: not finished by the deadline (${lost - stuck} waiting, ${stuck} stuck)`);
  if (stuck > 0) failures.push(`${stuck} job(s) stuck: nothing will move them (${summarise(census.unfinished.filter((j) => j.stuck).map((j) => j.stuck!))})`);
  if (doubledIds.size > 0) {
    failures.push(
      `${doubledIds.size} job(s) completed more than once (${census.doubledEffects.length} with several effect rows, ${census.doubledSuccesses.length} entered SUCCEEDED more than once)`,
    );
  }
  if (census.reopened.length > 0) failures.push(`${census.reopened.length} status change(s) out of a final status (${summarise(census.reopened.map((r) => `${r.from} → ${r.to}`))})`);
  if (census.effectsWithoutSuccess > 0) failures.push(`${census.effectsWithoutSuccess} job(s) with a committed effect but not SUCCEEDED`);
  if (census.successesWithoutEffect > 0) failures.push(`${census.successesWithoutEffect} SUCCEEDED job(s) without their effect`);
  if (subscriptionFailures > 0) {
    failures.push(
      `${subscriptionFailures} of ${data.subscriptions.length} subscription(s) did not end with their job's final status (${hungSubscriptions} still open on a finished job): ${summarise(
        subscriptionVerdicts.filter((v) => !v.ok).map((v) => v.category!),
      )}`,
    );
  }
  if (options.subscriptions > 0 && data.subscriptions.length === 0) failures.push('no subscription was opened');
  for (const what of Object.keys(faultsPlanned) as FaultKind[]) {
    if (faultsDone[what] < faultsPlanned[what]) failures.push(`only ${faultsDone[what]} of ${faultsPlanned[what]} planned ${what}(s) happened`);
  }
  const lastFinishedMs = census.lastFinishedAtMs === null ? null : census.lastFinishedAtMs - data.startedAtEpochMs;
  const lastFaultToAllFinishedMs = lost === 0 && lastFinishedMs !== null ? Math.max(0, lastFinishedMs - data.lastFaultEndMs) : null;
  return {
    passed: failures.length === 0,
    failures,
    lost,
    stuck,
    doubled: doubledIds.size,
    contradictions,
    subscriptionFailures,
    hungSubscriptions,
    faultsPlanned,
    faultsDone,
    lastFaultToAllFinishedMs,
  };
}

/** "3 × A; 1 × B" for the most frequent few. */
function summarise(items: string[], top = 4): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1]);
  const shown = sorted.slice(0, top).map(([text, n]) => `${n} × ${text}`);
  if (sorted.length > top) shown.push(`${sorted.length - top} more kinds`);
  return shown.join('; ');
}

const seconds = (ms: number | null) => (ms === null ? '—' : `${(ms / 1000).toFixed(1)} s`);

export function formatReport(data: ChaosRunData, verdict: ChaosVerdict): string {
  const { census, options } = data;
  const rows: [string, string, string][] = [];
  const row = (figure: string, measured: string, bar = '') => rows.push([figure, measured, bar]);
  const statusLine = (counts: Record<string, number>) =>
    ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED']
      .filter((s) => counts[s])
      .map((s) => `${s} ${counts[s]}`)
      .join(', ') || 'none';
  row('jobs enqueued / in the database', `${options.jobs} / ${census.total}`);
  row('jobs by status', statusLine(census.byStatus));
  for (const [kind, counts] of Object.entries(census.byKind)) row(`  ${kind}`, statusLine(counts));
  row('lost (not finished by the deadline)', String(verdict.lost), '0');
  row('stuck (nothing will move them)', String(verdict.stuck), '0');
  row('doubled (completed more than once)', String(verdict.doubled), '0');
  row('final status changed / effect without success / success without effect', `${census.reopened.length} / ${census.effectsWithoutSuccess} / ${census.successesWithoutEffect}`, '0 / 0 / 0');
  const subs = data.subscriptions.map((record) => judgeSubscription(record, data.finals));
  const liveTerminal = subs.filter((v) => v.ok && v.record.snapshotStatus && !TERMINAL.has(v.record.snapshotStatus));
  row('subscriptions opened (kept open at once)', `${data.subscriptions.length} (${options.subscriptions})`);
  row('  ended with their job\'s final status', `${subs.filter((v) => v.ok).length} (${liveTerminal.length} saw it live, the rest in their snapshot)`);
  row('  did not (still open on a finished job)', `${verdict.subscriptionFailures} (${verdict.hungSubscriptions})`, '0');
  const lags = liveTerminal
    .map((v) => (v.record.terminalAtMs ?? NaN) - (data.finals.get(v.record.jobId)?.finishedAtMs ?? NaN))
    .filter((lag) => Number.isFinite(lag));
  lags.sort((a, b) => a - b);
  if (lags.length > 0) row('  job finished → subscriber saw it, p50 / p99 / max', `${quantile(lags, 0.5).toFixed(0)} / ${quantile(lags, 0.99).toFixed(0)} / ${lags[lags.length - 1]!.toFixed(0)} ms`);
  const startRetries = data.subscriptions.reduce((n, r) => n + (r.state !== 'gave-up' ? r.startFailures : 0), 0);
  const outOfOrder = data.subscriptions.reduce((n, r) => n + r.outOfOrder, 0);
  if (data.probes.length > 0) {
    const atOnce = data.probes.filter((p) => p.status !== null && p.status === data.finals.get(p.jobId)?.status).length;
    row('  of those, a fresh subscription got the final status at once', `${atOnce} of ${data.probes.length}`);
  }
  row('  failed starts retried (database down) / events out of order', `${startRetries} / ${outOfOrder}`);
  const cancelled = (outcome: string) => data.cancels.filter((p) => p.outcome === outcome);
  const endedCancelled = (plans: CancelPlan[]) => plans.filter((p) => data.finals.get(p.jobId)?.status === 'CANCELLED').length;
  row(
    'cancels: queued (ended CANCELLED) / running (ended CANCELLED) / already ended / failed / not sent',
    `${cancelled('cancelled-queued').length} (${endedCancelled(cancelled('cancelled-queued'))}) / ${cancelled('requested-running').length} (${endedCancelled(cancelled('requested-running'))}) / ${cancelled('already-ended').length} / ${cancelled('failed').length} / ${data.cancels.filter((p) => p.outcome === null).length}`,
  );
  const faultCounts = (Object.keys(verdict.faultsDone) as FaultKind[]).map((k) => `${verdict.faultsDone[k]} ${k}${verdict.faultsDone[k] === 1 ? '' : 's'}`).join(', ');
  row('faults', faultCounts);
  row('  replacement workers started / failed starts', `${data.fleet.replacementsStarted} / ${data.fleet.failedStarts}`);
  row('  processes that died on their own', String(data.fleet.unexpectedExits.length));
  row('attempts (claims) in all / most for one job', `${census.attempts.total} / ${census.attempts.max}`);
  row('RUNNING → QUEUED (retries, rescues, releases)', String(census.backToQueued));
  row('jobs with several live outbox rows / live rows of finished jobs', `${census.severalLiveRows} / ${census.liveRowsOfFinishedJobs}`);
  const lastFinishedMs = census.lastFinishedAtMs === null ? null : census.lastFinishedAtMs - data.startedAtEpochMs;
  row('enqueue', `${options.jobs} jobs in ${seconds(data.enqueueEndMs - data.enqueueStartMs)}`);
  row('last fault ended → every job finished', verdict.lastFaultToAllFinishedMs === null ? `not every job finished (waited ${seconds(data.drainEndMs - data.lastFaultEndMs)})` : seconds(verdict.lastFaultToAllFinishedMs));
  if (verdict.lost === 0 && lastFinishedMs !== null) {
    const spanMs = lastFinishedMs - data.drainStartMs;
    row('throughput, workers up → last job finished', `${(census.total / (spanMs / 1000)).toFixed(0)} jobs/s (${seconds(spanMs)}, faults included)`);
  }

  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  const lines = [
    '',
    `Chaos benchmark — ${options.jobs} jobs, ${options.apis} API + ${options.workers} worker processes, ${options.subscriptions} subscriptions, seed ${options.seed}`,
    `settings: lease ${options.leaseSeconds} s, maintenance every ${options.maintenanceSeconds} s, republish after ${options.republishAfterSeconds} s, retry ${options.retryBaseMs}–${options.retryMaxMs} ms, attempt limit ${options.attemptLimit}; lost = not finished ${options.drainQuietSeconds} s after the last fault and the last progress`,
    `${'figure'.padEnd(w0)}  ${'measured'.padEnd(w1)}  bar`,
    `${'-'.repeat(w0)}  ${'-'.repeat(w1)}  ---`,
    ...rows.map(([a, b, c]) => `${a.padEnd(w0)}  ${b.padEnd(w1)}  ${c}`),
    '',
    'faults (s since start; jobs not finished when it began):',
    ...data.faults.map((f) => `  ${seconds(f.startedAtMs).padStart(8)} → ${seconds(f.endedAtMs).padStart(8)}  ${f.what.padEnd(18)} ${String(f.unfinishedJobs ?? '?').padStart(6)}  ${f.detail}`),
  ];
  if (census.failedReasons.length) lines.push('', 'FAILED jobs, by error:', ...census.failedReasons.map((r) => `  ${String(r.count).padStart(6)} × ${r.reason}`));
  if (census.unfinished.length) {
    lines.push('', `unfinished jobs (first 10 of ${census.unfinished.length}):`);
    for (const job of census.unfinished.slice(0, 10)) {
      const live = job.live.map((r) => `${r.state}${r.leaseLeftS !== null ? ` lease ${Math.round(r.leaseLeftS)} s` : ''} due ${Math.round(r.availableInS)} s, ${r.attempts} claims`).join('; ') || 'no live outbox row';
      lines.push(`  ${job.id} ${job.kind} ${job.status}, ${job.attempts} attempts, unchanged for ${job.idleSeconds} s; ${live}${job.stuck ? ` — STUCK: ${job.stuck}` : ''}`);
    }
  }
  if (census.unfinished.length) {
    const holders = census.maintenanceLockHolders;
    lines.push(
      holders.length
        ? `maintenance lock held at the end by: ${holders.map((h) => `backend ${h.pid} (${h.state} for ${h.sinceSeconds} s: ${h.query})`).join('; ')}`
        : 'maintenance lock held at the end by: nobody',
    );
    lines.push('the last log lines of the processes still up:');
    for (const p of data.fleet.recentOutput) lines.push(`  ${p.name} (pid ${p.pid}):`, indent(p.lines || '(nothing)'));
  }
  const badSubs = subs.filter((v) => !v.ok);
  if (badSubs.length) {
    lines.push('', `subscriptions that did not end with their job's final status (first 10 of ${badSubs.length}):`);
    for (const v of badSubs.slice(0, 10)) lines.push(`  job ${v.record.jobId} on API ${v.record.api + 1}, opened at ${seconds(v.record.openedAtMs)}: ${v.problem}`);
  }
  if (data.fleet.unexpectedExits.length) {
    lines.push('', 'processes that died on their own:');
    for (const exit of data.fleet.unexpectedExits) lines.push(`  ${exit.name} (pid ${exit.pid}) at ${seconds(exit.atMs)}: ${exit.code ?? exit.signal}\n${indent(exit.outputTail)}`);
  }
  lines.push('', verdict.passed ? 'BAR MET: 0 lost, 0 doubled, 0 stuck, every subscription ended with its job\'s final status.' : 'BAR MISSED:', ...verdict.failures.map((f) => `  - ${f}`));
  if (data.fleet.unexpectedExits.length) {
    lines.push(`NOTE (outside the bar): ${data.fleet.unexpectedExits.length} service process(es) died on their own during the run (see above); a process manager would restart them, as this run did for workers.`);
  }
  lines.push(`Reproduce: ${data.command}`, '');
  return lines.join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `      ${line}`)
    .join('\n');
}
