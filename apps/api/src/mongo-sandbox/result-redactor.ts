import { maskSecret } from '../settings/secret-mask';
import { maskSecretOccurrences } from '../settings/secret-occurrences';
import { isSecretFieldName } from './collection-access';

/** Largest serialised result handed back to the model (and to the console's data browser). */
export const RESULT_BYTE_CAP = 256 * 1024;

interface BsonValue {
  _bsontype: string;
  toHexString?: () => string;
  toString(encoding?: string): string;
  toNumber?: () => number;
  valueOf(): unknown;
  sub_type?: number;
  pattern?: string;
  options?: string;
  code?: string;
}

/**
 * Turns driver documents into plain JSON values in one pass: ObjectId → hex
 * string, Date → ISO string, Long/Decimal128 → number/string, Binary → base64.
 * On the way it masks secrets:
 * - with `maskSecretFields` (results from `settings`), every value under a field
 *   named like a credential becomes `••••` + its last 4 characters;
 * - in any collection, any string that contains one of the current secret values
 *   gets that value masked, so a copied key never comes back in clear.
 * It also counts the approximate UTF-8 size of the JSON it produced, so callers
 * can cap a result without serialising it a second time.
 */
export class ResultRedactor {
  /** Approximate JSON size, in bytes, of everything converted so far. */
  bytes = 0;
  private readonly secrets: string[];

  constructor(
    secrets: readonly string[],
    private readonly maskSecretFields: boolean,
  ) {
    // Longest first: a secret that contains another is masked as a whole.
    this.secrets = secrets
      .filter((s) => s.length > 0)
      .sort((a, b) => b.length - a.length);
  }

  plain(value: unknown): unknown {
    return this.convert(value, false);
  }

  /** Masks every current secret value found in a free text (also used for error messages). */
  scrub(text: string): string {
    return maskSecretOccurrences(
      text,
      this.secrets,
      (secret) => maskSecret(secret) ?? '',
    );
  }

  private convert(value: unknown, secret: boolean): unknown {
    switch (typeof value) {
      case 'string':
        if (secret) return this.string(maskSecret(value));
        return this.string(this.secrets.length ? this.scrub(value) : value);
      case 'number':
        if (secret) return this.string(maskSecret(String(value)));
        this.bytes += 8;
        return Number.isFinite(value) ? value : null;
      case 'boolean':
        this.bytes += 5;
        return value;
      case 'bigint':
        return this.convert(Number(value), secret);
      case 'undefined':
        this.bytes += 4;
        return null;
      case 'object':
        break;
      default:
        return this.string(null);
    }
    if (value === null) return this.string(null);
    if (Array.isArray(value)) {
      this.bytes += 2 + value.length;
      const out = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++)
        out[i] = this.convert(value[i], secret);
      return out;
    }
    if (value instanceof Date)
      return this.string(
        Number.isNaN(value.getTime()) ? null : value.toISOString(),
      );
    const bsonType = (value as Partial<BsonValue>)._bsontype;
    if (bsonType) return this.bson(value as BsonValue, secret);
    if (value instanceof RegExp) return this.string(String(value));
    if (value instanceof Uint8Array)
      return this.string(Buffer.from(value).toString('base64'));
    const source = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    this.bytes += 2;
    for (const key in source) {
      if (!Object.prototype.hasOwnProperty.call(source, key)) continue;
      this.bytes += key.length + 4;
      const field = this.convert(
        source[key],
        secret || (this.maskSecretFields && isSecretFieldName(key)),
      );
      // A key named `__proto__` (allowed in BSON) must not become this object's prototype.
      if (key === '__proto__')
        Object.defineProperty(out, key, {
          value: field,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else out[key] = field;
    }
    return out;
  }

  private bson(value: BsonValue, secret: boolean): unknown {
    switch (value._bsontype) {
      case 'ObjectId':
        return this.string(
          value.toHexString ? value.toHexString() : String(value),
        );
      case 'Long':
      case 'Timestamp':
        return this.convert(
          value.toNumber ? value.toNumber() : Number(value.toString()),
          secret,
        );
      case 'Double':
      case 'Int32':
        return this.convert(Number(value.valueOf()), secret);
      case 'Decimal128':
        return this.convert(value.toString(), secret);
      case 'Binary':
        return this.string(value.toString('base64'));
      case 'BSONRegExp':
        return this.string(`/${value.pattern ?? ''}/${value.options ?? ''}`);
      case 'Code':
        return this.convert(value.code ?? '', secret);
      case 'MinKey':
      case 'MaxKey':
        return this.string(value._bsontype);
      default:
        return this.convert(value.toString(), secret);
    }
  }

  private string(text: string | null): string | null {
    this.bytes += text === null ? 4 : Buffer.byteLength(text, 'utf8') + 2;
    return text;
  }
}
