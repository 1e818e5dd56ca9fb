import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Attack = 'slowloris' | 'slow-body' | 'slow-read';

export interface SlowHttpTestOptions {
  attack: Attack;
  host: string;
  port: number;
  /** Prepended to the command line, e.g. `ip netns exec <ns>` to run it in another network namespace. */
  commandPrefix?: readonly string[];
  /** Connections opened in all (slowhttptest opens each once; the test ends when none is left). */
  connections: number;
  /** Connections opened per second. */
  rate: number;
  /** Longest test length in seconds. */
  lengthS: number;
}

export interface SlowHttpTestReport {
  /** The command line, for the results file. */
  command: string;
  exitCode: number | null;
  /** slowhttptest's verdict line (`Exit status: …`). */
  verdict: string;
  /** Per-second rows of its CSV: closed, pending, connected, and the status its own probe got (0 = no answer). */
  rows: { second: number; closed: number; pending: number; connected: number; available: number }[];
  maxConnected: number;
  /** Seconds in which slowhttptest's own probe got no answer. */
  unavailableSeconds: number;
}

const MODES: Record<Attack, string[]> = {
  // one header line a second, never the blank line
  slowloris: ['-H', '-i', '1', '-x', '24'],
  // a JSON body announced as 8 kB, trickled a few bytes a second, on the route that reads bodies
  'slow-body': ['-B', '-i', '1', '-x', '8', '-s', '8192', '-t', 'POST', '-f', 'application/json'],
  // 4 MiB responses pipelined 4 times, read 32 bytes a second through a tiny advertised window
  'slow-read': ['-X', '-k', '4', '-n', '1', '-w', '16', '-y', '64', '-z', '32'],
};

const PATHS: Record<Attack, string> = { slowloris: '/who', 'slow-body': '/upload', 'slow-read': '/big?kb=4096' };

/** Runs Debian's slowhttptest once with its statistics on (`-g -o`) and reads its CSV report. */
export async function runSlowHttpTest(o: SlowHttpTestOptions): Promise<SlowHttpTestReport> {
  const dir = mkdtempSync(join(tmpdir(), 'flotilla-slowhttptest-'));
  const prefix = join(dir, 'report');
  const args = [
    ...MODES[o.attack],
    '-c',
    String(o.connections),
    '-r',
    String(o.rate),
    '-l',
    String(o.lengthS),
    '-p',
    '2',
    '-g',
    '-o',
    prefix,
    '-u',
    `http://${o.host}:${o.port}${PATHS[o.attack]}`,
  ];
  try {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const [command = 'slowhttptest', ...rest] = [...(o.commandPrefix ?? []), 'slowhttptest', ...args];
      const child = spawn(command, rest, { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
      child.once('error', reject);
      child.once('close', (exitCode) => resolve({ code: exitCode, output }));
    });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: slowhttptest colours its output with ANSI escapes
    const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
    const verdict = /Exit status:\s*(.*)/.exec(plain)?.[1]?.trim() ?? 'no verdict';
    let csv = '';
    try {
      csv = readFileSync(`${prefix}.csv`, 'utf8');
    } catch {
      throw new Error(`slowhttptest wrote no CSV report (exit ${code}):\n${plain.slice(-1500)}`);
    }
    const rows = csv
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',').map(Number))
      .filter((f) => f.length >= 5 && f.every(Number.isFinite))
      .map(([second, closed, pending, connected, available]) => ({
        second: second as number,
        closed: closed as number,
        pending: pending as number,
        connected: connected as number,
        available: available as number,
      }));
    return {
      command: `slowhttptest ${args.filter((a) => a !== prefix).join(' ')}`.replace(' -o -u', ' -o <prefix> -u'),
      exitCode: code,
      verdict,
      rows,
      maxConnected: rows.reduce((m, r) => Math.max(m, r.connected), 0),
      unavailableSeconds: rows.filter((r) => r.available === 0).length,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
