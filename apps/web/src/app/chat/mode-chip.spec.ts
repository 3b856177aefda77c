import type { HttpTestingController } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import { setUpApiTest, tearDownApiTest } from '../testing/api-test';
import { chatSummary } from '../testing/chat-data';
import { ModeChip, modeLabel, modeSwitchText } from './mode-chip';

describe('ModeChip', () => {
  let http: HttpTestingController;

  beforeEach(() => {
    ({ http } = setUpApiTest(ModeChip));
  });

  afterEach(() => {
    tearDownApiTest(http);
  });

  it('words modes and switches as the chat shows them', () => {
    expect(modeLabel('data')).toBe('Data mode');
    expect(modeSwitchText('data', 'model')).toBe('Switched to Data mode');
    expect(modeSwitchText('web', 'owner')).toBe('You switched to Web mode');
  });

  it('shows the mode and account, offers the modes with their descriptions, and switches with PATCH', async () => {
    const fixture = TestBed.createComponent(ModeChip);
    fixture.componentRef.setInput('chatId', 'c1');
    fixture.componentRef.setInput('mode', 'default');
    fixture.componentRef.setInput('account', 'me@example.org');
    const switched: string[] = [];
    fixture.componentInstance.switched.subscribe((chat) =>
      switched.push(chat.mode),
    );
    await fixture.whenStable();
    const chip = (fixture.nativeElement as HTMLElement).querySelector(
      '[data-testid="mode-chip"]',
    ) as HTMLButtonElement;
    expect(chip.textContent).toContain('Default mode');
    expect(chip.textContent).toContain('me@example.org');

    chip.click();
    await fixture.whenStable();
    http.expectOne('/api/tools').flush({
      modes: [
        {
          name: 'default',
          description: 'memory and everyday help',
          accountKind: null,
          tools: [],
        },
        {
          name: 'data',
          description: 'your database',
          accountKind: null,
          tools: [],
        },
      ],
      meta: [],
    });
    await fixture.whenStable();
    const option = document.querySelector(
      '[data-testid="mode-option-data"]',
    ) as HTMLButtonElement;
    expect(option.textContent).toContain('Data mode');
    expect(option.textContent).toContain('your database');
    option.click();
    const patch = http.expectOne('/api/chats/c1');
    expect(patch.request.method).toBe('PATCH');
    expect(patch.request.body).toEqual({ mode: 'data' });
    patch.flush(chatSummary('c1', 'Chat', { mode: 'data' }));
    expect(switched).toEqual(['data']);
    fixture.destroy();
  });
});
