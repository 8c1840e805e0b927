/**
 * The hostile-load benchmark's attackers, a process of their own: on `start`, every
 * selected attack of hostile-attacks.ts runs its lanes until the deadline (each lane
 * one operation at a time, at most `rate` a second, each bounded by the timeout), then
 * every connection still held is closed and the counts go back to the bench: per attack,
 * operations sent and how each ended.
 */
import http from 'node:http';
import { ATTACKS, mintTokens, type AttackContext, type Lane } from './hostile-attacks';
import type { HeldConnection } from './hostile-net';
import type { AttackReport, AttackSettings, FromAttacker, ToAttacker } from './hostile-protocol';

const send = (message: FromAttacker) => process.send?.(message);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Loopback addresses of the attacks of caller set N: 127.0.N.10, .11, … (the honest client is 127.0.0.2). */
const attackAddress = (callers: number, index: number) => `127.0.${callers}.${10 + index}`;

async function run(settings: AttackSettings): Promise<AttackReport[]> {
  const context: AttackContext = {
    settings,
    tokens: await mintTokens(settings.jwt, settings.callers),
    graphqlUrl: `${settings.httpUrl}/graphql`,
    wsUrl: settings.wsUrl,
  };
  const selected = ATTACKS.filter((attack) => settings.attacks.includes(attack.name));
  const deadline = Date.now() + settings.seconds * 1000;
  const held = new Set<HeldConnection>();
  const agents: http.Agent[] = [];
  const reports: AttackReport[] = [];
  const lanes: Promise<void>[] = [];
  selected.forEach((attack, attackIndex) => {
    const report: AttackReport = {
      name: attack.name,
      who: attack.who,
      what: attack.what,
      sent: 0,
      outcomes: {},
      verdicts: { accepted: 0, refused: 0, 'server-error': 0, failed: 0 },
      slowestMs: 0,
      examples: {},
    };
    reports.push(report);
    for (let index = 0; index < attack.lanes(settings); index++) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      agents.push(agent);
      let nextAt = performance.now();
      const lane: Lane = {
        index,
        address: attackAddress(settings.callers, attackIndex),
        agent,
        async pace() {
          if (Date.now() >= deadline) return false;
          const now = performance.now();
          if (nextAt > now) await sleep(Math.min(nextAt - now, deadline - Date.now()));
          nextAt = Math.max(nextAt, now) + 1000 / settings.rate;
          return Date.now() < deadline;
        },
        record(outcome) {
          report.sent++;
          report.outcomes[outcome.label] = (report.outcomes[outcome.label] ?? 0) + 1;
          report.verdicts[outcome.verdict]++;
          report.slowestMs = Math.max(report.slowestMs, Math.round(outcome.ms));
          if (outcome.detail && !(outcome.label in report.examples)) report.examples[outcome.label] = outcome.detail;
        },
        hold(socket) {
          held.add(socket);
          void socket.closed.then(() => held.delete(socket));
        },
      };
      lanes.push(
        attack.run(lane, context).catch((error) => {
          lane.record({ label: `attack failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 120), verdict: 'failed', ms: 0 });
        }),
      );
    }
  });
  await Promise.all(lanes);
  await Promise.all([...held].map((socket) => socket.close()));
  for (const agent of agents) agent.destroy();
  return reports;
}

process.on('message', (message: ToAttacker) => {
  switch (message.type) {
    case 'start': {
      const started = Date.now();
      run(message.settings).then(
        (attacks) => send({ type: 'report', attacks, ms: Date.now() - started }),
        (error) => send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
      );
      break;
    }
    case 'stop':
      if (process.connected) process.send!({ type: 'stopped' } satisfies FromAttacker, () => process.exit(0));
      else process.exit(0);
      break;
  }
});
// The bench went away: leave too.
process.on('disconnect', () => process.exit(0));
