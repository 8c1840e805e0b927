import { describe, expect, it } from 'vitest';
import { groupByPeriod, joinSittings, normaliseStudentCode, periodText, type SessionParts } from '../../src/web/views/makeup-exams/arrangement-view';

const parts: SessionParts = {
  exams: [
    { id: 'e1', code: 'C001', position: 0, duration: 120, roomExclusive: false, course: { id: 'c1', code: 'C001', name: 'Linear Algebra' } },
    { id: 'e2', code: 'C002', position: 1, duration: null, roomExclusive: true, course: null },
  ],
  periods: [
    { id: 'p1', position: 0, date: '2026-03-02', startTime: '09:00:00', duration: 120 },
    { id: 'p2', position: 1, date: '2026-03-02', startTime: '14:00:00', duration: 90 },
  ],
  rooms: [
    { id: 'r1', code: 'A101', name: 'A101', capacity: 40, position: 0 },
    { id: 'r2', code: 'A102', name: 'A102', capacity: 30, position: 1 },
  ],
  invigilators: [{ id: 'i1', teacher: { id: 't1', code: 'T001', name: 'Wang Wei' } }],
};

describe('arrangement view', () => {
  it('joins sittings with their parts and groups them by period, then room and exam', () => {
    const joined = joinSittings(
      [
        { id: 's3', seats: 5, exam: { id: 'e2' }, period: { id: 'p2' }, room: { id: 'r1' }, invigilator: null },
        { id: 's2', seats: 10, exam: { id: 'e1' }, period: { id: 'p1' }, room: { id: 'r2' }, invigilator: { id: 'i1' } },
        { id: 's1', seats: 30, exam: { id: 'e1' }, period: { id: 'p1' }, room: { id: 'r1' }, invigilator: { id: 'i1' } },
        { id: 's4', exam: { id: 'e9' }, period: { id: 'p1' }, room: null },
      ],
      parts,
    );
    expect(joined[1]).toMatchObject({ id: 's2', seats: 10, exam: { code: 'C001' }, room: { code: 'A102' }, invigilator: { teacher: { name: 'Wang Wei' } } });
    expect(joined[3]).toMatchObject({ seats: null, exam: { code: '#e9' }, room: null, invigilator: null });
    const groups = groupByPeriod(joined);
    expect(groups.map((g) => [g.period.id, g.sittings.map((s) => s.id)])).toEqual([
      ['p1', ['s4', 's1', 's2']],
      ['p2', ['s3']],
    ]);
  });

  it('writes a period with its date and time, or its number when it has none', () => {
    const min = (n: number) => `${n} min`;
    const nth = (n: number) => `Period ${n}`;
    expect(periodText(parts.periods[0]!, min, nth)).toBe('2026-03-02 09:00, 120 min');
    expect(periodText({ id: 'x', position: 4, date: null, startTime: null, duration: 60 }, min, nth)).toBe('Period 5, 60 min');
  });

  it('accepts a typed student code trimmed, and refuses a blank one or one with blanks', () => {
    expect(normaliseStudentCode('  S0042 ')).toBe('S0042');
    expect(normaliseStudentCode('   ')).toBeNull();
    expect(normaliseStudentCode('S 42')).toBeNull();
  });
});
