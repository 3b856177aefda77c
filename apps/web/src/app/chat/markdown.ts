import hljs from 'highlight.js/lib/common';
import { Marked, type Tokens } from 'marked';

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]);
}

const ALLOWED_SCHEMES = new Set(['http:', 'https:', 'mailto:']);
/** Same-origin files the assistant may show inline (generated images, uploads). */
const INLINE_IMAGE_PREFIXES = ['/api/media/', '/api/attachments/'];

/**
 * True for links worth following: http(s), mailto and scheme-less (relative) URLs. `javascript:`, `data:`
 * and friends are refused, even when disguised with whitespace or control characters.
 */
export function isSafeUrl(href: string): boolean {
  // eslint-disable-next-line no-control-regex
  const compact = href.replace(/[\u0000-\u0020\u007f]/g, '');
  const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(compact)?.[1]?.toLowerCase();
  return scheme === undefined
    ? compact.length > 0
    : ALLOWED_SCHEMES.has(scheme);
}

/** Letters, digits and a few symbols (`c++`, `c#`, `objective-c`, `ts.d`): safe in a class name and a label. */
function languageOf(lang: string | undefined): string {
  const first = (lang ?? '').trim().split(/\s+/)[0] ?? '';
  return /^[\w+#.-]{1,32}$/.test(first) ? first : '';
}

/**
 * Code → HTML with highlight.js token spans (`<span class="hljs-keyword">`) when the language is one of its
 * common ones; escaped plain text otherwise. highlight.js escapes the code itself.
 */
export function highlightCode(
  code: string,
  language: string,
): { html: string; highlighted: boolean } {
  if (language && hljs.getLanguage(language)) {
    try {
      return {
        html: hljs.highlight(code, { language, ignoreIllegals: true }).value,
        highlighted: true,
      };
    } catch {
      // A grammar that throws on odd input: plain text is fine.
    }
  }
  return { html: escapeHtml(code), highlighted: false };
}

/**
 * Markdown of an assistant reply → HTML, with GitHub-flavoured syntax. Raw HTML in the source is escaped, so
 * it shows as text (the model's `<img onerror=…>` cannot run); unsafe link schemes become plain text; links
 * open in a new tab without access to this window. The result is still bound through Angular's
 * `[innerHTML]` sanitizer as a second line of defence.
 */
const markdown = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    code({ text, lang }: Tokens.Code): string {
      const language = languageOf(lang);
      const code = highlightCode(text.replace(/\n$/, ''), language);
      const label = language
        ? `<span class="code-lang">${escapeHtml(language)}</span>`
        : '';
      const codeClass = language
        ? ` class="language-${escapeHtml(language)}${code.highlighted ? ' hljs' : ''}"`
        : '';
      // The copy button is added by the view (the sanitizer would drop a <button> here).
      return (
        `<div class="code-block"><div class="code-head">${label}</div>` +
        `<pre><code${codeClass}>${code.html}</code></pre></div>\n`
      );
    },
    link(token: Tokens.Link): string {
      const text = this.parser.parseInline(token.tokens);
      if (!isSafeUrl(token.href)) return text;
      const title = token.title ? ` title="${escapeHtml(token.title)}"` : '';
      return `<a href="${escapeHtml(token.href)}"${title} target="_blank" rel="noopener noreferrer">${text}</a>`;
    },
    image({ href, title, text }: Tokens.Image): string {
      if (INLINE_IMAGE_PREFIXES.some((prefix) => href.startsWith(prefix))) {
        const titleAttr = title ? ` title="${escapeHtml(title)}"` : '';
        return `<img src="${escapeHtml(href)}" alt="${escapeHtml(text)}"${titleAttr} loading="lazy">`;
      }
      // Remote images would load from anywhere as soon as the reply renders: offer a link instead.
      const label = escapeHtml(text || href);
      if (!isSafeUrl(href)) return label;
      return `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer">${label}</a>`;
    },
    checkbox({ checked }: Tokens.Checkbox): string {
      // `<input>` would be stripped by the sanitizer; a glyph keeps the task list readable.
      return checked ? '☑ ' : '☐ ';
    },
  },
});

/** Renders Markdown to (escaped, link-safe) HTML for `[innerHTML]`. */
export function renderMarkdown(source: string): string {
  return markdown.parse(source, { async: false });
}
