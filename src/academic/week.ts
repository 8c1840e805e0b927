/** Words for the week grid, as a scheduler reads them ("Tuesday period 3"). */
export const DAY_NAMES = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;

export const dayName = (day: number): string => DAY_NAMES[day] ?? `day ${day + 1}`;

export function periodLabel(term: { periodLabels: string[] }, period: number): string {
  const label = term.periodLabels[period];
  return label ? `period ${period + 1} (${label})` : `period ${period + 1}`;
}

export const slotName = (term: { periodLabels: string[] }, day: number, period: number): string => `${dayName(day)} ${periodLabel(term, period)}`;
