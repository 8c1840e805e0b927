/**
 * The service's node flags are spelled in three places: `npm start`, the Docker image's
 * CMD and the benches' SERVICE_NODE_FLAGS (the benches measure what is deployed). They
 * must not drift apart.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_NODE_FLAGS } from './bench/support/bench-service-env';

const ROOT = path.resolve(__dirname, '..');
const ENTRY = 'dist/src/main.js';

/** The flags between `node` and the entry in a command's words. */
function flagsBefore(words: readonly string[]): string[] {
  const node = words.indexOf('node');
  const entry = words.indexOf(ENTRY);
  expect(node, `no "node" in ${JSON.stringify(words)}`).toBeGreaterThanOrEqual(0);
  expect(entry, `no "${ENTRY}" after "node" in ${JSON.stringify(words)}`).toBeGreaterThan(node);
  return words.slice(node + 1, entry);
}

describe('the service runs with one set of node flags', () => {
  it('npm start passes SERVICE_NODE_FLAGS to node', () => {
    const start = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start!;
    expect(flagsBefore(start.split(/\s+/))).toEqual(SERVICE_NODE_FLAGS);
  });

  it("the Docker image's CMD passes SERVICE_NODE_FLAGS to node", () => {
    const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
    expect(cmd, 'the Dockerfile has no CMD in exec form').not.toBeNull();
    expect(flagsBefore(JSON.parse(cmd![1]!) as string[])).toEqual(SERVICE_NODE_FLAGS);
  });
});
