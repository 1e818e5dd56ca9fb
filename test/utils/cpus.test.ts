import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { availableCpus, type CpuOptions, cgroupCpuQuota, parseCpuMax, resolveWorkerCount } from '../../src/utils/cpus.ts';

/** Options pointing at a fixture: `<name>/cgroup` is /proc/self/cgroup, `<name>/fs` the cgroup mount. */
const fixture = (name: string, parallelism = 16): CpuOptions => {
  const dir = fileURLToPath(new URL(`../fixtures/cgroup/${name}/`, import.meta.url));
  return { cgroupRoot: `${dir}fs`, procCgroupFile: `${dir}cgroup`, parallelism };
};

test('parseCpuMax reads "<quota|max> <period>"', () => {
  assert.equal(parseCpuMax('200000 100000\n'), 2);
  assert.equal(parseCpuMax('150000 100000'), 1.5);
  assert.equal(parseCpuMax('max 100000\n'), undefined);
  for (const bad of ['', 'max', '100000', '-1 100000', '0 100000', '100000 0', '1e6 100000', '100000 100000 1', 'lots of cpus']) {
    assert.equal(parseCpuMax(bad), undefined, bad);
  }
});

test('no quota: availableParallelism', () => {
  assert.equal(availableCpus(fixture('v2-unlimited')), 16);
  assert.equal(availableCpus(fixture('v1-unlimited')), 16);
  assert.equal(cgroupCpuQuota(fixture('v2-unlimited')), undefined);
});

test('a quota of 2 CPUs caps the count at 2, never raises it', () => {
  assert.equal(availableCpus(fixture('v2-two-cpus')), 2);
  assert.equal(availableCpus(fixture('v2-two-cpus', 1)), 1);
});

test('a fractional quota rounds down, to at least one', () => {
  assert.equal(cgroupCpuQuota(fixture('v2-fractional')), 1.5);
  assert.equal(availableCpus(fixture('v2-fractional')), 1);
  assert.equal(availableCpus(fixture('v2-below-one')), 1);
});

test('the tightest quota from the process cgroup up to the root applies', () => {
  assert.equal(cgroupCpuQuota(fixture('v2-nested')), 3);
  assert.equal(availableCpus(fixture('v2-nested')), 3);
});

test('cgroup v1: cpu.cfs_quota_us over cpu.cfs_period_us, found from the container-relative mount', () => {
  assert.equal(cgroupCpuQuota(fixture('v1')), 4);
  assert.equal(availableCpus(fixture('v1')), 4);
});

test('malformed or missing files fall back to availableParallelism without throwing', () => {
  for (const name of ['v2-malformed', 'v2-no-cpu-max', 'garbage-membership', 'does-not-exist']) {
    assert.equal(availableCpus(fixture(name)), 16, name);
  }
  assert.equal(
    availableCpus({ cgroupRoot: '/nonexistent', procCgroupFile: '/nonexistent', parallelism: Number.NaN }),
    availableParallelism(),
  );
});

test('on this machine: a positive integer no larger than availableParallelism', () => {
  const n = availableCpus();
  assert.ok(Number.isInteger(n) && n >= 1 && n <= availableParallelism());
});

test('resolveWorkerCount: a number as is, auto as the CPU count', () => {
  assert.equal(resolveWorkerCount(3, 8), 3);
  assert.equal(resolveWorkerCount('auto', 8), 8);
  assert.equal(resolveWorkerCount('auto', 0), 1);
  assert.equal(resolveWorkerCount('auto'), availableCpus());
});
