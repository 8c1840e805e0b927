import { describe, expect, it } from 'vitest';
import { readAllPages, readCurricula } from '../../src/web/views/timetabling/read-pages';

const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `id${String(i).padStart(4, '0')}` }));

/** A keyset list as the API serves it: rows after `after`, at most `first`. */
function server(all: { id: string }[]) {
  const calls: [number, string | null][] = [];
  const fetch = async (first: number, after: string | null) => {
    calls.push([first, after]);
    const start = after === null ? 0 : all.findIndex((r) => r.id === after) + 1;
    return all.slice(start, start + first);
  };
  return { fetch, calls };
}

describe('readAllPages', () => {
  it('reads every page, each after the last row of the one before, and stops on a short page', async () => {
    const { fetch, calls } = server(rows(7));
    expect((await readAllPages(fetch, 3)).map((r) => r.id)).toEqual(rows(7).map((r) => r.id));
    expect(calls).toEqual([
      [3, null],
      [3, 'id0002'],
      [3, 'id0005'],
    ]);
  });

  it('asks once more after an exactly full last page', async () => {
    const { fetch, calls } = server(rows(6));
    expect(await readAllPages(fetch, 3)).toHaveLength(6);
    expect(calls).toHaveLength(3);
  });

  it('refuses a bad page size, a list over the bound, and a page that does not move', async () => {
    await expect(readAllPages(server(rows(1)).fetch, 0)).rejects.toThrow(RangeError);
    await expect(readAllPages(server(rows(1)).fetch, 501)).rejects.toThrow(RangeError);
    await expect(readAllPages(server(rows(10)).fetch, 2, 5)).rejects.toThrow(/more than 5 rows/);
    await expect(readAllPages(async () => [{ id: 'same' }, { id: 'same' }], 2)).rejects.toThrow(/did not move/);
  });
});

describe('readCurricula', () => {
  it("reads on a curriculum whose first courses filled the page, from the curriculum before it", async () => {
    const curricula = [
      { id: 'q1', code: 'A', name: 'a', courses: rows(2) },
      { id: 'q2', code: 'B', name: 'b', courses: rows(5) },
      { id: 'q3', code: 'C', name: 'c', courses: rows(3) },
    ];
    const more: [string | null, string, number][] = [];
    const result = await readCurricula(
      async (first, after, perCurriculum) => {
        const start = after === null ? 0 : curricula.findIndex((c) => c.id === after) + 1;
        return curricula.slice(start, start + first).map((c) => ({ ...c, courses: c.courses.slice(0, perCurriculum) }));
      },
      async (before, afterCourse, first) => {
        more.push([before, afterCourse, first]);
        const curriculum = curricula[before === null ? 0 : curricula.findIndex((c) => c.id === before) + 1]!;
        const start = curriculum.courses.findIndex((c) => c.id === afterCourse) + 1;
        return curriculum.courses.slice(start, start + first);
      },
      2,
      3,
      1,
    );
    expect(result.map((c) => [c.id, c.courseIds.length])).toEqual([
      ['q1', 2],
      ['q2', 5],
      ['q3', 3],
    ]);
    expect(result[1]!.courseIds).toEqual(rows(5).map((r) => r.id));
    // q2 filled its 3: read on after its 3rd course, one at a time, from after q1.
    expect(more[0]).toEqual(['q1', 'id0002', 1]);
    // q3 filled its 3 exactly: one more read finds nothing.
    expect(more.at(-1)).toEqual(['q2', 'id0002', 1]);
  });
});
