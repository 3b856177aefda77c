import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type { AppSettingsView } from '@metatronos/shared-types';
import { settingsView } from '../testing/settings-data';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import {
  BudgetSettings,
  capError,
  dollarsOf,
  limitError,
  priceRowError,
} from './budget-settings';

describe('BudgetSettings', () => {
  let fixture: ComponentFixture<BudgetSettings>;
  let http: HttpTestingController;
  const root = () => fixture.nativeElement as HTMLElement;
  const { el, all, text, texts } = testIdQueries(root);
  const input = (testId: string, scope?: ParentNode) =>
    el<HTMLInputElement>(testId, scope) as HTMLInputElement;
  const stable = () => fixture.whenStable();
  const saveButton = () =>
    el<HTMLButtonElement>('spend-save') as HTMLButtonElement;

  async function type(field: HTMLInputElement, value: string): Promise<void> {
    field.value = value;
    field.dispatchEvent(new Event('input'));
    await stable();
  }

  async function show(settings: AppSettingsView = settingsView()) {
    fixture.componentRef.setInput('settings', settings);
    await stable();
  }

  async function saved(): Promise<unknown> {
    saveButton().click();
    await stable();
    const req = http.expectOne('/api/settings');
    expect(req.request.method).toBe('PATCH');
    return req;
  }

  beforeEach(async () => {
    ({ http } = setUpApiTest(BudgetSettings));
    fixture = TestBed.createComponent(BudgetSettings);
    await stable();
  });
  afterEach(() => tearDownApiTest(http));

  it('shows the caps with "No cap" as a choice, and sends null for it', async () => {
    await show();
    expect(input('cap-dailyUsd').value).toBe('5');
    expect(input('cap-unattendedDailyUsd').value).toBe('1');
    expect(input('cap-monthlyUsd').disabled).toBe(true);
    expect(saveButton().disabled).toBe(true);

    (el('no-cap-dailyUsd')?.querySelector('input') as HTMLInputElement).click();
    await stable();
    expect(input('cap-dailyUsd').disabled).toBe(true);
    await type(input('cap-unattendedDailyUsd'), '$2.50');
    const req = (await saved()) as {
      request: { body: unknown };
      flush(body: unknown): void;
    };
    expect(req.request.body).toEqual({
      budget: { dailyUsd: null, unattendedDailyUsd: 2.5 },
    });
    req.flush(
      settingsView({
        budget: { dailyUsd: null, monthlyUsd: null, unattendedDailyUsd: 2.5 },
      }),
    );
    await stable();
    expect(text('spend-saved')).toBe('Saved.');
    expect(saveButton().disabled).toBe(true);
  });

  it('says what is wrong with a cap, a price or a limit in words, and does not save', async () => {
    await show();
    await type(input('cap-dailyUsd'), 'five');
    expect(text('cap-error-dailyUsd')).toBe(
      'Enter an amount in dollars, e.g. 5 or 2.50.',
    );
    await type(input('cap-dailyUsd'), '20000');
    expect(text('cap-error-dailyUsd')).toBe('At most $10,000.');
    await type(input('cap-dailyUsd'), '');
    expect(text('cap-error-dailyUsd')).toBe(
      'Enter an amount in dollars, or choose "No cap".',
    );
    await type(input('limit-chat'), '5');
    expect(text('limit-error-chat')).toBe('From 16 to 200,000 tokens.');
    el<HTMLButtonElement>('price-add')?.click();
    await stable();
    expect(text('price-error')).toBe('Name the model, e.g. gpt-4.1-mini.');
    expect(saveButton().disabled).toBe(true);
  });

  it('shows the shipped prices, overrides one, adds and removes rows, and saves the list', async () => {
    await show(
      settingsView({
        modelPrices: [
          { model: 'ollama/llama3', inputPerMTok: 0.1, outputPerMTok: 0.2 },
        ],
      }),
    );
    const shipped = all('shipped-row');
    expect(shipped.length).toBeGreaterThan(10);
    const gpt = root().querySelector(
      '[data-testid="shipped-row"][data-model="gpt-4.1-mini"]',
    ) as HTMLElement;
    expect(gpt.textContent).toContain('$0.4');
    expect(gpt.textContent).toContain('$1.6');
    (
      el<HTMLButtonElement>('shipped-override', gpt) as HTMLButtonElement
    ).click();
    await stable();
    expect(all('price-row')).toHaveLength(2);
    // Overridden: the shipped row says so instead of offering it again.
    expect(el('shipped-override', gpt)).toBeNull();
    const rows = all('price-row');
    await type(input('price-outputPerMTok', rows[1]), '1.2');
    await type(input('price-cachedInputPerMTok', rows[1]), '');
    // The endpoint's row is removed.
    (
      el<HTMLButtonElement>('price-remove', rows[0]) as HTMLButtonElement
    ).click();
    await stable();
    expect(texts('price-error')).toEqual([]);
    const req = (await saved()) as {
      request: { body: unknown };
      flush(body: unknown): void;
    };
    expect(req.request.body).toEqual({
      modelPrices: [
        { model: 'gpt-4.1-mini', inputPerMTok: 0.4, outputPerMTok: 1.2 },
      ],
    });
    req.flush(
      settingsView({
        modelPrices: [
          { model: 'gpt-4.1-mini', inputPerMTok: 0.4, outputPerMTok: 1.2 },
        ],
      }),
    );
    await stable();
  });

  it("shows the server's refusal in words and keeps the edits", async () => {
    await show();
    await type(input('limit-voice'), '2048');
    const req = (await saved()) as {
      flush(body: unknown, options: object): void;
    };
    req.flush(
      { message: ['outputLimits.voice must be 16 to 200000'] },
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();
    expect(text('spend-error')).toContain('outputLimits.voice');
    expect(input('limit-voice').value).toBe('2048');
  });

  it("saves the owner's Telegram chat for notices, and refuses one that is not digits", async () => {
    await show();
    await type(input('spend-telegram-chat'), '@me');
    expect(text('spend-telegram-error')).toBe(
      'A Telegram chat id is digits, e.g. 123456789 (leave it blank for none).',
    );
    expect(saveButton().disabled).toBe(true);
    await type(input('spend-telegram-chat'), ' 4242 ');
    const req = (await saved()) as {
      request: { body: unknown };
      flush(body: unknown): void;
    };
    expect(req.request.body).toEqual({ telegramOwnerChatId: '4242' });
    req.flush(settingsView({ telegramOwnerChatId: '4242' }));
    await stable();
  });

  describe('checks', () => {
    it.each([
      ['5', 5],
      ['2.50', 2.5],
      ['$5', 5],
      ['1,000', 1000],
      ['.5', 0.5],
      ['-1', null],
      ['5 dollars', null],
      ['', null],
    ])('reads %j as %p dollars', (typed, value) => {
      expect(dollarsOf(typed)).toBe(value);
    });

    it('allows no cap, zero and up to $10,000', () => {
      expect(capError({ noCap: true, amount: '' })).toBeNull();
      expect(capError({ noCap: false, amount: '0' })).toBeNull();
      expect(capError({ noCap: false, amount: '10000' })).toBeNull();
      expect(capError({ noCap: false, amount: '10000.01' })).toBe(
        'At most $10,000.',
      );
    });

    it('refuses a price row priced twice or missing its required prices', () => {
      const row = {
        model: 'm',
        inputPerMTok: '1',
        cachedInputPerMTok: '',
        outputPerMTok: '2',
        audioInputPerMTok: '',
        audioOutputPerMTok: '',
      };
      expect(priceRowError(row, 0, [row])).toBeNull();
      expect(priceRowError(row, 1, [row, row])).toBe(
        'm is priced twice: keep one row.',
      );
      expect(priceRowError({ ...row, outputPerMTok: '' }, 0, [row])).toMatch(
        /^Enter the output price/,
      );
      expect(
        priceRowError({ ...row, audioInputPerMTok: 'x' }, 0, [row]),
      ).toMatch(/^The audio in price must be a number/);
    });

    it('takes output limits from 16 to 200,000 tokens', () => {
      expect(limitError('16')).toBeNull();
      expect(limitError('200,000')).toBeNull();
      expect(limitError('200001')).toBe('From 16 to 200,000 tokens.');
      expect(limitError('4k')).toBe(
        'Enter a whole number of tokens, e.g. 4096.',
      );
    });
  });
});
