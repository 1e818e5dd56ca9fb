/** One figure of a scenario, with its target and whether the target was met. */
export interface Row {
  scenario: string;
  figure: string;
  value: string;
  /** The target, e.g. `<= 1500 ms`; empty for figures reported for information. */
  target: string;
  /** `met` / `MISSED` against the target; `info` when there is none; `error` when the scenario could not run. */
  status: 'met' | 'MISSED' | 'info' | 'error';
}

/** A scenario's figures plus its notes (evidence of a miss, caveats) for the results file. */
export interface ScenarioReport {
  name: string;
  rows: Row[];
  notes: string[];
  seconds: number;
}

export function judged(scenario: string, figure: string, value: string, target: string, met: boolean): Row {
  return { scenario, figure, value, target, status: met ? 'met' : 'MISSED' };
}

export function info(scenario: string, figure: string, value: string): Row {
  return { scenario, figure, value, target: '', status: 'info' };
}

const HEADERS = ['scenario', 'figure', 'value', 'target', 'status'] as const;

function cells(row: Row): string[] {
  return [row.scenario, row.figure, row.value, row.target, row.status];
}

/** The rows as an aligned plain-text table, for the terminal. */
export function textTable(rows: readonly Row[]): string {
  const all = [[...HEADERS], ...rows.map(cells)];
  const widths = HEADERS.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(all[0] as string[]), widths.map((w) => '-'.repeat(w)).join('  '), ...all.slice(1).map(line)].join('\n');
}

/** The rows as a Markdown table. */
export function markdownTable(rows: readonly Row[]): string {
  const escapePipes = (c: string) => c.replaceAll('|', '\\|');
  const out = [`| ${HEADERS.join(' | ')} |`, `|${HEADERS.map(() => '---').join('|')}|`];
  for (const row of rows) out.push(`| ${cells(row).map(escapePipes).join(' | ')} |`);
  return out.join('\n');
}
