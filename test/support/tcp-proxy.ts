// A TCP proxy between a client under test and a server (the shared broker or database),
// so a test can sever or stall the client's connections without touching the server.
import net from 'node:net';

export type PauseMode =
  /** Stop listening: new connections get ECONNREFUSED (a server that is down). */
  | 'refuse'
  /** Accept new connections but connect them to nothing until `resume()` (a stall). */
  | 'hold';

export interface CutOptions {
  /** Send a TCP RST to the client instead of a FIN (default false). */
  reset?: boolean;
}

export interface TcpProxy {
  /** The port the proxy listens on (127.0.0.1). */
  readonly port: number;
  /** Connections currently piped to the target. */
  readonly liveConnections: number;
  /** Connections accepted since the start. */
  readonly totalConnections: number;
  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string;
  /** Destroys every live connection (both sides); returns how many it cut. */
  cut(options?: CutOptions): number;
  /** Makes new connections fail ('refuse', default) or hang ('hold') until `resume()`. */
  pause(mode?: PauseMode): Promise<void>;
  /** Accepts and forwards new connections again (held ones are connected now). */
  resume(): Promise<void>;
  /** Stops forwarding bytes on live connections without closing them (a black hole). */
  freeze(): void;
  /** Forwards bytes on live connections again. */
  thaw(): void;
  /**
   * Live connections stop forwarding for good, without a FIN or RST to either side (a
   * middlebox that lost their state, a peer gone without a word); new connections are
   * forwarded as usual. Returns how many it dropped.
   */
  drop(): number;
  /** Cuts everything and stops listening. */
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  upstream?: net.Socket;
}

export async function startTcpProxy(
  targetPort: number,
  targetHost = '127.0.0.1',
  listenPort = 0,
): Promise<TcpProxy> {
  const pairs = new Set<Pair>();
  const held = new Set<Pair>();
  /** Dropped by `drop()`: kept open (silent) until `close()`. */
  const dropped = new Set<Pair>();
  let paused: PauseMode | undefined;
  let frozen = false;
  let closed = false;
  let total = 0;

  const destroyPair = (pair: Pair, reset = false) => {
    pairs.delete(pair);
    held.delete(pair);
    if (reset && !pair.client.destroyed) pair.client.resetAndDestroy();
    else pair.client.destroy();
    pair.upstream?.destroy();
  };

  const connectUpstream = (pair: Pair) => {
    const upstream = net.connect({ host: targetHost, port: targetPort });
    pair.upstream = upstream;
    upstream.setNoDelay(true);
    pair.client.setNoDelay(true);
    upstream.on('error', () => destroyPair(pair));
    upstream.on('close', () => destroyPair(pair));
    setFlowing(pair, !frozen);
  };

  // Piping moves bytes both ways; unpiping and pausing holds them in the kernel buffers.
  const setFlowing = (pair: Pair, flowing: boolean) => {
    const { client, upstream } = pair;
    if (!upstream) return;
    if (flowing) {
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
      upstream.resume();
    } else {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  };

  const onConnection = (client: net.Socket) => {
    total++;
    const pair: Pair = { client };
    pairs.add(pair);
    client.on('error', () => destroyPair(pair));
    client.on('close', () => destroyPair(pair));
    if (paused === 'hold') {
      client.pause();
      held.add(pair);
      return;
    }
    connectUpstream(pair);
  };

  let server = net.createServer(onConnection);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port, host: '127.0.0.1' }, () => {
        server.off('error', reject);
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  // close() stops accepting at once, but its callback waits for live connections to
  // end; a pause keeps them, so do not wait for it.
  const stopListening = async (waitForConnections = false) => {
    if (!server.listening) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    if (waitForConnections) await closed;
  };

  const port = await listen(listenPort);


  return {
    port,
    get liveConnections() {
      return [...pairs].filter((pair) => !held.has(pair)).length;
    },
    get totalConnections() {
      return total;
    },
    urlFor(url: string) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    cut(options: CutOptions = {}) {
      const victims = [...pairs];
      for (const pair of victims) destroyPair(pair, options.reset);
      return victims.length;
    },
    async pause(mode: PauseMode = 'refuse') {
      if (closed) throw new Error('proxy closed');
      paused = mode;
      if (mode === 'refuse') await stopListening();
    },
    async resume() {
      if (closed) throw new Error('proxy closed');
      const was = paused;
      paused = undefined;
      if (was === 'refuse') {
        server = net.createServer(onConnection);
        await listen(port);
      }
      for (const pair of [...held]) {
        held.delete(pair);
        connectUpstream(pair);
      }
    },
    freeze() {
      if (frozen) return;
      frozen = true;
      for (const pair of pairs) if (!held.has(pair)) setFlowing(pair, false);
    },
    thaw() {
      if (!frozen) return;
      frozen = false;
      for (const pair of pairs) if (!held.has(pair)) setFlowing(pair, true);
    },
    drop() {
      const victims = [...pairs].filter((pair) => !held.has(pair));
      for (const pair of victims) {
        setFlowing(pair, false);
        pairs.delete(pair);
        dropped.add(pair);
      }
      return victims.length;
    },
    async close() {
      closed = true;
      for (const pair of [...pairs, ...dropped]) destroyPair(pair);
      dropped.clear();
      await stopListening(true);
    },
  };
}
