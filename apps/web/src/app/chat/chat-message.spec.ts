import { type ComponentFixture, TestBed } from '@angular/core/testing';
import {
  COLLAPSED_CHARS,
  COLLAPSED_LINES,
  ChatMessageView,
  collapsedText,
} from './chat-message';
import type { MessageView } from './live-reply';

describe('ChatMessageView copy buttons', () => {
  let fixture: ComponentFixture<ChatMessageView>;
  let writeText: jest.Mock;

  const copyButton = () =>
    (fixture.nativeElement as HTMLElement).querySelector<HTMLButtonElement>(
      '[data-testid="copy-button"]',
    );

  async function show(message: MessageView, streaming = false): Promise<void> {
    fixture.componentRef.setInput('message', message);
    fixture.componentRef.setInput('streaming', streaming);
    await fixture.whenStable();
  }

  beforeEach(() => {
    writeText = jest.fn(() => Promise.resolve());
    Object.defineProperty(navigator, 'clipboard', {
      configurable: true,
      value: { writeText },
    });
    fixture = TestBed.createComponent(ChatMessageView);
  });

  afterEach(() => {
    delete (navigator as { clipboard?: unknown }).clipboard;
  });

  it('copies the Markdown of a finished reply, without the tool calls', async () => {
    await show({
      id: 'a1',
      role: 'assistant',
      content: 'ignored when parts exist',
      status: 'complete',
      parts: [
        { type: 'text', text: 'Here is **the plan**:' },
        {
          type: 'tool_call',
          id: 't1',
          name: 'db_query',
          arguments: {},
          result: '[]',
          durationMs: 3,
        },
        { type: 'text', text: '1. Pack' },
      ],
    } as MessageView);
    const button = copyButton();
    expect(button?.getAttribute('aria-label')).toBe('Copy reply');
    button?.click();
    await fixture.whenStable();
    expect(writeText).toHaveBeenCalledWith('Here is **the plan**:\n\n1. Pack');
    expect(copyButton()?.textContent?.trim()).toBe('Copied');
  });

  it('offers no copy while the reply is still arriving', async () => {
    await show(
      { id: 'live', role: 'assistant', content: 'Half', status: 'streaming' },
      true,
    );
    expect(copyButton()).toBeNull();
  });

  it('copies the owner’s own message as typed', async () => {
    await show({
      id: 'u1',
      role: 'user',
      content: '  two\nlines  ',
      status: 'complete',
    });
    expect(copyButton()?.getAttribute('aria-label')).toBe('Copy message');
    copyButton()?.click();
    await fixture.whenStable();
    expect(writeText).toHaveBeenCalledWith('  two\nlines  ');
  });
});

describe('ChatMessageView long messages', () => {
  it('shows the start of a long message with "Show all", the whole text on request, and copies all of it', async () => {
    const fixture = TestBed.createComponent(ChatMessageView);
    const content = `${'A pasted document. '.repeat(4600)}THE END`;
    fixture.componentRef.setInput('message', {
      id: 'u1',
      role: 'user',
      content,
      status: 'complete',
    });
    await fixture.whenStable();
    const root = fixture.nativeElement as HTMLElement;
    const el = (testId: string) =>
      root.querySelector<HTMLElement>(`[data-testid="${testId}"]`);
    const shown = el('user-text')?.textContent ?? '';
    expect(shown.length).toBeLessThanOrEqual(COLLAPSED_CHARS + 1);
    expect(shown.endsWith('…')).toBe(true);
    expect(shown).not.toContain('THE END');
    const toggle = el('message-show-all') as HTMLButtonElement;
    expect(toggle.textContent?.trim()).toBe('Show all (87,407 characters)');
    expect(toggle.getAttribute('aria-expanded')).toBe('false');

    toggle.click();
    await fixture.whenStable();
    expect(el('user-text')?.textContent).toBe(content);
    expect(toggle.textContent?.trim()).toBe('Show less');
    expect(toggle.getAttribute('aria-expanded')).toBe('true');

    const writeText = jest.fn(() => Promise.resolve());
    Object.defineProperty(navigator, 'clipboard', {
      configurable: true,
      value: { writeText },
    });
    toggle.click();
    await fixture.whenStable();
    el('copy-button')?.click();
    await fixture.whenStable();
    expect(writeText).toHaveBeenCalledWith(content);
    delete (navigator as { clipboard?: unknown }).clipboard;
  });

  it('collapses many short lines too, and leaves ordinary messages whole', () => {
    expect(collapsedText('Hello')).toBeNull();
    expect(collapsedText('x'.repeat(COLLAPSED_CHARS * 2))).toBeNull();
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`);
    expect(collapsedText(lines.join('\n'))).toBe(
      `${lines.slice(0, COLLAPSED_LINES).join('\n')}…`,
    );
  });
});
