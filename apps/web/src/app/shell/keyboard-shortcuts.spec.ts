import { TestBed } from '@angular/core/testing';
import { MatDialog } from '@angular/material/dialog';
import { provideRouter } from '@angular/router';
import {
  KeyboardShortcuts,
  isApplePlatform,
  shortcutHelp,
  shortcutOf,
} from './keyboard-shortcuts';

function key(
  init: KeyboardEventInit & { target?: HTMLElement },
): KeyboardEvent {
  const event = new KeyboardEvent('keydown', {
    bubbles: true,
    cancelable: true,
    ...init,
  });
  (init.target ?? document.body).dispatchEvent(event);
  return event;
}

describe('shortcutOf', () => {
  const field = document.createElement('textarea');
  const checkbox = Object.assign(document.createElement('input'), {
    type: 'checkbox',
  });
  beforeAll(() => document.body.append(field, checkbox));
  afterAll(() => {
    field.remove();
    checkbox.remove();
  });

  it.each([
    [
      'Ctrl+Shift+O',
      { ctrlKey: true, shiftKey: true, code: 'KeyO', key: 'O' },
      'new-chat',
    ],
    [
      '⌘+Shift+O',
      { metaKey: true, shiftKey: true, code: 'KeyO', key: 'o' },
      'new-chat',
    ],
    ['Alt+N', { altKey: true, code: 'KeyN', key: 'n' }, 'new-chat'],
    [
      'Option+N on a Mac (types ˜)',
      { altKey: true, code: 'KeyN', key: 'Dead' },
      'new-chat',
    ],
    ['Ctrl+K', { ctrlKey: true, code: 'KeyK', key: 'k' }, 'search'],
    ['⌘+K', { metaKey: true, code: 'KeyK', key: 'k' }, 'search'],
    ['/', { code: 'Slash', key: '/' }, 'composer'],
    [
      'Shift+Esc',
      { shiftKey: true, code: 'Escape', key: 'Escape' },
      'composer',
    ],
    ['?', { shiftKey: true, code: 'Slash', key: '?' }, 'help'],
  ] as const)('%s → %s', (_, init, action) => {
    expect(shortcutOf(key(init))).toBe(action);
  });

  it.each([
    [
      'Ctrl+N (the browser’s new window)',
      { ctrlKey: true, code: 'KeyN', key: 'n' },
    ],
    ['Ctrl+L (the address bar)', { ctrlKey: true, code: 'KeyL', key: 'l' }],
    ['Ctrl+Shift+K', { ctrlKey: true, shiftKey: true, code: 'KeyK', key: 'K' }],
    ['Ctrl+Alt+N', { ctrlKey: true, altKey: true, code: 'KeyN', key: 'n' }],
    ['Esc alone (dialogs)', { code: 'Escape', key: 'Escape' }],
    ['a letter', { code: 'KeyA', key: 'a' }],
  ] as const)('leaves %s alone', (_, init) => {
    expect(shortcutOf(key(init))).toBeNull();
  });

  it('lets a text field keep / and ?, but not the chords', () => {
    expect(
      shortcutOf(key({ key: '/', code: 'Slash', target: field })),
    ).toBeNull();
    expect(
      shortcutOf(
        key({ key: '?', shiftKey: true, code: 'Slash', target: field }),
      ),
    ).toBeNull();
    expect(
      shortcutOf(key({ ctrlKey: true, code: 'KeyK', key: 'k', target: field })),
    ).toBe('search');
    // A checkbox types nothing.
    expect(
      shortcutOf(
        key({ key: '?', shiftKey: true, code: 'Slash', target: checkbox }),
      ),
    ).toBe('help');
  });

  it('ignores a key press already handled, or part of an input method composition', () => {
    const handled = new KeyboardEvent('keydown', {
      key: '?',
      cancelable: true,
    });
    handled.preventDefault();
    expect(shortcutOf(handled)).toBeNull();
    expect(
      shortcutOf(new KeyboardEvent('keydown', { key: '/', isComposing: true })),
    ).toBeNull();
  });

  it('names the keys for the platform', () => {
    expect(isApplePlatform({ platform: 'MacIntel', userAgent: '' })).toBe(true);
    expect(isApplePlatform({ platform: 'Linux x86_64', userAgent: '' })).toBe(
      false,
    );
    expect(shortcutHelp(true)[0].keys).toEqual([
      ['⌘', 'Shift', 'O'],
      ['⌥', 'N'],
    ]);
    expect(shortcutHelp(false)[1].keys).toEqual([['Ctrl', 'K']]);
  });
});

describe('KeyboardShortcuts', () => {
  let shortcuts: KeyboardShortcuts;
  let dialog: MatDialog;

  beforeEach(() => {
    TestBed.configureTestingModule({ providers: [provideRouter([])] });
    shortcuts = TestBed.inject(KeyboardShortcuts);
    dialog = TestBed.inject(MatDialog);
  });

  afterEach(() => dialog.closeAll());

  it('opens the help with ?, closes it with Escape and gives the focus back', async () => {
    const opener = document.createElement('button');
    document.body.append(opener);
    opener.focus();

    const press = key({ key: '?', shiftKey: true, code: 'Slash' });
    shortcuts.handle(press);
    expect(press.defaultPrevented).toBe(true);
    await TestBed.inject(MatDialog).openDialogs[0].afterOpened().toPromise();
    const container = document.querySelector('mat-dialog-container');
    expect(container?.querySelector('h2')?.textContent).toBe(
      'Keyboard shortcuts',
    );
    expect(
      Array.from(container?.querySelectorAll('.does') ?? []).map(
        (line) => line.textContent,
      ),
    ).toEqual([
      'New chat',
      'Search the chats',
      'Write a message',
      'Show these shortcuts',
      'Close a dialog or cancel a confirmation',
    ]);

    // While a dialog is open the shortcuts rest (no second help).
    shortcuts.handle(key({ key: '?', shiftKey: true, code: 'Slash' }));
    expect(dialog.openDialogs).toHaveLength(1);

    const closed = dialog.openDialogs[0].afterClosed().toPromise();
    document.activeElement?.dispatchEvent(
      new KeyboardEvent('keydown', {
        key: 'Escape',
        keyCode: 27,
        bubbles: true,
        cancelable: true,
      }),
    );
    await closed;
    await new Promise((done) => setTimeout(done));
    expect(dialog.openDialogs).toHaveLength(0);
    expect(document.activeElement).toBe(opener);
    opener.remove();
  });

  it('focuses the message box with /', () => {
    const composer = document.createElement('textarea');
    composer.dataset['shortcut'] = 'composer';
    document.body.append(composer);
    const press = key({ key: '/', code: 'Slash' });
    shortcuts.handle(press);
    expect(press.defaultPrevented).toBe(true);
    expect(document.activeElement).toBe(composer);
    composer.remove();
  });
});
