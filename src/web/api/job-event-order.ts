const TERMINAL = new Set<string>(['SUCCEEDED', 'FAILED', 'CANCELLED']);

export const isTerminalStatus = (status: string): boolean => TERMINAL.has(status);

/**
 * Whether a `jobEvents` event is newer than what a row shows. The server hands each job's
 * events in order, repeats and stale ends already dropped, so an event is newer when its
 * sequence is higher — or when it is the job's end and the row shows no end, whatever
 * its sequence: a database crash can lose a job's last writes after their events went
 * out, and the job's end then takes a sequence the row has already passed.
 */
export function isNewerEvent(row: { sequence: number; status: string }, event: { sequence: number; status: string }): boolean {
  return event.sequence > row.sequence || (isTerminalStatus(event.status) && !isTerminalStatus(row.status));
}
