import { DOCUMENT } from '@angular/common';
import { Injectable, inject } from '@angular/core';
import { MatDialog } from '@angular/material/dialog';
import { Router } from '@angular/router';
import { ShortcutsHelp } from './shortcuts-help';

export type ShortcutAction = 'new-chat' | 'search' | 'composer' | 'help';

/** One line of the help: the keys (each a list of keys pressed together) and what they do. */
export interface ShortcutHelpLine {
  action: ShortcutAction | 'escape';
  keys: string[][];
  does: string;
}

/** Whether this is a Mac (⌘ instead of Ctrl). */
export function isApplePlatform(
  navigator: Pick<Navigator, 'platform' | 'userAgent'> | undefined,
): boolean {
  return /Mac|iPhone|iPad/.test(
    `${navigator?.platform ?? ''} ${navigator?.userAgent ?? ''}`,
  );
}

/**
 * The shortcuts. None clashes with a browser's own: Ctrl+N/T/W and Ctrl+L stay the browser's; Ctrl/⌘+K
 * and Ctrl/⌘+Shift+O are what chat apps commonly use, and pages may take them.
 */
export function shortcutHelp(apple: boolean): ShortcutHelpLine[] {
  const mod = apple ? '⌘' : 'Ctrl';
  const alt = apple ? '⌥' : 'Alt';
  return [
    {
      action: 'new-chat',
      keys: [
        [mod, 'Shift', 'O'],
        [alt, 'N'],
      ],
      does: 'New chat',
    },
    { action: 'search', keys: [[mod, 'K']], does: 'Search the chats' },
    {
      action: 'composer',
      keys: [['/'], ['Shift', 'Esc']],
      does: 'Write a message',
    },
    { action: 'help', keys: [['?']], does: 'Show these shortcuts' },
    {
      action: 'escape',
      keys: [['Esc']],
      does: 'Close a dialog or cancel a confirmation',
    },
  ];
}

/** Typing in a field: plain keys (`/`, `?`) belong to the field. */
function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  if (
    target instanceof HTMLTextAreaElement ||
    target instanceof HTMLSelectElement
  )
    return true;
  if (target instanceof HTMLInputElement)
    return ![
      'checkbox',
      'radio',
      'button',
      'submit',
      'reset',
      'range',
    ].includes(target.type);
  return false;
}

/** Which shortcut a key press is, if any. */
export function shortcutOf(event: KeyboardEvent): ShortcutAction | null {
  if (event.defaultPrevented || event.isComposing) return null;
  const mod = event.ctrlKey || event.metaKey;
  // `code`: the key's place, so Option+N on a Mac (which types "˜") still counts.
  const letter = /^Key([A-Z])$/.exec(event.code)?.[1] ?? '';
  if (mod && event.shiftKey && !event.altKey && letter === 'O')
    return 'new-chat';
  if (event.altKey && !mod && !event.shiftKey && letter === 'N')
    return 'new-chat';
  if (mod && !event.shiftKey && !event.altKey && letter === 'K')
    return 'search';
  if (event.key === 'Escape' && event.shiftKey && !mod && !event.altKey)
    return 'composer';
  if (mod || event.altKey || isTypingTarget(event.target)) return null;
  if (event.key === '/') return 'composer';
  if (event.key === '?') return 'help';
  return null;
}

/** How long to look for an element the next page renders (it is lazy-loaded). */
const FIND_FRAMES = 120;

/**
 * The console's keyboard shortcuts (the logged-in shell passes every key press of the document here).
 * Pages mark their targets with `data-shortcut="new-chat" | "search" | "composer"`, so a page keeps its own
 * behaviour (the New chat button's click) and the shortcut does what the mouse would.
 */
@Injectable({ providedIn: 'root' })
export class KeyboardShortcuts {
  private readonly document = inject(DOCUMENT);
  private readonly router = inject(Router);
  private readonly dialog = inject(MatDialog);

  readonly apple = isApplePlatform(this.document.defaultView?.navigator);

  handle(event: KeyboardEvent): void {
    const action = shortcutOf(event);
    if (!action) return;
    // A dialog is open: its own keys only.
    if (this.dialog.openDialogs.length > 0) return;
    event.preventDefault();
    this.run(action);
  }

  run(action: ShortcutAction): void {
    switch (action) {
      case 'new-chat':
        void this.onChatPage((root) => {
          const button = root.querySelector<HTMLButtonElement>(
            '[data-shortcut="new-chat"]',
          );
          if (!button) return false;
          if (!button.disabled) button.click();
          return true;
        });
        return;
      case 'search':
        void this.onChatPage((root) => this.focusSearch(root), true);
        return;
      case 'composer':
        this.focusComposer();
        return;
      case 'help':
        this.openHelp();
        return;
    }
  }

  openHelp(): void {
    if (this.dialog.openDialogs.length > 0) return;
    this.dialog.open(ShortcutsHelp, {
      width: '480px',
      maxWidth: '95vw',
      ariaLabelledBy: 'shortcuts-help-title',
      autoFocus: 'dialog',
      data: shortcutHelp(this.apple),
    });
  }

  private focusComposer(): void {
    const composer = this.document.querySelector<HTMLElement>(
      '[data-shortcut="composer"]',
    );
    if (composer && !(composer as HTMLTextAreaElement).disabled)
      composer.focus();
  }

  /** The search box, if the chat list has one; else the open chat's entry in the list, else the first. */
  private focusSearch(root: ParentNode): boolean {
    const box = root.querySelector<HTMLInputElement>(
      '[data-shortcut="search"], input[type="search"]',
    );
    if (box && isShown(box)) {
      box.focus();
      box.select?.();
      return true;
    }
    const link =
      root.querySelector<HTMLElement>(
        '[data-testid="chat-link"][aria-current="page"]',
      ) ?? root.querySelector<HTMLElement>('[data-testid="chat-link"]');
    if (link && isShown(link)) {
      link.focus();
      return true;
    }
    const newChat = root.querySelector<HTMLElement>(
      '[data-shortcut="new-chat"]',
    );
    if (newChat && isShown(newChat)) {
      newChat.focus();
      return true;
    }
    return false;
  }

  /**
   * Runs `act` on the chat page: here if it shows what `act` needs, else after going to `/chat` (on a phone
   * an open chat hides the list). `act` answers whether it found its target.
   */
  private async onChatPage(
    act: (root: ParentNode) => boolean,
    needsList = false,
  ): Promise<void> {
    const page = this.document.querySelector('mt-chat-page');
    const listShown = () => {
      const sidebar = this.document.querySelector<HTMLElement>(
        'mt-chat-page [aria-labelledby="chats-heading"], mt-chat-page .sidebar',
      );
      return !!sidebar && isShown(sidebar);
    };
    if (page && (!needsList || listShown()) && act(page)) return;
    const url = this.router.url.split(/[?#]/)[0];
    if (url !== '/chat' || !page) await this.router.navigateByUrl('/chat');
    for (let frame = 0; frame < FIND_FRAMES; frame++) {
      await new Promise<void>((done) =>
        (this.document.defaultView ?? window).requestAnimationFrame(() =>
          done(),
        ),
      );
      const root = this.document.querySelector('mt-chat-page');
      if (root && act(root)) return;
    }
  }
}

function isShown(element: HTMLElement): boolean {
  return element.getClientRects().length > 0;
}
