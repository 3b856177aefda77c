import type { HttpTestingController } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import { calendarAccount, emailAccount } from '../testing/account-data';
import { setUpApiTest, tearDownApiTest } from '../testing/api-test';
import type { FakeEventStream } from '../testing/fake-event-stream';
import { chatSummary } from '../testing/chat-data';
import { MatMenuTrigger } from '@angular/material/menu';
import { ModeChip, modeLabel, modeSwitchText } from './mode-chip';

describe('ModeChip', () => {
  let http: HttpTestingController;
  let events: FakeEventStream;

  beforeEach(() => {
    ({ http, events } = setUpApiTest(ModeChip));
  });

  afterEach(() => {
    tearDownApiTest(http);
  });

  it('words modes and switches as the chat shows them', () => {
    expect(modeLabel('data')).toBe('Data mode');
    // Brands as they are spelt, not as ids.
    expect(modeLabel('whatsapp')).toBe('WhatsApp mode');
    expect(modeLabel('media')).toBe('Images mode');
    expect(modeLabel('some_new_mode')).toBe('Some new mode mode');
    expect(modeSwitchText('data', 'model')).toBe('Switched to Data mode');
    expect(modeSwitchText('web', 'owner')).toBe('You switched to Web mode');
  });

  it('shows the mode and account, offers the modes with their descriptions, and switches with PATCH', async () => {
    const fixture = TestBed.createComponent(ModeChip);
    fixture.componentRef.setInput('chatId', 'c1');
    fixture.componentRef.setInput('mode', 'default');
    fixture.componentRef.setInput('account', 'work');
    const switched: string[] = [];
    fixture.componentInstance.switched.subscribe((chat) =>
      switched.push(chat.mode),
    );
    await fixture.whenStable();
    http.expectOne('/api/accounts').flush([emailAccount('work', 'Work mail')]);
    await fixture.whenStable();
    const chip = (fixture.nativeElement as HTMLElement).querySelector(
      '[data-testid="mode-chip"]',
    ) as HTMLButtonElement;
    expect(chip.textContent).toContain('Default mode');
    expect(chip.textContent).toContain('Work mail');

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
    expect(option.textContent).toContain('Looks up and changes your own data');
    option.click();
    const patch = http.expectOne('/api/chats/c1');
    expect(patch.request.method).toBe('PATCH');
    expect(patch.request.body).toEqual({ mode: 'data' });
    patch.flush(chatSummary('c1', 'Chat', { mode: 'data' }));
    expect(switched).toEqual(['data']);
    fixture.destroy();
  });

  it('loads the modes as the pointer reaches the chip, opens upwards from the message box, and lists every mode', async () => {
    const fixture = TestBed.createComponent(ModeChip);
    fixture.componentRef.setInput('chatId', 'c1');
    await fixture.whenStable();
    const chip = (fixture.nativeElement as HTMLElement).querySelector(
      '[data-testid="mode-chip"]',
    ) as HTMLButtonElement;
    chip.dispatchEvent(new Event('pointerenter'));
    chip.dispatchEvent(new Event('focus'));
    const names = Array.from({ length: 12 }, (_, i) => `mode${i + 1}`);
    http.expectOne('/api/tools').flush({
      modes: names.map((name) => ({
        name,
        description: `what ${name} does`,
        accountKind: null,
        tools: [],
      })),
      meta: [],
    });
    chip.click();
    await fixture.whenStable();
    // Loaded once: opening asks nothing more.
    http.expectNone('/api/tools');
    const panel = document.querySelector('.mt-mode-menu');
    expect(panel?.classList).toContain('mat-menu-above');
    expect(
      Array.from(
        document.querySelectorAll('[data-testid^="mode-option-"]'),
      ).map((option) => option.getAttribute('data-testid')),
    ).toEqual(names.map((name) => `mode-option-${name}`));
    fixture.destroy();
  });

  it('places the menu again once the modes arrive after it opened', async () => {
    const fixture = TestBed.createComponent(ModeChip);
    fixture.componentRef.setInput('chatId', 'c1');
    await fixture.whenStable();
    const chip = (fixture.nativeElement as HTMLElement).querySelector(
      '[data-testid="mode-chip"]',
    ) as HTMLButtonElement;
    chip.click();
    await fixture.whenStable();
    expect(document.querySelector('.mt-mode-menu')?.textContent).toContain(
      'Loading modes…',
    );
    const trigger = fixture.debugElement
      .query((node) => node.attributes['data-testid'] === 'mode-chip')
      .injector.get(MatMenuTrigger);
    const place = jest.spyOn(trigger, 'updatePosition');
    http.expectOne('/api/tools').flush({
      modes: [
        { name: 'default', description: 'd', accountKind: null, tools: [] },
      ],
      meta: [],
    });
    await fixture.whenStable();
    expect(place).toHaveBeenCalled();
    expect(
      document.querySelector('[data-testid="mode-option-default"]'),
    ).not.toBeNull();
    fixture.destroy();
  });

  it('names the selected account by its name (else its address), follows accounts.changed, and shows nothing for an unknown one', async () => {
    const fixture = TestBed.createComponent(ModeChip);
    fixture.componentRef.setInput('chatId', 'c1');
    fixture.componentRef.setInput('account', 'gone');
    await fixture.whenStable();
    http
      .expectOne('/api/accounts')
      .flush([
        emailAccount('work', 'Work mail'),
        emailAccount('home', '  ', { address: 'me@home.example' }),
      ]);
    await fixture.whenStable();
    const root = fixture.nativeElement as HTMLElement;
    const account = () =>
      root.querySelector('[data-testid="mode-chip-account"]')?.textContent;
    expect(account()).toBeUndefined();
    expect(root.textContent).not.toContain('gone');

    fixture.componentRef.setInput('account', 'home');
    await fixture.whenStable();
    expect(account()).toContain('me@home.example');

    fixture.componentRef.setInput('account', 'work');
    await fixture.whenStable();
    expect(account()).toContain('Work mail');
    events.emit('accounts.changed', {
      id: 'work',
      change: 'updated',
      at: '2026-11-28T10:00:00.000Z',
    });
    http.expectOne('/api/accounts').flush([emailAccount('work', 'Office')]);
    await fixture.whenStable();
    expect(account()).toContain('Office');
    fixture.destroy();
  });

  it('in the email and calendar modes shows the account the tools use: the selected one of that kind, else the only one', async () => {
    const fixture = TestBed.createComponent(ModeChip);
    fixture.componentRef.setInput('chatId', 'c1');
    fixture.componentRef.setInput('mode', 'email');
    await fixture.whenStable();
    http
      .expectOne('/api/accounts')
      .flush([
        emailAccount('work', 'Work mail'),
        calendarAccount('cal', 'Family'),
      ]);
    await fixture.whenStable();
    const account = () =>
      (fixture.nativeElement as HTMLElement).querySelector(
        '[data-testid="mode-chip-account"]',
      )?.textContent;
    // No selection, one email account: that one.
    expect(account()).toContain('Work mail');
    // The calendar mode works on the calendar account, whatever email account was selected.
    fixture.componentRef.setInput('account', 'work');
    fixture.componentRef.setInput('mode', 'calendar');
    await fixture.whenStable();
    expect(account()).toContain('Family');
    // Two email accounts and none selected: the chip names none (the model must choose).
    events.emit('accounts.changed', {
      id: 'home',
      change: 'created',
      at: '2026-11-28T10:00:00.000Z',
    });
    http
      .expectOne('/api/accounts')
      .flush([emailAccount('work', 'Work mail'), emailAccount('home', 'Home')]);
    fixture.componentRef.setInput('account', null);
    fixture.componentRef.setInput('mode', 'email');
    await fixture.whenStable();
    expect(account()).toBeUndefined();
    fixture.destroy();
  });

  it('asks for no account names while the chat has no account', async () => {
    const fixture = TestBed.createComponent(ModeChip);
    fixture.componentRef.setInput('chatId', 'c1');
    await fixture.whenStable();
    http.expectNone('/api/accounts');
    expect(
      (fixture.nativeElement as HTMLElement).querySelector(
        '[data-testid="mode-chip-account"]',
      ),
    ).toBeNull();
    fixture.destroy();
  });
});
