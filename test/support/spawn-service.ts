import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { transpiledServiceEntry } from './transpiled-service';

const ROOT = path.resolve(__dirname, '../..');
/** Compiled (a benchmark under dist/): run the compiled entry; otherwise the sources transpiled once (transpiled-service.ts). */
const COMPILED = __filename.endsWith('.js');
/** The output kept for failure messages: its tail, so a long run cannot grow it without bound. */
const OUTPUT_TAIL_CHARS = 1_000_000;

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  url: string;
  output(): string;
  /** SIGKILL: a crash, no cleanup. */
  kill9(): Promise<void>;
  /** SIGTERM and wait for the exit code. */
  terminate(timeoutMs?: number): Promise<number | null>;
}

/**
 * Starts test/support/service-process.ts (the real service plus the TEST_SLEEP kind)
 * as a child process and resolves once it prints READY. From compiled code (the
 * benchmarks) it starts the compiled service-process.js beside this file; from the
 * sources, their one-time transpile (transpiled-service.ts: what ts-node would do in
 * every process, done once); `entry` names another compiled one.
 */
export async function spawnService(env: Record<string, string>, timeoutMs = 60_000, entry?: string): Promise<ServiceProcess> {
  const args = [entry ?? (COMPILED ? path.join(__dirname, 'service-process.js') : transpiledServiceEntry())];
  const child = spawn(process.execPath, args, {
    cwd: COMPILED ? process.cwd() : ROOT,
    env: { ...process.env, NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'json', LOG_LEVEL: 'warn', ...env },
    // stdin is a pipe only so that the child sees it close when this process dies (service-process.ts).
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk;
    if (output.length > OUTPUT_TAIL_CHARS) output = output.slice(-OUTPUT_TAIL_CHARS / 2);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // not left running behind the failure
      reject(new Error(`service did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = () => {
      const match = /READY (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before it was ready:\n${output}`));
    });
  });
  return {
    child,
    pid: child.pid!,
    url,
    output: () => output,
    kill9: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    terminate: async (ms = 30_000) => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), ms);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
