import { copyText } from './clipboard';

describe('copyText', () => {
  afterEach(() => {
    delete (navigator as { clipboard?: unknown }).clipboard;
  });

  it('uses the Clipboard API where there is one', async () => {
    const writeText = jest.fn(() => Promise.resolve());
    Object.defineProperty(navigator, 'clipboard', {
      configurable: true,
      value: { writeText },
    });
    await expect(copyText('hello')).resolves.toBe(true);
    expect(writeText).toHaveBeenCalledWith('hello');
  });

  it('falls back to the copy command over plain HTTP (no Clipboard API), and gives the focus back', async () => {
    const copied: string[] = [];
    document.execCommand = jest.fn(() => {
      const area = document.activeElement as HTMLTextAreaElement;
      copied.push(area.value.slice(area.selectionStart, area.selectionEnd));
      return true;
    });
    const field = document.createElement('input');
    document.body.append(field);
    field.focus();
    await expect(copyText('line one\nline two')).resolves.toBe(true);
    expect(copied).toEqual(['line one\nline two']);
    expect(document.querySelector('textarea')).toBeNull();
    expect(document.activeElement).toBe(field);
    field.remove();
  });

  it('answers false when nothing could copy', async () => {
    document.execCommand = jest.fn(() => false);
    await expect(copyText('x')).resolves.toBe(false);
  });
});
