import {
  randomBytes,
  scrypt,
  timingSafeEqual,
  type ScryptOptions,
} from 'node:crypto';

const KEY_LENGTH = 64;
/** ~64 MiB and ~100 ms per hash on a small machine: slow for guessing, fine for one owner. */
const DEFAULT_COST: Required<Pick<ScryptOptions, 'N' | 'r' | 'p'>> = {
  N: 2 ** 16,
  r: 8,
  p: 1,
};

function derive(
  password: string,
  salt: Buffer,
  cost: { N: number; r: number; p: number },
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password,
      salt,
      KEY_LENGTH,
      { ...cost, maxmem: 256 * cost.N * cost.r },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}

/** scrypt password hashes in the self-describing form `scrypt$N$r$p$salt$hash` (base64url). */
export class PasswordHasher {
  constructor(private readonly cost = DEFAULT_COST) {}

  async hash(password: string): Promise<string> {
    const salt = randomBytes(16);
    const key = await derive(password, salt, this.cost);
    const { N, r, p } = this.cost;
    return [
      'scrypt',
      N,
      r,
      p,
      salt.toString('base64url'),
      key.toString('base64url'),
    ].join('$');
  }

  async verify(password: string, stored: string): Promise<boolean> {
    const [scheme, N, r, p, salt, hash] = stored.split('$');
    if (scheme !== 'scrypt' || !salt || !hash) return false;
    const expected = Buffer.from(hash, 'base64url');
    const actual = await derive(password, Buffer.from(salt, 'base64url'), {
      N: Number(N),
      r: Number(r),
      p: Number(p),
    });
    return (
      actual.length === expected.length && timingSafeEqual(actual, expected)
    );
  }
}
