import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * Builds the web page with the project's Vite config into a folder of its own (two
 * test files may build at once) and returns it, with what the build printed (the
 * bundle sizes). Remove it with `fs.rmSync(dir, { recursive: true })`.
 */
export async function buildWebBundle(): Promise<{ dir: string; output: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'jiaowu-web-'));
  const output = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'src/web/vite.config.mts', '--logLevel', 'warn'],
      { cwd: ROOT, env: { ...process.env, WEB_OUT_DIR: dir, VITE_CONFIG_NATIVE_IGNORE_WARNING: 'true' }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => (error ? reject(new Error(`vite build failed: ${error.message}\n${stdout}\n${stderr}`)) : resolve(stdout)),
    );
  });
  if (!fs.existsSync(path.join(dir, 'index.html'))) throw new Error(`vite build wrote no index.html into ${dir}:\n${output}`);
  return { dir, output };
}

/** Only this machine: data:, blob: and about: pages, and 127.0.0.1. */
export function isLocal(url: string): boolean {
  if (/^(data|blob|about):/.test(url)) return true;
  try {
    return new URL(url).hostname === '127.0.0.1';
  } catch {
    return false;
  }
}
