import type { RateLimitPolicy } from '../core/rate-limit-policy.ts';

/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers, structured fields):
 * `RateLimit-Policy: "<name>";q=<max>;w=<window s>` and `RateLimit: "<name>";r=<remaining>;t=<s to reset>`.
 * Seconds are whole: the window rounded up, the reset rounded up to at least 1.
 *
 * @example
 * policyHeader({ name: 'default', max: 50, windowMs: 60_000, … }); // '"default";q=50;w=60'
 * rateLimitHeader('"default"', 0, 41_200); // '"default";r=0;t=42'
 */
export function policyHeader(policy: RateLimitPolicy): string {
  return `${sfString(policy.name)};q=${policy.max};w=${Math.ceil(policy.windowMs / 1000)}`;
}

/** The `RateLimit` field for a policy whose name is already a structured-field string (`sfString`). */
export function rateLimitHeader(quotedName: string, remaining: number, resetMs: number): string {
  return `${quotedName};r=${remaining};t=${resetSeconds(resetMs)}`;
}

/** Whole seconds until a window ends, at least 1: also the `Retry-After` of a refused request. */
export function resetSeconds(resetMs: number): number {
  return Math.max(1, Math.ceil(resetMs / 1000));
}

/**
 * A structured-field String (RFC 9651 §3.3.3): quoted, `"` and `\` escaped; characters a String
 * cannot hold (outside printable ASCII) become `?`.
 */
export function sfString(value: string): string {
  return `"${value.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, '\\$&')}"`;
}
