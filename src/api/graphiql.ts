import type { RequestHandler } from 'express';
import { isLocalRequest } from './client-address';

const DEFAULT_QUERY = `# Jobs, newest first
query RecentJobs {
  jobs(first: 10) {
    edges { node { id kind status currentStep currentStepCode progress message messageCode messageParams createdAt } }
    pageInfo { hasNextPage endCursor }
  }
}

# Watch one job (paste an id):
# subscription Watch { jobProgress(jobId: "…") { sequence reason status currentStep currentStepCode progress message messageCode messageParams } }
# Sentences follow Accept-Language (HTTP) or a "locale" connection parameter (socket), e.g. "zh-CN".
`;

/**
 * The renderer's module inlines every script of the page (a 9 MB file, ~14 MiB of heap),
 * so it is loaded on first use: a process that serves no GraphiQL (production's
 * default) never carries it.
 */
const pageRenderer = () => (require('@graphql-yoga/render-graphiql') as typeof import('@graphql-yoga/render-graphiql')).renderGraphiQL;

/**
 * The self-contained GraphiQL page (scripts, styles and workers inlined: no CDN), with
 * subscriptions over graphql-ws. In development the generated admin token is filled
 * into the headers (HTTP) and the connection parameters (socket).
 */
export function renderGraphiQLPage(options: { endpoint: string; devToken: string | null }): string {
  const authorization = options.devToken ? `Bearer ${options.devToken}` : null;
  return pageRenderer()({
    title: 'Jiaowu jobs — GraphiQL',
    subscriptionsProtocol: 'WS',
    defaultQuery: DEFAULT_QUERY,
    headers: JSON.stringify(authorization ? { Authorization: authorization } : { Authorization: 'Bearer <token>' }, null, 2),
    shouldPersistHeaders: false,
    // Read by the page's executor (not in the GraphiQLOptions type): the socket's connection_init payload.
    ...({ endpoint: options.endpoint, connectionParams: authorization ? { authorization } : {} } as object),
  });
}

/**
 * GET /graphiql. The page with the development token goes only to a client on this
 * machine talking to the process directly: the token is an admin's, and anyone who can
 * reach the port (or come through a proxy) would otherwise be one.
 */
export function graphiqlHandler(options: { endpoint: string; devToken: string | null }): RequestHandler {
  const withToken = renderGraphiQLPage(options);
  const withoutToken = options.devToken ? renderGraphiQLPage({ ...options, devToken: null }) : withToken;
  return (req, res) => {
    res.set('Cache-Control', 'no-store').type('html').send(isLocalRequest(req) ? withToken : withoutToken);
  };
}
