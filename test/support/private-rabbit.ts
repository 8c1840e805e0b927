// A RabbitMQ node of a test's own, for fault tests (broker restart, broker crash),
// started from Debian's rabbitmq-server beside the machine's broker, which it never
// touches: its own node name, ports, data, logs, config and (empty) plugin list.
// See "A private broker or database for fault tests" in ../shared/STACK.md.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { rabbitAvailable, tcpAnswers } from './services.js';

const run = promisify(execFile);

// Runs a command and resolves when it exits (not when its stdio closes: a detached
// daemon may keep inherited pipes open). Rejects with its output on a non-zero exit.
function runUntilExit(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not exit within ${timeoutMs} ms: ${output}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      child.stdout.destroy();
      child.stderr.destroy();
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} exited with ${code ?? signal}: ${output.trim()}`));
    });
  });
}

export interface PrivateRabbitOptions {
  /** AMQP port (default: a free port in 20000–32000). */
  port?: number;
  /** Erlang distribution port (default: a free port in 20000–32000). */
  distPort?: number;
  /** Milliseconds to wait for the node to accept AMQP connections (default 60 s). */
  startTimeoutMs?: number;
}

export interface PrivateRabbit {
  /** `amqp://guest:guest@127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly distPort: number;
  /** Erlang node name, `NAME@localhost`, for `rabbitmqctl -n`. */
  readonly nodeName: string;
  /** Folder holding data, logs and config. */
  readonly baseDir: string;
  /** Whether the node is meant to be running (after start, before stop/kill). */
  readonly running: boolean;
  /** Starts the node (again) on the same data and ports; resolves once AMQP answers. */
  start(): Promise<void>;
  /** Stops the node cleanly (SIGTERM to its beam process, as `rabbitmqctl stop` would); resolves once it has exited and the port is closed. */
  stop(): Promise<void>;
  /** SIGKILLs the node's beam process (a crash); resolves once the port is closed. */
  kill(): Promise<void>;
  /** Stops (or kills) the node and removes its folders. */
  destroy(): Promise<void>;
  /** The tail of the node's log, for failure messages. */
  logTail(lines?: number): Promise<string>;
  /** Runs `rabbitmqctl -n <node> ...args` (e.g. to raise a resource alarm); resolves with its output. */
  rabbitmqctl(...args: string[]): Promise<string>;
}

const RABBITMQ_SERVER = '/usr/sbin/rabbitmq-server';
const RABBITMQCTL = '/usr/sbin/rabbitmqctl';

/** Whether Debian's rabbitmq-server is installed (the private node needs it). */
export function privateRabbitSupported(): boolean {
  return existsSync(RABBITMQ_SERVER) && existsSync(RABBITMQCTL);
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * A free port below the kernel's ephemeral range (32768+), so that an outgoing
 * connection cannot take it between a stop and a restart, and so that the Erlang CLI
 * tools' ports (dist port + 10000…10010) stay below 65536.
 */
async function pickPort(exclude: number[] = []): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    if (exclude.includes(port) || exclude.includes(port + 10000)) continue;
    if ((await portIsFree(port)) && (await tcpAnswers('127.0.0.1', port, 500)) === false) return port;
  }
  throw new Error('no free port found in 20000–32000');
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const DIR_PREFIX = 'jiaowu-rabbit-';

// Not os.tmpdir(): TMPDIR may point somewhere the rabbitmq user cannot enter.
function privateRabbitRoot(): string {
  return process.env.JIAOWU_PRIVATE_RABBIT_DIR || '/tmp';
}

// Whether pid is the beam of that node (its environment names it; the command line
// does not): the pid in a stale pid file may have been reused.
function isBeamOf(pid: number, nodeName: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`RABBITMQ_NODENAME=${nodeName}`);
  } catch {
    return false;
  }
}

/**
 * Kills and removes private nodes left behind by test processes that died without
 * destroying them (a worker killed on a timeout). Nodes whose owner process still
 * runs (another test run on this machine) are left alone. Returns how many it reaped.
 */
export function reapOrphanedPrivateRabbits(): number {
  let reaped = 0;
  let entries: string[];
  try {
    entries = readdirSync(privateRabbitRoot()).filter((name) => name.startsWith(DIR_PREFIX));
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const baseDir = path.join(privateRabbitRoot(), entry);
    try {
      const owner = Number(readFileSync(path.join(baseDir, 'owner'), 'utf8').trim());
      if (owner > 0 && processAlive(owner)) continue;
      const nodeName = `${entry.slice(DIR_PREFIX.length)}@localhost`;
      const pid = Number(readFileSync(path.join(baseDir, 'node.pid'), 'utf8').trim());
      // Only the beam of that node: the pid may have been reused by now.
      if (pid > 0 && isBeamOf(pid, nodeName)) process.kill(pid, 'SIGKILL');
    } catch {
      // no owner or pid file: a half-made folder
    }
    rmSync(baseDir, { recursive: true, force: true });
    reaped++;
  }
  return reaped;
}

// Nodes not yet destroyed, so a dying test process does not leave them behind.
const live = new Set<{ pidFile: string; baseDir: string }>();
process.once('exit', () => {
  for (const node of live) {
    try {
      const pid = Number(readFileSync(node.pidFile, 'utf8').trim());
      if (pid > 0) process.kill(pid, 'SIGKILL');
    } catch {
      // not running
    }
    try {
      rmSync(node.baseDir, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
});

/**
 * Starts a RabbitMQ node of the caller's own (about 6–7 s here) and resolves once it
 * accepts AMQP connections as guest/guest from 127.0.0.1.
 */
export async function startPrivateRabbit(options: PrivateRabbitOptions = {}): Promise<PrivateRabbit> {
  if (!privateRabbitSupported()) {
    throw new Error(`private RabbitMQ needs ${RABBITMQ_SERVER} (apt-get install -y rabbitmq-server)`);
  }
  if (process.getuid?.() !== 0) {
    throw new Error('private RabbitMQ needs root (the Debian wrapper switches to the rabbitmq user)');
  }
  const port = options.port ?? (await pickPort([5672, 25672]));
  const distPort = options.distPort ?? (await pickPort([port, 5672, 25672]));
  if (port === 5672 || distPort === 25672) throw new Error('refusing to use the shared broker’s ports');
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const id = `t${randomBytes(4).toString('hex')}`;
  const nodeName = `${id}@localhost`;
  const baseDir = path.join(privateRabbitRoot(), `${DIR_PREFIX}${id}`);
  const mnesiaDir = path.join(baseDir, 'mnesia');
  const logDir = path.join(baseDir, 'log');
  const pluginsFile = path.join(baseDir, 'enabled_plugins');
  const configFile = path.join(baseDir, 'rabbitmq.conf');
  const advancedConfigFile = path.join(baseDir, 'advanced.config');
  const pidFile = path.join(baseDir, 'node.pid');
  mkdirSync(mnesiaDir, { recursive: true });
  mkdirSync(logDir, { recursive: true });
  // Who started it: reapOrphanedPrivateRabbits() removes nodes whose owner is gone.
  writeFileSync(path.join(baseDir, 'owner'), `${process.pid}\n`);
  writeFileSync(pluginsFile, '[].\n');
  // Our own config file, so the machine's /etc/rabbitmq/rabbitmq.conf (which binds 5672)
  // is not read. loopback_users stays default: guest may connect from 127.0.0.1.
  writeFileSync(configFile, [`listeners.tcp.1 = 127.0.0.1:${port}`, 'log.file.level = info', ''].join('\n'));
  writeFileSync(advancedConfigFile, '[].\n');
  const { uid, gid } = rabbitmqUser();
  for (const entry of [baseDir, mnesiaDir, logDir, pluginsFile, configFile, advancedConfigFile]) {
    chownSync(entry, uid, gid);
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    RABBITMQ_NODENAME: nodeName,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: mnesiaDir,
    RABBITMQ_LOG_BASE: logDir,
    RABBITMQ_ENABLED_PLUGINS_FILE: pluginsFile,
    RABBITMQ_CONFIG_FILE: configFile,
    RABBITMQ_ADVANCED_CONFIG_FILE: advancedConfigFile,
    RABBITMQ_PID_FILE: pidFile,
  };
  // rabbitmqctl only needs the node name; the broker's env would not hurt but keep it plain.
  const ctlEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(ctlEnv)) if (key.startsWith('RABBITMQ_')) delete ctlEnv[key];

  const url = `amqp://guest:guest@127.0.0.1:${port}`;
  const handle = { pidFile, baseDir };
  let running = false;
  let destroyed = false;

  const readPid = async (): Promise<number | undefined> => {
    try {
      const pid = Number((await readFile(pidFile, 'utf8')).trim());
      return pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  };
  const logTail = async (lines = 40): Promise<string> => {
    try {
      const text = await readFile(path.join(logDir, `${nodeName}.log`), 'utf8');
      return text.split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  };
  const rabbitmqctl = async (...args: string[]): Promise<string> => {
    const { stdout } = await run(RABBITMQCTL, ['-n', nodeName, ...args], { env: ctlEnv, cwd: baseDir, timeout: 60_000 });
    return stdout;
  };
  const portClosed = async () => !(await tcpAnswers('127.0.0.1', port, 500));

  const start = async (): Promise<void> => {
    if (destroyed) throw new Error('private RabbitMQ was destroyed');
    if (running) return;
    if (!(await portIsFree(port))) throw new Error(`port ${port} is taken; cannot start ${nodeName}`);
    live.add(handle);
    rmSync(pidFile, { force: true });
    await runUntilExit(RABBITMQ_SERVER, ['-detached'], env, baseDir, 30_000);
    running = true;
    try {
      await waitFor(`${nodeName} to listen on ${port}`, startTimeoutMs, async () => {
        const pid = await readPid();
        if (pid !== undefined && !processAlive(pid)) throw new Error(`${nodeName} (pid ${pid}) died while starting`);
        return tcpAnswers('127.0.0.1', port, 500);
      });
      // The listener opens late in boot, but make sure a real AMQP handshake works.
      await waitFor(`${nodeName} to complete an AMQP handshake`, 15_000, () => rabbitAvailable(url, 2000));
    } catch (error) {
      const tail = await logTail();
      await killNode().catch(() => undefined);
      throw new Error(`${(error as Error).message}\n--- ${nodeName} log ---\n${tail}`);
    }
  };

  const killNode = async (): Promise<void> => {
    const pid = await readPid();
    if (pid !== undefined && processAlive(pid)) process.kill(pid, 'SIGKILL');
    running = false;
    if (pid !== undefined) await waitFor(`pid ${pid} to exit`, 15_000, async () => !processAlive(pid));
    await waitFor(`port ${port} to close`, 15_000, portClosed);
  };

  const stop = async (): Promise<void> => {
    if (!running) return;
    const pid = await readPid();
    if (pid !== undefined && processAlive(pid)) {
      // SIGTERM is RabbitMQ's own clean shutdown (what `rabbitmqctl stop` asks for too),
      // without booting a second Erlang VM to ask it.
      process.kill(pid, 'SIGTERM');
      try {
        await waitFor(`pid ${pid} to exit after SIGTERM`, 60_000, async () => !processAlive(pid));
      } catch (error) {
        await killNode();
        throw new Error(`${nodeName} did not stop on SIGTERM, killed it: ${(error as Error).message}`);
      }
    } else if (pid === undefined) {
      // No pid file to signal: ask the node over distribution.
      try {
        await run(RABBITMQCTL, ['-n', nodeName, 'stop'], { env: ctlEnv, cwd: baseDir, timeout: 60_000 });
      } catch (error) {
        // Not reachable over distribution: make sure it is gone anyway.
        await killNode();
        throw new Error(`rabbitmqctl stop failed for ${nodeName}, killed it: ${(error as Error).message}`);
      }
    }
    running = false;
    await waitFor(`port ${port} to close`, 30_000, portClosed);
  };

  const destroy = async (): Promise<void> => {
    if (destroyed) return;
    try {
      await stop();
    } catch {
      // stop() already killed it
    }
    await killNode().catch(() => undefined);
    destroyed = true;
    live.delete(handle);
    rmSync(baseDir, { recursive: true, force: true });
  };

  const node: PrivateRabbit = {
    url,
    port,
    distPort,
    nodeName,
    baseDir,
    get running() {
      return running;
    },
    start,
    stop,
    kill: killNode,
    destroy,
    logTail,
    rabbitmqctl,
  };
  try {
    await start();
  } catch (error) {
    live.delete(handle);
    destroyed = true;
    rmSync(baseDir, { recursive: true, force: true });
    throw error;
  }
  return node;
}

function rabbitmqUser(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('rabbitmq:'));
  if (!line) throw new Error('no rabbitmq OS user (apt-get install -y rabbitmq-server)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}
