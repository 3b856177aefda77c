import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestApp, type TestApp } from './support/test-app';

const COMMITTED = join(__dirname, '../../../docs/openapi.json');

describe('docs/openapi.json', () => {
  let t: TestApp;
  beforeAll(async () => (t = await createTestApp()));
  afterAll(() => t.close());

  it('is exactly the document the app serves at /api/docs-json (else run `npm run openapi`)', async () => {
    const served = (await t.http().get('/api/docs-json').expect(200)).body;
    const committed = JSON.parse(readFileSync(COMMITTED, 'utf8'));
    expect(served).toEqual(committed);
  });
});
