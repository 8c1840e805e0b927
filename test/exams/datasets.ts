/**
 * Where the public exam benchmarks live: ../shared/datasets/{toronto-exam,itc2007-exam}/
 * next to the repository (never copied into it). Tests that need them skip when absent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseItc2007Exam } from '../../src/exams/formats/itc2007-exam-format';
import { parseToronto } from '../../src/exams/formats/toronto-format';
import type { ExamModel } from '../../src/exams/model/exam-model';

export const REPO_ROOT = resolve(__dirname, '..', '..');
export const TORONTO_DIR = join(REPO_ROOT, '..', 'shared', 'datasets', 'toronto-exam');
export const ITC_EXAM_DIR = join(REPO_ROOT, '..', 'shared', 'datasets', 'itc2007-exam');
export const HAVE_TORONTO = existsSync(join(TORONTO_DIR, 'instances-and-best-known.csv'));
export const HAVE_ITC_EXAM = existsSync(join(ITC_EXAM_DIR, 'exam_comp_set1.exam'));

export interface TorontoRow {
  instance: string;
  stem: string;
  periods: number;
  referenceRaw: number;
  referenceCost: number;
}

/** The Toronto instances present in the folder, with the period counts and reference totals of its CSV. */
export function torontoRows(): TorontoRow[] {
  const [head, ...rows] = readFileSync(join(TORONTO_DIR, 'instances-and-best-known.csv'), 'utf8').trim().split(/\r?\n/);
  const cols = head.split(',');
  const at = (name: string): number => cols.indexOf(name);
  return rows
    .map((row) => {
      // The source column may hold a quoted comma; the fields read here all come before it.
      const f = row.split(',');
      const tail = row.split(',').slice(-2);
      return {
        instance: f[at('instance')],
        stem: f[at('file_stem')],
        periods: Number(f[at('periods')]),
        referenceRaw: Number(tail[0]),
        referenceCost: Number(tail[1]),
      };
    })
    .filter((r) => existsSync(join(TORONTO_DIR, `${r.stem}.crs`)));
}

export function readToronto(stem: string, periods: number): ExamModel {
  return parseToronto(readFileSync(join(TORONTO_DIR, `${stem}.crs`), 'utf8'), readFileSync(join(TORONTO_DIR, `${stem}.stu`), 'utf8'), periods, {
    coursesFile: `${stem}.crs`,
    studentsFile: `${stem}.stu`,
  });
}

export function readTorontoText(relativePath: string): string {
  return readFileSync(join(TORONTO_DIR, relativePath), 'utf8');
}

export function readItcExamText(set: number): string {
  return readFileSync(join(ITC_EXAM_DIR, `exam_comp_set${set}.exam`), 'utf8');
}

export function readItcExam(set: number): ExamModel {
  return parseItc2007Exam(readItcExamText(set), { file: `exam_comp_set${set}.exam` });
}
