import { type ComponentFixture, TestBed } from '@angular/core/testing';
import { ChatMessageView } from './chat-message';
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
