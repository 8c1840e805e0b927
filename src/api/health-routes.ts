import { Router } from 'express';
import type { Logger } from 'pino';
import type { JobEngine } from '../engine/engine';
import type { MessagingHealth } from '../engine/health';

/**
 * How long one health check's result answers /health/ready and /health/messaging. Each
 * check runs the backlog queries and asks the broker; these routes answer anyone (ready
 * always), so without a bound every request would be that work, and a flood of them
 * would take the database pool from the operations. A prober asks every few seconds:
 * a result this old is fresh to it.
 */
export const HEALTH_RESULT_REUSE_MS = 1_000;

/**
 * /health/live — the process is up (for restarts by an orchestrator).
 * /health/ready — it can serve: the database answers and the transport is connected.
 * /health/messaging — the outbox backlog and the figures an operator watches.
 * Live and ready are public and say only up / ready and why not; messaging and /metrics
 * can be restricted (OPS_ENDPOINTS, see server.ts). None sends an error's text: a
 * failed check answers 503 and logs its cause. Ready and messaging share one check at a
 * time, and its result for HEALTH_RESULT_REUSE_MS: however many ask, the process runs at
 * most one check a second.
 */
export function healthRoutes(engine: Pick<JobEngine, 'health'>, logger?: Logger): Router {
  const router = Router();
  const checked = sharedCheck(engine, logger);
  router.get('/health/live', (_req, res) => {
    res.json({ status: 'UP' });
  });
  router.get('/health/ready', async (_req, res) => {
    const health = await checked();
    if (!health) {
      res.status(503).json({ status: 'NOT_READY' });
      return;
    }
    const ready = health.database.reachable && health.transport.connection === 'connected';
    res.status(ready ? 200 : 503).json({
      status: ready ? 'READY' : 'NOT_READY',
      database: health.database,
      transport: health.transport,
    });
  });
  router.get('/health/messaging', async (_req, res) => {
    const health = await checked();
    if (!health) {
      res.status(503).json({ status: 'UNHEALTHY', problems: ['the health check failed (see the log)'] });
      return;
    }
    res.status(health.status === 'UNHEALTHY' ? 503 : 200).json(health);
  });
  return router;
}

/**
 * The engine's health, or null (logged) if even the check failed: the check in flight if
 * there is one, else the last result while it is younger than HEALTH_RESULT_REUSE_MS,
 * else a new check.
 */
function sharedCheck(engine: Pick<JobEngine, 'health'>, logger: Logger | undefined): () => Promise<MessagingHealth | null> {
  let last: Promise<MessagingHealth | null> | null = null;
  /** When the last check ended; null while it runs. */
  let endedAt: number | null = null;
  return () => {
    if (last && (endedAt === null || Date.now() - endedAt < HEALTH_RESULT_REUSE_MS)) return last;
    endedAt = null;
    last = engine
      .health()
      .catch((error: unknown) => {
        logger?.error({ err: error }, 'health check failed');
        return null;
      })
      .finally(() => (endedAt = Date.now()));
    return last;
  };
}
