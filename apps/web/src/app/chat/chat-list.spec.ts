import { type ComponentFixture, TestBed } from '@angular/core/testing';
import { provideRouter } from '@angular/router';
import type { ChatSummary } from '@metatronos/shared-types';
import { chatSummary } from '../testing/chat-data';
import { testIdQueries } from '../testing/api-test';
import {
  type ChatFlagChange,
  type ChatRename,
  ChatList,
  titleInGroup,
} from './chat-list';

describe('ChatList', () => {
  let fixture: ComponentFixture<ChatList>;
  const root = () => fixture.nativeElement as HTMLElement;
  const { el, all, texts } = testIdQueries(root);
  const stable = () => fixture.whenStable();
  const menuItem = (testId: string) =>
    document.querySelector<HTMLElement>(`[data-testid="${testId}"]`);

  async function show(chats: ChatSummary[]): Promise<void> {
    fixture = TestBed.createComponent(ChatList);
    fixture.componentRef.setInput('chats', chats);
    await stable();
  }

  beforeEach(() => {
    TestBed.configureTestingModule({
      imports: [ChatList],
      providers: [provideRouter([])],
    });
  });

  afterEach(() => {
    fixture.destroy();
    document
      .querySelectorAll('.cdk-overlay-container')
      .forEach((node) => (node.innerHTML = ''));
  });

  it('names job chats without "Job:" under the Jobs heading, and keeps it when there is no heading', async () => {
    await show([
      chatSummary('c1', 'Trip planning'),
      chatSummary('j1', 'Job: Morning briefing', { kind: 'cron' }),
      chatSummary('j2', 'Job:', { kind: 'cron' }),
    ]);
    expect(texts('chat-item-title')).toEqual([
      'Trip planning',
      'Morning briefing',
      'Job:',
    ]);
    // The buttons still say the whole title.
    expect(
      all('chat-item')[1]
        .querySelector('[data-testid="delete-chat"]')
        ?.getAttribute('aria-label'),
    ).toBe('Delete Job: Morning briefing');

    fixture.destroy();
    await show([chatSummary('j1', 'Job: Morning briefing', { kind: 'cron' })]);
    expect(texts('chat-item-title')).toEqual(['Job: Morning briefing']);
    expect(titleInGroup({ kind: 'chat', title: 'Job: not a job' })).toBe(
      'Job: not a job',
    );
  });

  it('offers every row action in one menu (for narrow and touch screens)', async () => {
    await show([chatSummary('c1', 'Trip planning')]);
    const flags: ChatFlagChange[] = [];
    const deleted: string[] = [];
    const renamed: ChatRename[] = [];
    fixture.componentInstance.flagged.subscribe((change) => flags.push(change));
    fixture.componentInstance.deleted.subscribe((chat) =>
      deleted.push(chat.id),
    );
    fixture.componentInstance.renamed.subscribe((rename) =>
      renamed.push(rename),
    );
    const more = el('chat-actions-menu') as HTMLButtonElement;
    expect(more.getAttribute('aria-label')).toBe('Actions for Trip planning');

    more.click();
    await stable();
    expect(menuItem('chat-menu-pin')?.textContent?.trim()).toBe(
      'Pin to the top',
    );
    menuItem('chat-menu-pin')?.click();
    await stable();
    more.click();
    await stable();
    menuItem('chat-menu-archive')?.click();
    await stable();
    expect(flags.map((flag) => flag.change)).toEqual([
      { pinned: true },
      { archived: true },
    ]);

    more.click();
    await stable();
    menuItem('chat-menu-rename')?.click();
    await stable();
    const input = el<HTMLInputElement>('chat-title-input') as HTMLInputElement;
    input.value = 'Lisbon trip';
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
    await stable();
    expect(renamed.map((rename) => rename.title)).toEqual(['Lisbon trip']);

    (el('chat-actions-menu') as HTMLButtonElement).click();
    await stable();
    menuItem('chat-menu-delete')?.click();
    await stable();
    el('confirm-delete-chat')?.click();
    expect(deleted).toEqual(['c1']);
  });
});
