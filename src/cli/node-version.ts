/** The oldest Node.js flotilla runs on (`engines` in package.json says the same). */
export const MINIMUM_NODE = '22.18.0';

/**
 * Why this Node.js cannot run flotilla, in one line, or undefined when it can.
 * The CLI checks it before it imports anything that an older Node would fail
 * to link (Node 20 has no `module.enableCompileCache`, and strips no types).
 *
 * @example
 * unsupportedNode('20.20.2'); // 'flotilla needs Node.js 22.18.0 or later (24 LTS recommended); this is Node.js 20.20.2'
 */
export function unsupportedNode(version: string): string | undefined {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const [wantMajor = 0, wantMinor = 0, wantPatch = 0] = MINIMUM_NODE.split('.').map(Number);
  const found = major * 1e6 + minor * 1e3 + patch;
  const wanted = wantMajor * 1e6 + wantMinor * 1e3 + wantPatch;
  if (found >= wanted) return undefined;
  return `flotilla needs Node.js ${MINIMUM_NODE} or later (24 LTS recommended); this is Node.js ${version}`;
}
