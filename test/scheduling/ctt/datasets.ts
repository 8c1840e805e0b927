/**
 * Where the public ITC-2007 instances live: ../shared/datasets/itc2007-ctt/ next to the
 * repository (never copied into it). Tests that need them skip when it is absent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(__dirname, '..', '..', '..');
export const CTT_DATA_DIR = join(REPO_ROOT, '..', 'shared', 'datasets', 'itc2007-ctt');
export const HAVE_CTT_DATA = existsSync(join(CTT_DATA_DIR, 'comp01.ctt'));

export function readCttData(relativePath: string): string {
  return readFileSync(join(CTT_DATA_DIR, relativePath), 'utf8');
}
