/**
 * A week as a table: one row per period of the day, one column per day, each cell the
 * items placed at that (day, period). Both plan grids and the published timetable are
 * drawn from it. Items outside the week are returned apart, never dropped silently.
 */
export interface Slotted {
  /** 0-based day of the week. */
  day: number;
  /** 0-based period of the day. */
  period: number;
}

export interface WeekCell<T> {
  day: number;
  period: number;
  items: T[];
}

export interface WeekRow<T> {
  period: number;
  /** The term's label of the period (e.g. "08:00–09:35"), or "" when it has none. */
  label: string;
  cells: WeekCell<T>[];
}

export interface WeekGrid<T> {
  days: number[];
  rows: WeekRow<T>[];
  /** Items whose day or period is outside the week (a term made smaller since). */
  outside: T[];
}

export interface WeekShape {
  daysPerWeek: number;
  periodsPerDay: number;
  periodLabels?: readonly string[];
}

export function buildWeekGrid<T extends Slotted>(shape: WeekShape, items: Iterable<T>, order?: (a: T, b: T) => number): WeekGrid<T> {
  const { daysPerWeek, periodsPerDay } = shape;
  if (!Number.isInteger(daysPerWeek) || daysPerWeek < 1 || !Number.isInteger(periodsPerDay) || periodsPerDay < 1) {
    throw new RangeError(`a week needs at least one day and one period, got ${daysPerWeek} × ${periodsPerDay}`);
  }
  const days = Array.from({ length: daysPerWeek }, (_, day) => day);
  const rows: WeekRow<T>[] = Array.from({ length: periodsPerDay }, (_, period) => ({
    period,
    label: shape.periodLabels?.[period] ?? '',
    cells: days.map((day) => ({ day, period, items: [] as T[] })),
  }));
  const outside: T[] = [];
  for (const item of items) {
    const inside = Number.isInteger(item.day) && Number.isInteger(item.period) && item.day >= 0 && item.day < daysPerWeek && item.period >= 0 && item.period < periodsPerDay;
    if (inside) rows[item.period]!.cells[item.day]!.items.push(item);
    else outside.push(item);
  }
  if (order) for (const row of rows) for (const cell of row.cells) cell.items.sort(order);
  return { days, rows, outside };
}
