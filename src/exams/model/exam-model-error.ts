/** The model or an arrangement is inconsistent (unknown code, duplicate, out-of-range value). */
export class ExamModelError extends Error {
  override readonly name = 'ExamModelError';
}
