/**
 * A benchmark file could not be read. It names the file (a Toronto instance is two files)
 * and the 1-based line, because a person fixes it in an editor.
 */
export class ExamFormatError extends Error {
  override readonly name = 'ExamFormatError';
  constructor(
    /** The file as the caller named it (e.g. `car-s-91.stu`, or a field name). */
    readonly file: string,
    /** 1-based line of the offending entry (the last line when the file ends early). */
    readonly line: number,
    readonly detail: string,
  ) {
    super(`${file} line ${line}: ${detail}`);
  }
}

/** Lines of a text file, 1-based, whatever the line endings. */
export function textLines(text: string): string[] {
  return text.split(/\r\n|\r|\n/);
}
