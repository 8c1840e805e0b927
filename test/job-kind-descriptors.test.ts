import { isEnumType, isInterfaceType, isObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { buildApiSchema } from '../src/api/graphql/build-schema';
import { loadConfig } from '../src/config';
import { KindRegistry } from '../src/engine/registry';
import {
  checkJobKindCatalog,
  JOB_KINDS,
  JobKindDeclarationError,
  jobKindRegistrations,
  type JobKindCatalog,
  type JobKindDescriptor,
} from '../src/job-kind-descriptors';
import { ALL_JOB_KINDS, exclusivePer, JobKind } from '../src/job-kinds';

/**
 * A kind is declared once (src/job-kind-descriptors.ts) and everything else reads that
 * list: the configuration, the engine registrations of the composition root, the GraphQL
 * enum and object types. These tests check that every kind reaches all of them, and that
 * a half-declared kind is refused — by the compiler where it can tell, at start-up where
 * it cannot.
 */

const descriptor = (kind: string, overrides: Partial<JobKindDescriptor<string>> = {}): JobKindDescriptor<string> => ({
  kind,
  defaultConsumers: 1,
  exclusiveKey: exclusivePer(`scope-${kind}`),
  graphql: { typeName: `${kind.replace(/_/g, '')}Job`, description: kind },
  registration: (defaults) => ({ kind, defaults, processor: async () => null }),
  messages: {},
  ...overrides,
});

describe('the kind list reaches every part', () => {
  it('the engine gets one registration per kind, each its own, with the configured consumers', () => {
    const consumers = { [JobKind.MAKEUP_EXAM_AUTO]: 5 };
    const registrations = jobKindRegistrations(consumers);
    const registry = new KindRegistry();
    for (const registration of registrations) registry.register(registration);
    expect(registry.names().sort()).toEqual([...ALL_JOB_KINDS].sort());
    for (const kind of ALL_JOB_KINDS) {
      expect(registry.get(kind)!.defaults.consumers).toBe(kind === JobKind.MAKEUP_EXAM_AUTO ? 5 : JOB_KINDS[kind].defaultConsumers);
    }
  });

  it('the configuration has JOB_CONSUMERS_<KIND> for every kind, defaulting to the descriptor', () => {
    const config = loadConfig({});
    for (const kind of ALL_JOB_KINDS) {
      expect(config.engine.kinds[kind].consumers).toBe(JOB_KINDS[kind].defaultConsumers);
      expect(loadConfig({ [`JOB_CONSUMERS_${kind}`]: '3' }).engine.kinds[kind].consumers).toBe(3);
    }
  });

  it('the GraphQL enum lists every kind, each with its object type implementing Job', async () => {
    const schema = await buildApiSchema();
    const jobKind = schema.getType('JobKind');
    expect(isEnumType(jobKind) ? jobKind.getValues().map((v) => v.name).sort() : null).toEqual([...ALL_JOB_KINDS].sort());
    const job = schema.getType('Job');
    if (!isInterfaceType(job)) throw new Error('Job is not an interface');
    for (const kind of ALL_JOB_KINDS) {
      const type = schema.getType(JOB_KINDS[kind].graphql.typeName);
      if (!isObjectType(type)) throw new Error(`${JOB_KINDS[kind].graphql.typeName} is not an object type`);
      expect(type.getInterfaces()).toContain(job);
      expect(type.description).toBe(JOB_KINDS[kind].graphql.description);
      expect(await job.resolveType!({ kind } as never, {}, {} as never, job)).toBe(type.name);
    }
  });

  it('no two kinds share an exclusive-key scope, and each key names its scope', () => {
    const scopes = ALL_JOB_KINDS.map((kind) => JOB_KINDS[kind].exclusiveKey?.scope).filter(Boolean);
    expect(new Set(scopes).size).toBe(scopes.length);
    expect(JOB_KINDS[JobKind.MAKEUP_EXAM_AUTO].exclusiveKey!.key('s1')).toBe('makeup-exam-session:s1');
    expect(() => checkJobKindCatalog(JOB_KINDS)).not.toThrow();
  });
});

describe('a half-declared kind is refused', () => {
  it('by the compiler: a kind missing from the list, or listed under another kind', () => {
    const { [JobKind.MAKEUP_EXAM_AUTO]: _missing, ...rest } = JOB_KINDS;
    // @ts-expect-error MAKEUP_EXAM_AUTO has no descriptor
    const missing: JobKindCatalog = rest;
    const swapped: JobKindCatalog = {
      ...JOB_KINDS,
      // @ts-expect-error the descriptor of another kind under MAKEUP_EXAM_AUTO
      [JobKind.MAKEUP_EXAM_AUTO]: JOB_KINDS[JobKind.SCHEDULE_PUBLISH],
    };
    // The same two at run time, for a list built without the compiler's help.
    expect(() => checkJobKindCatalog({ ...swapped })).toThrow(JobKindDeclarationError);
    expect(Object.keys(missing)).not.toContain(JobKind.MAKEUP_EXAM_AUTO);
  });

  it('at start-up: a kind wired to the registration of another kind', () => {
    const catalog = {
      A_KIND: descriptor('A_KIND'),
      B_KIND: descriptor('B_KIND', { registration: (defaults) => ({ kind: 'A_KIND', defaults, processor: async () => null }) }),
    };
    expect(() => jobKindRegistrations({}, catalog)).toThrow(/job kind B_KIND is declared with the registration of A_KIND/);
    expect(jobKindRegistrations({}, { A_KIND: catalog.A_KIND }).map((r) => r.kind)).toEqual(['A_KIND']);
  });

  it('at start-up: two kinds with one GraphQL type or one exclusive-key scope, or consumers out of range', () => {
    expect(() => checkJobKindCatalog({ A_KIND: descriptor('A_KIND'), B_KIND: descriptor('B_KIND', { graphql: { typeName: 'AKINDJob', description: '' } }) })).toThrow(
      /A_KIND and B_KIND share the GraphQL type AKINDJob/,
    );
    expect(() => checkJobKindCatalog({ A_KIND: descriptor('A_KIND'), B_KIND: descriptor('B_KIND', { exclusiveKey: exclusivePer('scope-A_KIND') }) })).toThrow(
      /share the exclusive-key scope scope-A_KIND/,
    );
    expect(() => checkJobKindCatalog({ A_KIND: descriptor('A_KIND', { defaultConsumers: 17 }) })).toThrow(/defaultConsumers must be 1–16/);
    expect(() => checkJobKindCatalog({ A_KIND: descriptor('A_KIND', { graphql: { typeName: 'lower', description: '' } }) })).toThrow(/must be a name ending in Job/);
  });
});
