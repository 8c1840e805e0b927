import { createClient, type Client } from 'graphql-ws';
import { ref } from 'vue';
import type { TypedDocumentString } from './generated/graphql';
import { currentLanguage } from '../i18n';
import { session, signOut } from '../auth/session';

/** An error the API answered with: its `extensions.code` (or a transport code) and its message. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

const ENDPOINT = '/graphql';

/**
 * A query or mutation over HTTP (same origin), with the session's token and the page's
 * language (the server's own sentences follow Accept-Language). A refused token signs
 * the page out.
 */
export async function request<R, V>(document: TypedDocumentString<R, V>, variables: V, token = session.token): Promise<R> {
  let response: Response;
  try {
    response = await fetch(ENDPOINT, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'accept-language': currentLanguage(),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify({ query: document.toString(), variables }),
    });
  } catch {
    throw new ApiError('NETWORK', 'The service cannot be reached');
  }
  let body: { data?: R | null; errors?: { message: string; extensions?: { code?: string } }[] };
  try {
    body = await response.json();
  } catch {
    throw new ApiError(`HTTP_${response.status}`, `The service answered ${response.status}`);
  }
  const error = body.errors?.[0];
  if (error) {
    const code = error.extensions?.code ?? `HTTP_${response.status}`;
    if (code === 'UNAUTHENTICATED' && token === session.token) signOut('expired');
    throw new ApiError(code, error.message);
  }
  if (!body.data) throw new ApiError(`HTTP_${response.status}`, `The service answered ${response.status}`);
  return body.data;
}

export interface Subscription {
  stop(): void;
}

export interface SubscriptionSink<R> {
  next(data: R): void;
  error?(error: ApiError): void;
  complete?(): void;
}

let socket: { client: Client; token: string; locale: string } | null = null;

/** Whether the page's live connection is up (for the "live" mark). */
export const socketConnected = ref(false);

/**
 * One graphql-ws socket for the whole page, opened on first use with the token and
 * locale in connection_init, and opened anew when either changes. It reconnects on
 * its own after a drop; subscriptions resume (jobProgress starts with a snapshot).
 */
function socketClient(): Client {
  const token = session.token ?? '';
  const locale = currentLanguage();
  if (socket && socket.token === token && socket.locale === locale) return socket.client;
  socket?.client.dispose();
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${ENDPOINT}`;
  const client = createClient({
    url,
    lazy: true,
    lazyCloseTimeout: 2_000,
    retryAttempts: 1_000,
    shouldRetry: (event) => !isRefusal(event),
    connectionParams: () => ({ authorization: `Bearer ${token}`, locale }),
    on: {
      connected: () => {
        if (socket?.client === client) socketConnected.value = true;
      },
      closed: (event) => {
        if (socket?.client === client) socketConnected.value = false;
        // 4401 at connect, 4403 when the token expires on an open socket: either way this
        // token is done, and a page left on it would show stale rows, not reconnect.
        if (isRefusal(event) && token === session.token) signOut('expired');
      },
    },
  });
  socket = { client, token, locale };
  return client;
}

/** Closed by the server because of the token (4401 Unauthorized, 4403 Forbidden): retrying would not help. */
const isRefusal = (event: unknown): boolean => {
  const code = (event as { code?: number } | null)?.code;
  return code === 4401 || code === 4403;
};

/** Subscribes over the page's socket; `stop()` ends it. */
export function subscribe<R, V>(document: TypedDocumentString<R, V>, variables: V, sink: SubscriptionSink<R>): Subscription {
  const dispose = socketClient().subscribe<R>(
    { query: document.toString(), variables: variables as Record<string, unknown> },
    {
      next: (result) => {
        const error = result.errors?.[0];
        if (error) sink.error?.(new ApiError(String(error.extensions?.code ?? 'ERROR'), error.message));
        else if (result.data) sink.next(result.data);
      },
      error: (error) => {
        const list = Array.isArray(error) ? error : null;
        const first = list?.[0] as { message?: string; extensions?: { code?: string } } | undefined;
        if (first) sink.error?.(new ApiError(first.extensions?.code ?? 'ERROR', first.message ?? 'Error'));
        else sink.error?.(new ApiError('SOCKET', (error as { reason?: string })?.reason || 'The live connection closed'));
      },
      complete: () => sink.complete?.(),
    },
  );
  return { stop: dispose };
}

/** Closes the socket (on sign-out): the next subscription opens a new one with the new token. */
export function closeSocket(): void {
  socket?.client.dispose();
  socket = null;
  socketConnected.value = false;
}
