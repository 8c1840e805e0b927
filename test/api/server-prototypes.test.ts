import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverFor } from '../../src/api/server';

// Why it matters: a request whose prototype Express changes on arrival keeps its whole
// graph alive through V8's young-generation collections (bench:api prints the pauses).
describe('serverFor: requests and responses are born with the app’s prototypes', () => {
  const app = express();
  app.use(express.json());
  app.post('/echo', (req, res) => {
    res.locals.seen = req.get('x-probe');
    res.status(201).set('x-seen', String(res.locals.seen)).json({ body: req.body, ip: req.ip });
  });
  const server = serverFor(app);
  const arrived: { request: object | null; response: object | null }[] = [];
  // Listeners added before the app's see each request before Express touches it.
  server.prependListener('request', (req, res) => arrived.push({ request: Object.getPrototypeOf(req), response: Object.getPrototypeOf(res) }));
  let url = '';

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('so Express’s own Object.setPrototypeOf changes nothing, and Express works as before', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const n of [1, 2]) {
        const answer = await new Promise<{ status: number; seen: string | undefined; body: string }>((resolve, reject) => {
          const request = http.request(`${url}/echo`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-probe': `probe-${n}` } }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (body += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, seen: res.headers['x-seen'] as string | undefined, body }));
          });
          request.on('error', reject);
          request.end(JSON.stringify({ n }));
        });
        expect(answer).toEqual({ status: 201, seen: `probe-${n}`, body: JSON.stringify({ body: { n }, ip: '127.0.0.1' }) });
      }
    } finally {
      agent.destroy();
    }
    expect(arrived).toHaveLength(2);
    for (const { request, response } of arrived) {
      expect(request).toBe(app.request);
      expect(response).toBe(app.response);
    }
    expect(app.request).toBeInstanceOf(http.IncomingMessage);
    expect(app.response).toBeInstanceOf(http.ServerResponse);
  });
});
