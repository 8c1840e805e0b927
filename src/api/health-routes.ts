import { Router } from 'express';
import type { Logger } from 'pino';
import type { JobEngine } from '../engine/engine';

/**
 * /health/live — the process is up (for restarts by an orchestrator).
 * /health/ready — it can serve: the database answers and the transport is connected.
 * /health/messaging — the outbox backlog and the figures an operator watches.
 * Live and ready are public and say only up / ready and why not; messaging and /metrics
 * can be restricted (OPS_ENDPOINTS, see server.ts). None sends an error's text: a
 * failed check answers 503 and logs its cause. However many ask, the engine runs at most
 * one check a second (see JobEngine.health).
 */
export function healthRoutes(engine: JobEngine, logger?: Logger): Router {
  const router = Router();
  router.get('/health/live', (_req, res) => {
    res.json({ status: 'UP' });
  });
  router.get('/health/ready', async (_req, res) => {
    const health = await checked(engine, logger);
    if (!health) {
      res.status(503).json({ status: 'NOT_READY' });
      return;
    }
    const ready = health.database.reachable && health.transport.connection === 'connected';
    // Which dependency is down, and no more: this route answers anyone, whatever OPS_ENDPOINTS says.
    res.status(ready ? 200 : 503).json({
      status: ready ? 'READY' : 'NOT_READY',
      database: health.database,
      transport: { name: health.transport.name, connection: health.transport.connection },
    });
  });
  router.get('/health/messaging', async (_req, res) => {
    const health = await checked(engine, logger);
    if (!health) {
      res.status(503).json({ status: 'UNHEALTHY', problems: ['the health check failed (see the log)'] });
      return;
    }
    res.status(health.status === 'UNHEALTHY' ? 503 : 200).json(health);
  });
  return router;
}

/** The engine's health, or null (logged) if even the check failed. */
async function checked(engine: JobEngine, logger: Logger | undefined) {
  try {
    return await engine.health();
  } catch (error) {
    logger?.error({ err: error }, 'health check failed');
    return null;
  }
}
