/** Content types returned inline as text; anything else is binary and only saved with `download_path`. */
export function isTextual(contentType: string | null, sample: Buffer): boolean {
  const type = mediaType(contentType);
  if (!type) return !sample.subarray(0, 2048).includes(0);
  return (
    type.startsWith('text/') ||
    /^application\/([\w.+-]+\+)?(json|xml|yaml|x-yaml|javascript|ecmascript|x-www-form-urlencoded|x-ndjson|ld\+json|csv|sql|graphql|toml)$/.test(
      type,
    ) ||
    type.endsWith('+json') ||
    type.endsWith('+xml')
  );
}

export function isHtml(contentType: string | null): boolean {
  const type = mediaType(contentType);
  return type === 'text/html' || type === 'application/xhtml+xml';
}

/** `text/html; charset=UTF-8` → `text/html`. */
export function mediaType(contentType: string | null): string | null {
  const type = contentType?.split(';')[0].trim().toLowerCase();
  return type ? type : null;
}

/** Decodes with the charset of the header (or of an HTML `<meta>`), UTF-8 otherwise. */
export function decodeText(bytes: Buffer, contentType: string | null): string {
  const declared =
    /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? '')?.[1] ??
    (isHtml(contentType)
      ? /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(
          bytes.subarray(0, 4096).toString('latin1'),
        )?.[1]
      : undefined);
  try {
    return new TextDecoder(declared ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** Readable text of an HTML page: headings, paragraphs, lists, tables and links `text [url]`; scripts, styles and images dropped. */
export async function htmlToReadableText(html: string): Promise<{
  title: string | null;
  text: string;
}> {
  // Loaded with the first page fetched: html-to-text and its parser cost start-up time otherwise.
  const { convert } = await import('html-to-text');
  const rawTitle = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  const title = rawTitle
    ? convert(rawTitle, { wordwrap: false }).trim() || null
    : null;
  const text = convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'img', format: 'skip' },
      { selector: 'svg', format: 'skip' },
      { selector: 'form', format: 'skip' },
      {
        selector: 'a',
        options: { hideLinkHrefIfSameAsText: true, ignoreHref: false },
      },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
      {
        selector: 'table',
        format: 'dataTable',
        options: { uppercaseHeaderCells: false },
      },
    ],
  })
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { title, text };
}
