import { Router } from 'express';
import type { JobEngine } from '../engine/engine';

/**
 * /health/live — the process is up (for restarts by an orchestrator).
 * /health/ready — it can serve: the database answers and the transport is connected.
 * /health/messaging — the outbox backlog and the figures an operator watches.
 */
export function healthRoutes(engine: JobEngine): Router {
  const router = Router();
  router.get('/health/live', (_req, res) => {
    res.json({ status: 'UP' });
  });
  router.get('/health/ready', async (_req, res) => {
    const health = await engine.health();
    const ready = health.database.reachable && health.transport.connection === 'connected';
    res.status(ready ? 200 : 503).json({
      status: ready ? 'READY' : 'NOT_READY',
      database: health.database,
      transport: health.transport,
    });
  });
  router.get('/health/messaging', async (_req, res) => {
    const health = await engine.health();
    res.status(health.status === 'UNHEALTHY' ? 503 : 200).json(health);
  });
  return router;
}
