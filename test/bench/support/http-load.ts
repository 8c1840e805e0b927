/**
 * A closed-loop load of GraphQL mutations over HTTP keep-alive: `clients` callers, each
 * with its own socket and token, each sending its next request as soon as the previous
 * answer arrived, for a fixed time. Every answer is checked (HTTP 200, no `errors`, the
 * caller's own check); a wrong answer is counted and the first few are kept.
 */
import http from 'node:http';
import { REQUEST_TAG_HEADER } from './request-timings';

export interface HttpLoadOptions {
  url: string;
  clients: number;
  seconds: number;
  /** The bearer token of client i. */
  token: (client: number) => string;
  /** The next request body; null when there is nothing more to send. */
  body: () => string | null;
  /** Throws when the parsed answer is not what the mutation must return. */
  check: (answer: { data?: unknown; errors?: unknown[] }) => void;
  /** Tag each request (see request-timings.ts) and return each tag with its latency. */
  tag?: boolean;
}

export interface LoadResult {
  requests: number;
  failures: number;
  errors: string[];
  seconds: number;
  /** Sorted latencies, ms. */
  latencies: number[];
  /** With `tag`: each answered request's tag and latency (ms), in the order sent. */
  tagged: Array<[tag: string, ms: number]>;
}

function post(agent: http.Agent, url: URL, token: string, body: string, tag: string | null): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: `Bearer ${token}`,
          ...(tag === null ? {} : { [REQUEST_TAG_HEADER]: tag }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.setTimeout(30_000, () => request.destroy(new Error('no answer within 30 s')));
    request.on('error', reject);
    request.end(body);
  });
}

export async function runHttpLoad(options: HttpLoadOptions): Promise<LoadResult> {
  const url = new URL(options.url);
  const latencies: number[] = [];
  const errors: string[] = [];
  const tagged: Array<[string, number]> = [];
  let failures = 0;
  let sent = 0;
  const deadline = performance.now() + options.seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.clients }, async (_, client) => {
      // One socket per client, kept alive: the cost measured is the operation's, not TCP's.
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const token = options.token(client);
      try {
        while (performance.now() < deadline) {
          const body = options.body();
          if (body === null) break;
          const tag = options.tag ? `${client}-${sent++}` : null;
          const t0 = performance.now();
          try {
            const { status, text } = await post(agent, url, token, body, tag);
            const answer = JSON.parse(text) as { data?: unknown; errors?: unknown[] };
            if (status !== 200 || answer.errors?.length) throw new Error(`HTTP ${status}: ${text.slice(0, 300)}`);
            options.check(answer);
            const ms = performance.now() - t0;
            latencies.push(ms);
            if (tag !== null) tagged.push([tag, ms]);
          } catch (error) {
            failures++;
            if (errors.length < 5) errors.push(error instanceof Error ? error.message : String(error));
          }
        }
      } finally {
        agent.destroy();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, failures, errors, seconds, latencies, tagged };
}
