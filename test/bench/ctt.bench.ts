/**
 * ITC-2007 track-3 benchmark: solves comp01–comp14, checks each result with the
 * independent evaluator and compares it with the published references.
 *
 *   npm run bench:ctt -- [secondsPerInstance=60] [comp01 comp07 ...] [--seed=N]
 *
 * Instances and references are read at run time from ../shared/datasets/itc2007-ctt/
 * (relative to the repository root); nothing from there is copied into the project.
 */
import { existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { parseCtt } from '../../src/scheduling/ctt/ctt-format';
import { evaluateTimetable } from '../../src/scheduling/ctt/evaluator';
import { compileModel } from '../../src/scheduling/ctt/model';
import { solveCtt } from '../../src/scheduling/ctt/solver';

/** The repository root: this file runs from test/bench/ (ts-node) or dist/test/bench/ (compiled). */
function repoRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 8; i++) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    dir = resolve(dir, '..');
  }
  throw new Error(`cannot find the repository root above ${__dirname}`);
}

interface Reference {
  bestKnown: number;
  muellerAvg: number;
}

function readReferences(csvPath: string): Map<string, Reference> {
  const [head, ...rows] = readFileSync(csvPath, 'utf8').trim().split(/\r?\n/);
  const cols = head.split(',');
  const at = (name: string): number => {
    const i = cols.indexOf(name);
    if (i < 0) throw new Error(`${csvPath}: no column ${name}`);
    return i;
  };
  const iInstance = at('instance');
  const iBest = at('best_known_c2013');
  const iMueller = at('mueller_avg_itc_time');
  const refs = new Map<string, Reference>();
  for (const row of rows) {
    const f = row.split(',');
    refs.set(f[iInstance], { bestKnown: Number(f[iBest]), muellerAvg: Number(f[iMueller]) });
  }
  return refs;
}

function ratio(value: number, reference: number): string {
  if (reference === 0) return value === 0 ? '1.00' : '∞';
  return (value / reference).toFixed(2);
}

function main(): void {
  const args = process.argv.slice(2);
  const seedArg = args.find((a) => a.startsWith('--seed='));
  const seed = seedArg ? Number(seedArg.slice('--seed='.length)) : 1;
  const positional = args.filter((a) => !a.startsWith('--'));
  const seconds = positional.length > 0 && /^\d+(\.\d+)?$/.test(positional[0]) ? Number(positional.shift()) : 60;
  const instances = positional.length > 0 ? positional : Array.from({ length: 14 }, (_, i) => `comp${String(i + 1).padStart(2, '0')}`);

  const dataDir = join(repoRoot(), '..', 'shared', 'datasets', 'itc2007-ctt');
  const refs = readReferences(join(dataDir, 'instances-and-best-known.csv'));
  console.log(`CB-CTT (ITC-2007 track 3, UD2): ${seconds} s per instance, seed ${seed}, node ${process.version}, ${cpus()[0]?.model ?? 'cpu'} x${cpus().length}`);
  console.log(`reproduce: npm run bench:ctt -- ${seconds} ${positional.join(' ')}${seedArg ? ' ' + seedArg : ''}`.trimEnd());
  console.log('');
  const header = ['instance', 'hard', 'penalty', 'BK≈2013', 'Müller avg', 'pen/BK', 'pen/Müller', 'iterations', 'time s'];
  const rows: string[][] = [];
  const print = (cells: string[]): void => console.log(`| ${cells.join(' | ')} |`);
  print(header);
  print(header.map(() => '---'));
  let allFeasible = true;
  for (const name of instances) {
    const instance = compileModel(parseCtt(readFileSync(join(dataDir, `${name}.ctt`), 'utf8')));
    const result = solveCtt(instance, { seed, timeLimitMs: seconds * 1000 });
    const check = evaluateTimetable(instance, result.assignments);
    if (check.hard.total !== result.hard || check.soft.total !== result.penalty) {
      console.error(`${name}: solver reports hard ${result.hard} penalty ${result.penalty}, evaluator finds ${check.hard.total} / ${check.soft.total}`);
    }
    allFeasible &&= check.feasible;
    const ref = refs.get(name);
    const cells = [
      name,
      String(check.hard.total),
      String(check.soft.total),
      ref ? String(ref.bestKnown) : '',
      ref ? ref.muellerAvg.toFixed(1) : '',
      ref ? ratio(check.soft.total, ref.bestKnown) : '',
      ref ? ratio(check.soft.total, ref.muellerAvg) : '',
      `${(result.iterations / 1e6).toFixed(1)}M`,
      (result.elapsedMs / 1000).toFixed(1),
    ];
    rows.push(cells);
    print(cells);
  }
  console.log('');
  console.log(allFeasible ? 'all solutions feasible (0 hard violations by the evaluator)' : 'SOME SOLUTIONS ARE INFEASIBLE');
  if (!allFeasible) process.exitCode = 1;
}

main();
