import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { publishBuild } from '../../support/build-cache';

const ROOT = path.resolve(__dirname, '../../..');

/** Built pages, one folder per content of src/web and the lock file. */
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'web-bundle');

/** Every file of src/web, sorted, and package-lock.json: what a build's output depends on. */
function bundleInputs(dir = path.join(ROOT, 'src', 'web')): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...bundleInputs(file));
    else found.push(file);
  }
  return found.sort();
}

/**
 * The web page built with the project's Vite config, with what the build printed (the
 * bundle sizes): built once per content of src/web (and package-lock.json) into
 * node_modules/.cache/web-bundle/<hash>/, so the test files that serve the page share
 * one build. Built into a folder of its own and renamed: two test files may build at
 * once. Leave the folder in place (the next test file uses it).
 */
export async function buildWebBundle(): Promise<{ dir: string; output: string }> {
  const hash = createHash('sha256');
  for (const file of [...bundleInputs(), path.join(ROOT, 'package-lock.json')]) hash.update(path.relative(ROOT, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  const dir = path.join(CACHE, hash.digest('hex').slice(0, 16));
  const outputFile = path.join(dir, '.build-output.txt');
  if (fs.existsSync(outputFile)) return { dir, output: fs.readFileSync(outputFile, 'utf8') };

  const staging = `${dir}.${randomBytes(4).toString('hex')}.tmp`;
  const output = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'src/web/vite.config.mts', '--logLevel', 'warn'],
      { cwd: ROOT, env: { ...process.env, WEB_OUT_DIR: staging, VITE_CONFIG_NATIVE_IGNORE_WARNING: 'true' }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => (error ? reject(new Error(`vite build failed: ${error.message}\n${stdout}\n${stderr}`)) : resolve(stdout)),
    );
  });
  if (!fs.existsSync(path.join(staging, 'index.html'))) throw new Error(`vite build wrote no index.html into ${staging}:\n${output}`);
  fs.writeFileSync(path.join(staging, '.build-output.txt'), output);
  publishBuild(staging, dir);
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
