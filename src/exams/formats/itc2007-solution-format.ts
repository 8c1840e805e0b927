/**
 * The ITC-2007 examination solution file (`.sln`): one line `period, room` per exam, in
 * exam order, both 0-based positions in the instance. `-1, -1` marks an unplaced exam (as
 * the competition winner's solver writes it).
 */
import type { ExamArrangement, ExamModel, ExamPlacement } from '../model/exam-model';
import { ExamModelError } from '../model/exam-model-error';
import { ExamFormatError, textLines } from './exam-format-error';

/** Writes the `.sln` of an arrangement of a capacitated model (one room per exam). */
export function formatItc2007Solution(model: ExamModel, arrangement: ExamArrangement): string {
  const roomIndex = new Map(model.rooms.map((r, i) => [r.code, i]));
  const byExam = new Map<string, ExamPlacement>();
  for (const p of arrangement.placements) byExam.set(p.exam, p);
  return model.exams
    .map((e) => {
      const p = byExam.get(e.code);
      if (!p) return '-1, -1\n';
      if (p.rooms.length !== 1) throw new ExamModelError(`exam ${e.code} sits in ${p.rooms.length} rooms; a .sln line holds exactly one`);
      const room = roomIndex.get(p.rooms[0].room);
      if (room === undefined) throw new ExamModelError(`exam ${e.code} sits in unknown room ${p.rooms[0].room}`);
      return `${p.period}, ${room}\n`;
    })
    .join('');
}

/**
 * Reads a `.sln` against its instance. Unlike a lenient validator this throws on any bad
 * line (`ExamFormatError` with file and line): a silently dropped exam hides a bug.
 */
export function parseItc2007Solution(text: string, model: ExamModel, file = '.sln'): ExamArrangement {
  const lines = textLines(text);
  const placements: ExamPlacement[] = [];
  let exam = 0;
  lines.forEach((raw, i) => {
    const line = i + 1;
    const trimmed = raw.trim();
    if (trimmed === '') return;
    if (exam >= model.exams.length) throw new ExamFormatError(file, line, `more lines than the ${model.exams.length} exams of the instance`);
    const f = trimmed.split(',').map((t) => t.trim());
    if (f.length !== 2 || !f.every((t) => /^-?\d+$/.test(t))) throw new ExamFormatError(file, line, `expected "period, room", found "${trimmed}"`);
    const [period, room] = f.map(Number);
    const e = model.exams[exam++];
    if (period === -1 && room === -1) return;
    if (period < 0 || period >= model.periods.length) {
      throw new ExamFormatError(file, line, `period ${period} is not in 0..${model.periods.length - 1}`);
    }
    if (room < 0 || room >= model.rooms.length) throw new ExamFormatError(file, line, `room ${room} is not in 0..${model.rooms.length - 1}`);
    placements.push({ exam: e.code, period, rooms: [{ room: model.rooms[room].code, seats: new Set(e.students).size }] });
  });
  if (exam < model.exams.length) {
    throw new ExamFormatError(file, Math.max(1, lines.length), `${exam} lines for ${model.exams.length} exams: every exam needs a line`);
  }
  return { placements, invigilation: [] };
}
