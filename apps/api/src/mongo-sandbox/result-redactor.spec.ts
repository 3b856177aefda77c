import mongoose from 'mongoose';
import { ResultRedactor } from './result-redactor';

const { ObjectId, Decimal128, Long, Binary } = mongoose.mongo;
const KEY = 'AIzaSyD-0123456789-fake-key-WXYZ';

describe('ResultRedactor', () => {
  it('turns BSON values into plain JSON', () => {
    const id = new ObjectId('507f1f77bcf86cd799439011');
    const out = new ResultRedactor([], false).plain({
      _id: id,
      at: new Date('2025-01-31T09:00:00.000Z'),
      n: Long.fromNumber(42),
      price: Decimal128.fromString('9.99'),
      blob: new Binary(Buffer.from('hi')),
      list: [id, null, true, 1.5],
      nested: { deep: { at: new Date(0) } },
    });
    expect(out).toEqual({
      _id: '507f1f77bcf86cd799439011',
      at: '2025-01-31T09:00:00.000Z',
      n: 42,
      price: '9.99',
      blob: 'aGk=',
      list: ['507f1f77bcf86cd799439011', null, true, 1.5],
      nested: { deep: { at: '1970-01-01T00:00:00.000Z' } },
    });
  });

  it('masks every credential-named field of settings, at any depth, and nothing else', () => {
    const out = new ResultRedactor([], true).plain({
      _id: 'app_settings',
      geminiApiKey: KEY,
      openaiCompatible: [
        {
          name: 'ollama',
          baseUrl: 'http://127.0.0.1:11434/v1',
          apiKey: 'sk-local-000000000000abcd',
        },
      ],
      whatsapp: { token: 'short' },
      braveApiKey: null,
      timezone: 'Europe/Paris',
    });
    expect(out).toEqual({
      _id: 'app_settings',
      geminiApiKey: '••••WXYZ',
      openaiCompatible: [
        {
          name: 'ollama',
          baseUrl: 'http://127.0.0.1:11434/v1',
          apiKey: '••••abcd',
        },
      ],
      whatsapp: { token: '••••' },
      braveApiKey: null,
      timezone: 'Europe/Paris',
    });
  });

  it('masks a current secret value found inside any string, whatever the field', () => {
    const redactor = new ResultRedactor([KEY, 'sk-other-secret-1234'], false);
    expect(
      redactor.plain({
        note: `my key is ${KEY}, twice ${KEY}`,
        apiKey: 'not a secret',
      }),
    ).toEqual({
      note: 'my key is ••••WXYZ, twice ••••WXYZ',
      apiKey: 'not a secret',
    });
    expect(
      redactor.scrub(`E11000 dup key: { _id: "sk-other-secret-1234" }`),
    ).toBe('E11000 dup key: { _id: "••••1234" }');
  });

  it('estimates the JSON size it produced closely', () => {
    const doc = {
      _id: new ObjectId(),
      title: 'é'.repeat(1000),
      tags: ['a', 'b'],
      n: 12345,
      at: new Date(),
    };
    const redactor = new ResultRedactor([], false);
    const plain = redactor.plain(doc);
    const actual = Buffer.byteLength(JSON.stringify(plain));
    expect(redactor.bytes).toBeGreaterThanOrEqual(actual * 0.95);
    expect(redactor.bytes).toBeLessThanOrEqual(actual * 1.1);
  });
});
