import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A device that logged in before: a random id with a MAC keyed by the owner's
 * password hash, in a long-lived cookie. It gives the device its own login
 * count (see LoginRateLimiter), so guesses from elsewhere never lock it out.
 * It cannot be forged without the hash, and a new password forgets every device.
 */
export const DEVICE_COOKIE = 'metatron_device';
/** The longest cookie lifetime browsers keep (Chrome caps at 400 days). */
export const DEVICE_COOKIE_DAYS = 400;

export function deviceTokenFor(passwordHash: string, id?: string): string {
  const deviceId = id ?? randomBytes(16).toString('base64url');
  return `${deviceId}.${mac(passwordHash, deviceId)}`;
}

/** The device id of a genuine token; `null` for anything else. */
export function verifiedDeviceId(
  token: unknown,
  passwordHash: string,
): string | null {
  if (typeof token !== 'string' || token.length > 200) return null;
  const [id, given, extra] = token.split('.');
  if (!id || !given || extra !== undefined) return null;
  const expected = Buffer.from(mac(passwordHash, id));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected)
    ? id
    : null;
}

function mac(passwordHash: string, id: string): string {
  return createHmac('sha256', passwordHash)
    .update(`metatron login device ${id}`)
    .digest('base64url');
}
