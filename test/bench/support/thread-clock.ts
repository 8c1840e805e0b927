/**
 * The calling thread's time on a core and waiting for one, from the kernel's own account
 * (`/proc/thread-self/schedstat`: ns running, ns runnable but queued). A stall of the
 * event loop is then one of three things: the thread working (CPU), the thread ready but
 * not given a core (other load on the machine: waiting), or neither (the thread asleep in
 * a call, or the whole virtual machine not running). Where the file is missing, the
 * process's CPU (`process.cpuUsage`, all threads) stands in and waiting is unknown (NaN).
 */
import fs from 'node:fs';

export interface ThreadTimes {
  cpuMs: number;
  waitMs: number;
}

/** A reader of the times of the thread that calls this (the file is opened here: `thread-self` is that thread). */
export function threadClock(): () => ThreadTimes {
  let fd: number | null = null;
  try {
    fd = fs.openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    fd = null;
  }
  if (fd === null) {
    return () => {
      const cpu = process.cpuUsage();
      return { cpuMs: (cpu.user + cpu.system) / 1000, waitMs: Number.NaN };
    };
  }
  const handle = fd;
  const buffer = Buffer.alloc(128);
  return () => {
    // A read at offset 0 makes the kernel write the figures afresh.
    const length = fs.readSync(handle, buffer, 0, buffer.length, 0);
    const [running, waiting] = buffer.toString('latin1', 0, length).split(' ');
    return { cpuMs: Number(running) / 1e6, waitMs: Number(waiting) / 1e6 };
  };
}
