import { createHmac, timingSafeEqual } from 'node:crypto';

/** The length of a signature: HMAC-SHA256's 32 bytes in base64url, unpadded. */
const SIGNATURE_LENGTH = 43;

/**
 * Signs cookie values with HMAC-SHA256 under `cookies.secrets`: the first
 * secret signs, any of them verifies, so a secret is rotated by putting the
 * new one first and dropping the old one once the cookies it signed have
 * expired. A signed value is `<value>.<signature>`, the signature in
 * base64url (43 characters), the format of `cookie-signature` (Express's and
 * Fastify's signed cookies) with the URL-safe alphabet.
 *
 * @example
 * const signer = new CookieSigner(['a-new-secret-of-at-least-32-chars', 'the-old-one-still-verifies-for-now']);
 * const signed = signer.sign('user-7'); // 'user-7.Jx3…'
 * signer.unsign(signed); // 'user-7'
 * signer.unsign('user-8' + signed.slice(6)); // undefined
 */
export class CookieSigner {
  readonly #secrets: readonly string[];

  constructor(secrets: readonly string[]) {
    if (secrets.length === 0) throw new TypeError('a cookie signer needs at least one secret');
    this.#secrets = secrets;
  }

  /** `value` and its signature under the first secret. */
  sign(value: string): string {
    return `${value}.${signature(value, this.#secrets[0]!)}`;
  }

  /**
   * The value of a signed cookie when one of the secrets signed it; `undefined` when it carries no
   * signature, a malformed one or one none of the secrets made. Each comparison is timing-safe, and
   * every secret is tried whatever matched, so the time taken says nothing of which secret signed it.
   */
  unsign(signed: string): string | undefined {
    const dot = signed.lastIndexOf('.');
    if (dot === -1 || signed.length - dot - 1 !== SIGNATURE_LENGTH) return undefined;
    const value = signed.slice(0, dot);
    // as UTF-8: a character outside ASCII makes it longer than any signature, never equal to one
    const given = Buffer.from(signed.slice(dot + 1), 'utf8');
    if (given.length !== SIGNATURE_LENGTH) return undefined;
    let valid = false;
    for (const secret of this.#secrets) {
      if (timingSafeEqual(Buffer.from(signature(value, secret), 'latin1'), given)) valid = true;
    }
    return valid ? value : undefined;
  }
}

function signature(value: string, secret: string): string {
  return createHmac('sha256', secret).update(value).digest('base64url');
}
