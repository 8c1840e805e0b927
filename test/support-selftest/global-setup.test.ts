import { afterEach, describe, expect, it, vi } from 'vitest';
import setup from '../support/global-setup.js';

// Calls the global setup directly with a stand-in for vitest's TestProject (only
// `provide` is used) and broken URLs, to see it fail or warn as it should.
const saved = { ...process.env };
afterEach(() => {
  for (const key of ['CI', 'DATABASE_URL', 'RABBITMQ_URL', 'JIAOWU_TEST_RABBIT']) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
  vi.restoreAllMocks();
});

function fakeProject() {
  const provided: Record<string, unknown> = {};
  const project = { provide: (key: string, value: unknown) => (provided[key] = value) };
  return { project: project as unknown as Parameters<typeof setup>[0], provided };
}

describe('global setup', () => {
  it('fails with instructions when PostgreSQL does not answer', async () => {
    process.env.DATABASE_URL = 'postgres://postgres@127.0.0.1:1/postgres';
    const { project } = fakeProject();
    await expect(setup(project)).rejects.toThrow(/PostgreSQL does not answer[\s\S]*pg_ctlcluster/);
  });

  it('fails under CI=true when RabbitMQ does not answer', async () => {
    process.env.CI = 'true';
    process.env.RABBITMQ_URL = 'amqp://guest:guest@127.0.0.1:1';
    const { project } = fakeProject();
    await expect(setup(project)).rejects.toThrow(/RabbitMQ does not answer[\s\S]*CI=true/);
  });

  it('warns loudly and tells the files when RabbitMQ is missing outside CI', async () => {
    process.env.CI = 'false';
    process.env.RABBITMQ_URL = 'amqp://guest:guest@127.0.0.1:1';
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const { project, provided } = fakeProject();
    await setup(project);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/RABBITMQ TESTS WILL BE SKIPPED/));
    expect(process.env.JIAOWU_TEST_RABBIT).toBe('0');
    expect(provided.rabbitAvailable).toBe(false);
  });
});
