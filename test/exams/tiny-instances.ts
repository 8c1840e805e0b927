/**
 * Hand-made instances small enough to check by hand (the evaluator tests spell out every
 * count). Line numbers matter: the format tests point at them.
 */

/** 4 exams, 4 periods (3 on 1 July, 1 on 2 July), 2 rooms, one AFTER, one EXCLUSION, one room-exclusive exam. */
export const TINY_EXAM = `[Exams:4]
120, 1, 2, 3
60, 3, 4
120, 5
90, 1, 5
[Periods:4]
01:07:2026, 09:00:00, 120, 0
01:07:2026, 13:00:00, 120, 5
01:07:2026, 16:00:00, 90, 0
02:07:2026, 09:00:00, 120, 0
[Rooms:2]
3, 0
2, 10
[PeriodHardConstraints]
0, AFTER, 1
2, EXCLUSION, 3
[RoomHardConstraints]
2, ROOM_EXCLUSIVE
[InstitutionalWeightings]
TWOINAROW, 7
TWOINADAY, 5
PERIODSPREAD, 2
NONMIXEDDURATIONS,10
FRONTLOAD,1,1,5
`;

/** Three exams, three students, each pair of exams shared by one student. */
export const TINY_CRS = `0001 2
0002 2
0003 2
`;
export const TINY_STU = `0001 0002
0001 0003

0002 0003
`;
