/**
 * Where a process's time went, from a V8 `.cpuprofile` (`node --cpu-prof`): self time
 * by package or source folder, and total (inclusive) time of the functions named.
 */
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `node_modules/<package>`, `src/<folder>`, `node:<module>` or V8's own entries ((garbage collector), (idle)…). */
function placeOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url.split('/')[0]!;
  const src = url.lastIndexOf('/src/');
  if (src >= 0) {
    const parts = url.slice(src + 1).split('/');
    return parts.slice(0, Math.min(3, parts.length - 1)).join('/') || parts.join('/');
  }
  return url.split('/').slice(-2).join('/');
}

export interface ProfileSummary {
  totalMs: number;
  idleMs: number;
  byPlace: [string, number][];
  /** Self time by function (name @ place). */
  byFunction: [string, number][];
  inclusive: [string, number][];
}

export function summariseCpuProfile(file: string, functions: readonly string[], top = 16): ProfileSummary {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));

  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const inclusive = new Map<string, number>(functions.map((f) => [f, 0]));
  let totalMs = 0;
  let idleMs = 0;
  for (const [id, ms] of self) {
    const node = byId.get(id)!;
    totalMs += ms;
    if (node.callFrame.functionName === '(idle)') idleMs += ms;
    const place = placeOf(node.callFrame.url, node.callFrame.functionName);
    byPlace.set(place, (byPlace.get(place) ?? 0) + ms);
    const fn = `${node.callFrame.functionName || '(anonymous)'} @ ${place}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = byId.get(at)!.callFrame.functionName;
      if (inclusive.has(name) && !seen.has(name)) {
        seen.add(name);
        inclusive.set(name, inclusive.get(name)! + ms);
      }
    }
  }
  return {
    totalMs,
    idleMs,
    byPlace: [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, top),
    byFunction: [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top),
    inclusive: [...inclusive].sort((a, b) => b[1] - a[1]),
  };
}

export function formatProfileSummary(summary: ProfileSummary): string {
  const busy = summary.totalMs - summary.idleMs;
  const pct = (ms: number) => `${((100 * ms) / Math.max(1, busy)).toFixed(1).padStart(5)} %`;
  return [
    `busy ${busy.toFixed(0)} ms of ${summary.totalMs.toFixed(0)} ms profiled; self time by place (% of busy):`,
    ...summary.byPlace.filter(([place]) => place !== '(idle)').map(([place, ms]) => `  ${pct(ms)}  ${place}`),
    'self time by function (% of busy):',
    ...summary.byFunction.filter(([name]) => !name.startsWith('(idle)')).map(([name, ms]) => `  ${pct(ms)}  ${name}`),
    'inclusive time of named functions, synchronous parts only (% of busy):',
    ...summary.inclusive.map(([name, ms]) => `  ${pct(ms)}  ${name}`),
  ].join('\n');
}
