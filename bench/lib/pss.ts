import { readProc } from '../../tools/proc.ts';

export interface Pss {
  /** Proportional set size: private pages plus each shared page divided by the processes mapping it, MB (MiB). */
  pssMb: number;
  /** Private_Clean + Private_Dirty (the unique set size): pages no other process maps, MB. */
  privateMb: number;
}

/**
 * PSS and private memory of a process from `/proc/<pid>/smaps_rollup`;
 * undefined when it is gone. Threads share their process's address space:
 * there is no PSS per thread.
 */
export function pssOf(pid: number): Pss | undefined {
  const rollup = readProc(`/proc/${pid}/smaps_rollup`);
  if (rollup === undefined) return undefined;
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(rollup)?.[1] ?? Number.NaN);
  const pss = kb('Pss');
  if (Number.isNaN(pss)) return undefined;
  return { pssMb: pss / 1024, privateMb: (kb('Private_Clean') + kb('Private_Dirty')) / 1024 };
}
