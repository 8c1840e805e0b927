/**
 * The service and the test support, transpiled once per content (TypeScript's
 * `transpileModule`, what ts-node does in every process it starts) into
 * node_modules/.cache/transpiled-service/<hash>/, for tests that start many service
 * processes: each then starts like compiled code (~1.5 s) instead of transpiling the
 * whole service again through ts-node (~7 s of CPU each on this machine).
 * Pass the returned entry to `spawnService`. The benchmarks (test/bench) are transpiled
 * with it, for the test that runs each of them once (`transpiledBench`).
 *
 * Nothing here imports vitest.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { publishBuild } from './build-cache';

const ROOT = path.resolve(__dirname, '../..');
const SOURCE_DIRS = ['src', 'migrations', 'test/support', 'test/bench', 'test/api/support'];
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'transpiled-service');

function sources(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sources(relative));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) found.push(relative);
  }
  return found;
}

/** Path of the transpiled test/support/service-process.js (transpiling first if the sources changed). */
export function transpiledServiceEntry(): string {
  const files = SOURCE_DIRS.flatMap(sources).sort();
  const hash = createHash('sha256');
  const texts = files.map((file) => {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    hash.update(file).update('\0').update(text).update('\0');
    return text;
  });
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  hash.update(JSON.stringify(options)).update(ts.version);
  const outDir = path.join(CACHE, hash.digest('hex').slice(0, 16));
  const entry = path.join(outDir, 'test', 'support', 'service-process.js');
  if (existsSync(entry)) return entry;

  // Into a folder of its own, then renamed: another test file may be doing the same.
  const staging = `${outDir}.${randomBytes(4).toString('hex')}.tmp`;
  const compilerOptions: ts.CompilerOptions = { ...options, sourceMap: false, inlineSourceMap: false, declaration: false, noEmit: false };
  files.forEach((file, i) => {
    const output = ts.transpileModule(texts[i]!, { fileName: path.join(ROOT, file), compilerOptions });
    const target = path.join(staging, file.replace(/\.ts$/, '.js'));
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, output.outputText);
  });
  publishBuild(staging, outDir);
  return entry;
}

/** Path of the transpiled src/main.js, the service's own entry (the same transpile as `transpiledServiceEntry`). */
export function transpiledMain(): string {
  return path.join(path.dirname(transpiledServiceEntry()), '..', '..', 'src', 'main.js');
}

/** Path of the transpiled test/bench/<name>.bench.js (the same transpile as `transpiledServiceEntry`). */
export function transpiledBench(name: string): string {
  return path.join(path.dirname(transpiledServiceEntry()), '..', 'bench', `${name}.bench.js`);
}
