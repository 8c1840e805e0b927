import { describe, expect, it } from 'vitest';
import { isNewerEvent } from '../../src/web/api/job-event-order';

const at = (sequence: number, status: string) => ({ sequence, status });

describe("the page's order of a job's events", () => {
  it('takes a higher sequence, and nothing at or below the one shown but an end over a state that is not one', () => {
    expect(isNewerEvent(at(4, 'RUNNING'), at(5, 'RUNNING'))).toBe(true);
    expect(isNewerEvent(at(4, 'RUNNING'), at(4, 'RUNNING'))).toBe(false); // a repeat
    expect(isNewerEvent(at(4, 'RUNNING'), at(3, 'RUNNING'))).toBe(false); // late
    // Writes lost in a database crash: the job's end came at a sequence the page had passed.
    expect(isNewerEvent(at(4, 'RUNNING'), at(3, 'SUCCEEDED'))).toBe(true);
    expect(isNewerEvent(at(4, 'QUEUED'), at(2, 'FAILED'))).toBe(true);
    // An end shown already is not replaced by another at or below its sequence.
    expect(isNewerEvent(at(4, 'SUCCEEDED'), at(4, 'FAILED'))).toBe(false);
    expect(isNewerEvent(at(4, 'CANCELLED'), at(3, 'RUNNING'))).toBe(false);
    // After a retry the sequence rises past the end.
    expect(isNewerEvent(at(4, 'FAILED'), at(5, 'QUEUED'))).toBe(true);
  });
});
