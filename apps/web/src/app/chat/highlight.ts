export interface HighlightPart {
  text: string;
  match: boolean;
}

/**
 * `text` cut into plain parts and parts equal to `needle` in any letter case, so a template can put the matches in
 * `<mark>` without building HTML from text it did not write.
 */
export function highlightParts(text: string, needle: string): HighlightPart[] {
  const wanted = needle.trim().toLocaleLowerCase();
  const lower = text.toLocaleLowerCase();
  // Lower-casing that changes the length (rare letters) would misplace the marks: show the text plain then.
  if (!wanted || lower.length !== text.length) return [{ text, match: false }];
  const parts: HighlightPart[] = [];
  let from = 0;
  for (;;) {
    const at = lower.indexOf(wanted, from);
    if (at < 0) break;
    if (at > from) parts.push({ text: text.slice(from, at), match: false });
    parts.push({ text: text.slice(at, at + wanted.length), match: true });
    from = at + wanted.length;
  }
  if (from < text.length) parts.push({ text: text.slice(from), match: false });
  return parts;
}
