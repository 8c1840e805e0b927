import { readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';

/**
 * Publishes a build made in `staging` (a folder of its own beside `dir`, named
 * `<dir>.<random>.tmp`) as `dir` with one rename, so a reader sees a whole build or none:
 * two test files may build the same content at once, and the one that finishes second
 * drops its copy. Then removes the other, older builds of the cache folder (not a
 * `.tmp` one: another file may be building into it).
 */
export function publishBuild(staging: string, dir: string): void {
  try {
    renameSync(staging, dir);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // someone else finished first
  }
  const cache = path.dirname(dir);
  for (const old of readdirSync(cache)) {
    if (old !== path.basename(dir) && !old.endsWith('.tmp')) rmSync(path.join(cache, old), { recursive: true, force: true });
  }
}
