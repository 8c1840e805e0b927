/**
 * Exam timetabling benchmark: solves the Toronto instances (uncapacitated, proximity
 * cost, the literature's period counts) and ITC-2007 exam sets 1-4 (rooms, durations,
 * side constraints, institutional weights), checks each result with the independent
 * evaluator and prints it beside the published references.
 *
 *   npm run bench:exams -- [secondsPerInstance=60] [car91 set4 ...] [--seed=N]
 *
 * Instances and references are read at run time from ../shared/datasets/toronto-exam/ and
 * ../shared/datasets/itc2007-exam/ (relative to the repository root); nothing from there
 * is copied into the project. References: Toronto, the best known cost of the compiled
 * tables (and the cMA mean of 10 runs); ITC-2007, the lowest of the literature's averages
 * (best single runs are lower).
 */
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { evaluateArrangement } from '../../src/exams/evaluation/evaluator';
import { parseItc2007Exam } from '../../src/exams/formats/itc2007-exam-format';
import { parseToronto } from '../../src/exams/formats/toronto-format';
import type { ExamModel } from '../../src/exams/model/exam-model';
import { solveExams } from '../../src/exams/solver/solver';

/** The repository root: this file runs from test/bench/ (ts-node) or a dist/ folder (compiled). */
function repoRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 8; i++) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    dir = resolve(dir, '..');
  }
  throw new Error(`cannot find the repository root above ${__dirname}`);
}

interface BenchInstance {
  name: string;
  load: () => ExamModel;
  periods: number;
  reference: number;
  referenceLabel: string;
  /** Decimals the benchmark's costs are published with. */
  digits: number;
}

/** Splits a CSV line, honouring double-quoted fields (the Toronto CSV quotes some sources). */
function csvFields(line: string): string[] {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (ch === ',' && !quoted) {
      out.push(field);
      field = '';
    } else field += ch;
  }
  out.push(field);
  return out;
}

function readCsv(path: string): Record<string, string>[] {
  const [head, ...rows] = readFileSync(path, 'utf8').trim().split(/\r?\n/);
  const cols = csvFields(head);
  return rows.map((row) => {
    const f = csvFields(row);
    return Object.fromEntries(cols.map((c, i) => [c, f[i]]));
  });
}

function torontoInstances(dir: string): BenchInstance[] {
  return readCsv(join(dir, 'instances-and-best-known.csv'))
    .filter((r) => existsSync(join(dir, `${r.file_stem}.crs`)))
    .map((r) => ({
      name: r.instance,
      periods: Number(r.periods),
      load: () =>
        parseToronto(readFileSync(join(dir, `${r.file_stem}.crs`), 'utf8'), readFileSync(join(dir, `${r.file_stem}.stu`), 'utf8'), Number(r.periods), {
          coursesFile: `${r.file_stem}.crs`,
          studentsFile: `${r.file_stem}.stu`,
        }),
      reference: Number(r.best_compiled),
      referenceLabel: `best known (cMA mean ${r.cMA_avg_of_10})`,
      digits: 2,
    }));
}

function itcInstances(dir: string): BenchInstance[] {
  return readCsv(join(dir, 'instances-and-reference-results.csv'))
    .filter((r) => existsSync(join(dir, `${r.instance}.exam`)))
    .map((r) => {
      const averages = Object.entries(r).filter(([k]) => k.startsWith('avg_'));
      const [bestKey, best] = averages.reduce((a, b) => (Number(b[1]) < Number(a[1]) ? b : a));
      return {
        name: r.instance.replace('exam_comp_', ''),
        periods: Number(r.periods),
        load: () => parseItc2007Exam(readFileSync(join(dir, `${r.instance}.exam`), 'utf8'), { file: `${r.instance}.exam` }),
        reference: Number(best),
        referenceLabel: `best average (${bestKey.slice(4)})`,
        digits: 0,
      };
    });
}

function main(): void {
  const args = process.argv.slice(2);
  const seedArg = args.find((a) => a.startsWith('--seed='));
  const seed = seedArg ? Number(seedArg.slice('--seed='.length)) : 1;
  const positional = args.filter((a) => !a.startsWith('--'));
  const seconds = positional.length > 0 && /^\d+(\.\d+)?$/.test(positional[0]) ? Number(positional.shift()) : 60;

  const datasets = join(repoRoot(), '..', 'shared', 'datasets');
  const all = [...torontoInstances(join(datasets, 'toronto-exam')), ...itcInstances(join(datasets, 'itc2007-exam'))];
  const unknown = positional.filter((n) => !all.some((i) => i.name === n));
  if (unknown.length > 0) throw new Error(`unknown instance(s) ${unknown.join(', ')}; known: ${all.map((i) => i.name).join(' ')}`);
  const chosen = positional.length > 0 ? all.filter((i) => positional.includes(i.name)) : all;

  console.log(`Exam timetabling (Toronto, ITC-2007 track 1): ${seconds} s per instance, seed ${seed}, node ${process.version}, ${cpus()[0]?.model ?? 'cpu'} x${cpus().length}, load average ${loadavg()[0].toFixed(1)}`);
  console.log(`reproduce: npm run bench:exams -- ${seconds} ${positional.join(' ')}${seedArg ? ' ' + seedArg : ''}`.trimEnd());
  console.log('');
  const header = ['instance', 'periods', 'hard', 'cost', 'reference', 'cost/ref', 'iterations', 'time s', 'reference is'];
  const print = (cells: string[]): void => console.log(`| ${cells.join(' | ')} |`);
  print(header);
  print(header.map(() => '---'));
  let allFeasible = true;
  for (const inst of chosen) {
    const model = inst.load();
    const result = solveExams(model, { seed, timeLimitMs: seconds * 1000 });
    const check = evaluateArrangement(model, result.arrangement);
    if (check.hard.total !== result.hard || Math.abs(check.soft.total - result.cost) > 1e-9 * Math.max(1, check.soft.total)) {
      console.error(`${inst.name}: solver reports hard ${result.hard} cost ${result.cost}, evaluator finds ${check.hard.total} / ${check.soft.total}`);
      process.exitCode = 1;
    }
    allFeasible &&= check.feasible;
    print([
      inst.name,
      String(inst.periods),
      String(check.hard.total),
      check.soft.total.toFixed(inst.digits),
      String(inst.reference),
      (check.soft.total / inst.reference).toFixed(2),
      `${(result.iterations / 1e3).toFixed(0)}k`,
      (result.elapsedMs / 1000).toFixed(1),
      inst.referenceLabel,
    ]);
  }
  console.log('');
  console.log(allFeasible ? `all ${chosen.length} solutions feasible (0 hard violations by the evaluator)` : 'SOME SOLUTIONS ARE INFEASIBLE');
  if (!allFeasible) process.exitCode = 1;
}

main();
