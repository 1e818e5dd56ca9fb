import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import {
  cgroupMemoryLimit,
  MIN_WORKER_HEAP_MB,
  parseMemoryLimit,
  workerHeapArgs,
  workerHeapShareMB,
} from '../../src/primary/memory-limit.ts';
import type { CgroupOptions } from '../../src/utils/cgroup.ts';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

/** Options pointing at a fixture: `<name>/cgroup` is /proc/self/cgroup, `<name>/fs` the cgroup mount. */
const fixture = (name: string): CgroupOptions => {
  const dir = fileURLToPath(new URL(`../fixtures/cgroup/${name}/`, import.meta.url));
  return { cgroupRoot: `${dir}fs`, procCgroupFile: `${dir}cgroup` };
};

test('parseMemoryLimit: bytes, or undefined for unlimited, zero and garbage', () => {
  assert.equal(parseMemoryLimit('536870912\n'), 512 * MiB);
  assert.equal(parseMemoryLimit('max\n'), undefined);
  assert.equal(parseMemoryLimit('9223372036854771712\n'), undefined, 'cgroup v1 "unlimited"');
  assert.equal(parseMemoryLimit('9223372036854775807'), undefined);
  for (const bad of ['', '0', '-1', '1e9', '512M', '12 34', 'lots of memory']) assert.equal(parseMemoryLimit(bad), undefined, bad);
});

test('cgroup v2: memory.max', () => {
  assert.equal(cgroupMemoryLimit(fixture('memory-v2')), 512 * MiB);
});

test('cgroup v2: the tightest limit from the process cgroup up to the root', () => {
  assert.equal(cgroupMemoryLimit(fixture('memory-v2-nested')), 1 * GiB);
});

test('cgroup v1: memory.limit_in_bytes under the memory mount, the container below an unlimited root', () => {
  assert.equal(cgroupMemoryLimit(fixture('memory-v1')), 256 * MiB);
});

test('unlimited, malformed or missing: undefined, without throwing', () => {
  for (const name of ['memory-v2-unlimited', 'memory-v1-unlimited', 'memory-v2-malformed', 'v1', 'garbage-membership', 'does-not-exist']) {
    assert.equal(cgroupMemoryLimit(fixture(name)), undefined, name);
  }
  assert.equal(cgroupMemoryLimit({ cgroupRoot: '/nonexistent', procCgroupFile: '/nonexistent' }), undefined);
});

test('on this machine: a positive number of bytes or undefined', () => {
  const limit = cgroupMemoryLimit();
  assert.ok(limit === undefined || (Number.isSafeInteger(limit) && limit > 0), String(limit));
});

test('workerHeapShareMB: (0.75 × limit − 64 MiB) / workers', () => {
  assert.equal(workerHeapShareMB(512 * MiB, 2), 160);
  assert.equal(workerHeapShareMB(2 * GiB, 4), 368);
  assert.equal(workerHeapShareMB(1 * GiB, 1), 704);
  assert.equal(workerHeapShareMB(1 * GiB, 3), 234, 'rounded down');
});

test('workerHeapShareMB: N shares, the reserve and the primary fit inside the limit', () => {
  for (const limitMB of [512, 768, 1024, 2048, 4096, 16384]) {
    for (const workers of [1, 2, 3, 4, 8]) {
      const share = workerHeapShareMB(limitMB * MiB, workers);
      if (share === MIN_WORKER_HEAP_MB) continue;
      assert.ok(workers * share + 64 + limitMB * 0.25 <= limitMB, `${workers} × ${share} MB in ${limitMB} MB`);
    }
  }
});

test('workerHeapShareMB: at least 64 MiB, at most what Node picks itself', () => {
  assert.equal(workerHeapShareMB(256 * MiB, 4), MIN_WORKER_HEAP_MB);
  assert.equal(workerHeapShareMB(64 * MiB, 1), MIN_WORKER_HEAP_MB, 'a limit below the primary allowance');
  assert.equal(workerHeapShareMB(512 * MiB, 0), 320, 'no worker counts as one');
  assert.equal(workerHeapShareMB(64 * GiB, 2, 4144), 4144);
});

test('workerHeapArgs: the share as --max-old-space-size when there is a limit', () => {
  const base = { execArgv: [], nodeOptions: undefined, workers: 2, nodeDefaultMB: 4144 };
  assert.deepEqual(workerHeapArgs({ ...base, limitBytes: 512 * MiB }), ['--max-old-space-size=160']);
  assert.deepEqual(
    workerHeapArgs({ ...base, limitBytes: 512 * MiB, execArgv: ['--enable-source-maps'], nodeOptions: '--trace-warnings' }),
    ['--max-old-space-size=160'],
  );
});

test('workerHeapArgs: nothing without a limit', () => {
  assert.deepEqual(workerHeapArgs({ execArgv: [], nodeOptions: undefined, workers: 2, limitBytes: undefined }), []);
});

test('workerHeapArgs: nothing when the user set a heap size, in execArgv or NODE_OPTIONS, with dashes or underscores', () => {
  const base = {
    execArgv: [] as string[],
    nodeOptions: undefined as string | undefined,
    workers: 2,
    limitBytes: 512 * MiB,
    nodeDefaultMB: 4144,
  };
  for (const execArgv of [
    ['--max-old-space-size=300'],
    ['--max_old_space_size=300'],
    ['--max-old-space-size', '300'],
    ['--max-heap-size=400'],
  ]) {
    assert.deepEqual(workerHeapArgs({ ...base, execArgv }), [], execArgv.join(' '));
  }
  for (const nodeOptions of ['--max-old-space-size=300', '--enable-source-maps  --max_old_space_size=300', ' --max-old-space-size 300 ']) {
    assert.deepEqual(workerHeapArgs({ ...base, nodeOptions }), [], nodeOptions);
  }
  assert.deepEqual(workerHeapArgs({ ...base, execArgv: ['--max-semi-space-size=16'] }), ['--max-old-space-size=160'], 'another V8 size');
});

test("workerHeapArgs: nothing when the share is not below Node's own heap size", () => {
  const base = { execArgv: [], nodeOptions: undefined, workers: 1 };
  assert.deepEqual(workerHeapArgs({ ...base, limitBytes: 64 * GiB, nodeDefaultMB: 4144 }), []);
  // by default, Node's own choice is this process's heap limit
  const own = getHeapStatistics().heap_size_limit / MiB;
  assert.deepEqual(workerHeapArgs({ ...base, limitBytes: 1024 * GiB }), []);
  assert.ok(own > MIN_WORKER_HEAP_MB);
});
