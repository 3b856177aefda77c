import { type ComponentFixture, TestBed } from '@angular/core/testing';
import { COPIED_FEEDBACK_MS } from '../ui/copy-button';
import { MarkdownView } from './markdown-view';

describe('MarkdownView', () => {
  let fixture: ComponentFixture<MarkdownView>;
  let writeText: jest.Mock;

  const root = () => fixture.nativeElement as HTMLElement;
  const copyButtons = () =>
    Array.from(
      root().querySelectorAll<HTMLButtonElement>('[data-testid="code-copy"]'),
    );

  async function render(source: string): Promise<void> {
    fixture.componentRef.setInput('source', source);
    await fixture.whenStable();
  }

  beforeEach(() => {
    writeText = jest.fn(() => Promise.resolve());
    Object.defineProperty(navigator, 'clipboard', {
      configurable: true,
      value: { writeText },
    });
    fixture = TestBed.createComponent(MarkdownView);
  });

  afterEach(() => {
    jest.useRealTimers();
    delete (navigator as { clipboard?: unknown }).clipboard;
  });

  it('puts a Copy button on every code block that copies exactly its code', async () => {
    await render(
      'Two blocks:\n\n```ts\nconst a = 1 < 2;\n```\n\nand\n\n```\nplain `text`\n```',
    );
    const buttons = copyButtons();
    expect(buttons).toHaveLength(2);
    expect(buttons[0].getAttribute('aria-label')).toBe('Copy code');
    expect(buttons[0].textContent).toBe('Copy');

    jest.useFakeTimers();
    buttons[1].click();
    await Promise.resolve();
    await Promise.resolve();
    expect(writeText).toHaveBeenCalledWith('plain `text`');
    expect(buttons[1].textContent).toBe('Copied');
    expect(buttons[1].dataset['state']).toBe('copied');

    buttons[0].click();
    await Promise.resolve();
    await Promise.resolve();
    expect(writeText).toHaveBeenLastCalledWith('const a = 1 < 2;');

    jest.advanceTimersByTime(COPIED_FEEDBACK_MS);
    expect(buttons[1].textContent).toBe('Copy');
    expect(buttons[1].dataset['state']).toBeUndefined();
  });

  it('keeps one button per block while the reply streams in', async () => {
    await render('```js\nlet x');
    expect(copyButtons()).toHaveLength(1);
    await render('```js\nlet x = 1;\n```\n\nmore text');
    expect(copyButtons()).toHaveLength(1);
    await render('```js\nlet x = 1;\n```\n\n```sh\nls\n```');
    expect(copyButtons()).toHaveLength(2);
  });

  it('says when the copy failed', async () => {
    writeText.mockRejectedValue(new Error('denied'));
    document.execCommand = jest.fn(() => false);
    await render('```\nsecret sauce\n```');
    copyButtons()[0].click();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(copyButtons()[0].textContent).toBe("Couldn't copy");
  });
});
