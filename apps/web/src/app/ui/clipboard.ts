/**
 * Puts text on the clipboard. `navigator.clipboard` exists only in a secure context (HTTPS, localhost); a
 * console opened over plain HTTP on the home network falls back to a hidden text area and the copy
 * command. Resolves false when neither worked (the caller says so).
 */
export async function copyText(
  text: string,
  document: Document = globalThis.document,
): Promise<boolean> {
  const clipboard = document.defaultView?.navigator.clipboard;
  if (clipboard?.writeText) {
    try {
      await clipboard.writeText(text);
      return true;
    } catch {
      // Refused (no permission, document not focused): try the old way.
    }
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  area.style.pointerEvents = 'none';
  const focused = document.activeElement as HTMLElement | null;
  document.body.append(area);
  area.focus();
  area.select();
  let copied = false;
  try {
    copied = document.execCommand?.('copy') ?? false;
  } catch {
    copied = false;
  }
  area.remove();
  focused?.focus?.();
  return copied;
}
