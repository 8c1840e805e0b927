/**
 * The Toronto solution file (`.sol`): one line `<examId> <period>` per exam, period
 * 0-based. Ids are written as imported (`0001`); published solutions often drop the
 * leading zeros (`1`), so the reader also matches an id by its numeric value.
 */
import type { ExamArrangement, ExamModel, ExamPlacement } from '../model/exam-model';
import { ExamFormatError, textLines } from './exam-format-error';

/** Writes the `.sol` of an arrangement, in exam order; unplaced exams have no line. */
export function formatTorontoSolution(model: ExamModel, arrangement: ExamArrangement): string {
  const period = new Map(arrangement.placements.map((p) => [p.exam, p.period]));
  return model.exams
    .filter((e) => period.has(e.code))
    .map((e) => `${e.code} ${period.get(e.code)}\n`)
    .join('');
}

/** Reads a `.sol` against its instance; throws `ExamFormatError` (file and line) on any bad line. */
export function parseTorontoSolution(text: string, model: ExamModel, file = '.sol'): ExamArrangement {
  const exact = new Map(model.exams.map((e, i) => [e.code, i]));
  const numeric = new Map<number, number>();
  model.exams.forEach((e, i) => {
    if (/^\d+$/.test(e.code) && !numeric.has(Number(e.code))) numeric.set(Number(e.code), i);
  });
  const placedOn = new Map<number, number>();
  const placements: ExamPlacement[] = [];
  textLines(text).forEach((raw, i) => {
    const line = i + 1;
    const t = raw.trim().split(/\s+/).filter((x) => x.length > 0);
    if (t.length === 0) return;
    if (t.length !== 2) throw new ExamFormatError(file, line, `expected "<examId> <period>", found ${t.length} fields`);
    const [id, periodText] = t;
    const e = exact.get(id) ?? (/^\d+$/.test(id) ? numeric.get(Number(id)) : undefined);
    if (e === undefined) throw new ExamFormatError(file, line, `exam ${id} is not in the instance`);
    if (placedOn.has(e)) throw new ExamFormatError(file, line, `exam ${id} is placed twice (first on line ${placedOn.get(e)})`);
    if (!/^\d+$/.test(periodText) || Number(periodText) >= model.periods.length) {
      throw new ExamFormatError(file, line, `period "${periodText}" is not in 0..${model.periods.length - 1}`);
    }
    placedOn.set(e, line);
    placements.push({ exam: model.exams[e].code, period: Number(periodText), rooms: [] });
  });
  return { placements, invigilation: [] };
}
