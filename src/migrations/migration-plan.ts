import type { MigrationFile } from './migration-files.ts';
import type { RecordedMigration } from './migration-session.ts';

/** What a run has to do, from the files and the rows of the table. */
export interface MigrationPlan {
  /** Files not recorded: applied now, in this order (a file older than recorded ones too: a branch merged late). */
  readonly pending: MigrationFile[];
  /** Files recorded with another checksum: edited after they were applied; not applied again (a warning). */
  readonly changed: MigrationFile[];
  /** Versions recorded with a checksum whose file is gone (deleted, renamed, or older code deployed): a warning. */
  readonly missing: string[];
  /** Files recorded without a checksum (a table adopted from another runner): their checksum is recorded now. */
  readonly unchecked: MigrationFile[];
}

/**
 * Compares the migrations folder with the table. A row without a checksum and
 * without a file is a step the service's own code recorded (the example's
 * seed): left alone, never reported.
 *
 * @example
 * planMigrations(readMigrations(dir), await session.recorded()).pending.map((f) => f.version);
 */
export function planMigrations(files: readonly MigrationFile[], recorded: readonly RecordedMigration[]): MigrationPlan {
  const rows = new Map(recorded.map((r) => [r.version, r.checksum]));
  const plan: { pending: MigrationFile[]; changed: MigrationFile[]; missing: string[]; unchecked: MigrationFile[] } = {
    pending: [],
    changed: [],
    missing: [],
    unchecked: [],
  };
  for (const file of files) {
    if (!rows.has(file.version)) plan.pending.push(file);
    else {
      const checksum = rows.get(file.version);
      if (checksum === null || checksum === undefined) plan.unchecked.push(file);
      else if (checksum !== file.checksum) plan.changed.push(file);
    }
  }
  const versions = new Set(files.map((f) => f.version));
  for (const { version, checksum } of recorded) if (checksum !== null && !versions.has(version)) plan.missing.push(version);
  return plan;
}
