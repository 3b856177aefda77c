import { Component, input } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { isSafeUrl, renderMarkdown } from './markdown';

/** Renders like the chat does: through Angular's `[innerHTML]` sanitizer. */
@Component({ template: `<div [innerHTML]="html()"></div>` })
class Host {
  readonly html = input('');
}

function mount(markdown: string): HTMLElement {
  const fixture = TestBed.createComponent(Host);
  fixture.componentRef.setInput('html', renderMarkdown(markdown));
  fixture.detectChanges();
  return fixture.nativeElement.querySelector('div') as HTMLElement;
}

describe('renderMarkdown', () => {
  beforeEach(() =>
    jest.spyOn(console, 'warn').mockImplementation(() => undefined),
  );
  afterEach(() => jest.restoreAllMocks());

  it('renders GitHub-flavoured Markdown: emphasis, lists, tables, strikethrough', () => {
    const root = mount(
      '**bold** and _it_\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n~~gone~~',
    );
    expect(root.querySelector('strong')?.textContent).toBe('bold');
    expect(root.querySelector('em')?.textContent).toBe('it');
    expect(root.querySelectorAll('li')).toHaveLength(2);
    expect(root.querySelector('table td')?.textContent).toBe('1');
    expect(root.querySelector('del')?.textContent).toBe('gone');
  });

  it('labels fenced code with its language and keeps the code as text', () => {
    const root = mount('```ts\nconst a = "<b>" && 1;\n```');
    expect(root.querySelector('.code-lang')?.textContent).toBe('ts');
    const code = root.querySelector('pre code');
    expect(code?.className).toBe('language-ts hljs');
    expect(code?.textContent).toBe('const a = "<b>" && 1;');
    // No markup came from the code itself.
    expect(code?.querySelector('b')).toBeNull();
    expect(root.querySelector('b')).toBeNull();
  });

  it('highlights code of a known language with highlight.js token spans, and leaves others plain', () => {
    const root = mount(
      '```python\ndef greet(name):\n    return "hi " + name  # say hi\n```\n\n```brainfudge\n<script>x</script>\n```',
    );
    const [python, unknown] = Array.from(root.querySelectorAll('pre code'));
    expect(python.querySelector('.hljs-keyword')?.textContent).toBe('def');
    expect(python.querySelector('.hljs-string')?.textContent).toBe('"hi "');
    expect(python.querySelector('.hljs-comment')?.textContent).toBe('# say hi');
    expect(python.textContent).toBe(
      'def greet(name):\n    return "hi " + name  # say hi',
    );
    expect(unknown.className).toBe('language-brainfudge');
    expect(unknown.children).toHaveLength(0);
    expect(unknown.textContent).toBe('<script>x</script>');
    expect(root.querySelector('script')).toBeNull();
  });

  it('keeps a highlighted block safe when the code holds HTML', () => {
    const root = mount('```html\n<img src=x onerror="alert(1)">\n```');
    expect(root.querySelector('img')).toBeNull();
    expect(root.querySelector('pre code')?.textContent).toBe(
      '<img src=x onerror="alert(1)">',
    );
    expect(root.querySelector('pre code .hljs-tag')).not.toBeNull();
  });

  it('shows code without a language label when none (or garbage) is given', () => {
    const root = mount('```"><script>\nx\n```');
    expect(root.querySelector('.code-lang')).toBeNull();
    expect(root.querySelector('pre code')?.textContent).toBe('x');
    expect(root.querySelector('script')).toBeNull();
  });

  it('shows an <img onerror> in a reply as text instead of running it', () => {
    const root = mount('Look: <img src=x onerror="alert(1)"> here');
    expect(root.querySelector('img')).toBeNull();
    expect(root.textContent).toContain('<img src=x onerror="alert(1)">');
  });

  it('shows block HTML and scripts as text', () => {
    const root = mount(
      '<div onclick="steal()">hi</div>\n\n<script>alert(1)</script>\n\n<iframe src="https://evil"></iframe>',
    );
    expect(root.querySelector('div[onclick], script, iframe')).toBeNull();
    expect(root.textContent).toContain('<script>alert(1)</script>');
    expect(root.textContent).toContain('<div onclick="steal()">');
  });

  it('opens links in a new tab without giving the page access to the console', () => {
    const root = mount(
      'See [the docs](https://example.com/a?b=1&c=2 "Docs") and https://auto.link/x',
    );
    const links = Array.from(root.querySelectorAll('a'));
    expect(links.map((a) => a.getAttribute('href'))).toEqual([
      'https://example.com/a?b=1&c=2',
      'https://auto.link/x',
    ]);
    for (const a of links) {
      expect(a.getAttribute('target')).toBe('_blank');
      expect(a.getAttribute('rel')).toContain('noopener');
    }
    expect(links[0].title).toBe('Docs');
  });

  it('turns javascript: and data: links into plain text', () => {
    const root = mount(
      '[click](javascript:alert(1)) [also](JaVa\tScRiPt:alert(2)) [img](data:text/html;base64,PHNjcmlwdD4=)',
    );
    expect(root.querySelector('a')).toBeNull();
    expect(root.textContent).toContain('click');
    expect(root.textContent).toContain('also');
  });

  it('shows the console’s own media inline but only links to remote images', () => {
    const root = mount(
      '![chart](/api/media/abc123) ![tracker](https://evil.example/pixel.png)',
    );
    const images = root.querySelectorAll('img');
    expect(images).toHaveLength(1);
    expect(images[0].getAttribute('src')).toBe('/api/media/abc123');
    expect(images[0].getAttribute('alt')).toBe('chart');
    const link = root.querySelector('a');
    expect(link?.getAttribute('href')).toBe('https://evil.example/pixel.png');
    expect(link?.textContent).toBe('tracker');
  });

  it('renders task lists as check marks', () => {
    const root = mount('- [x] done\n- [ ] todo');
    expect(root.querySelector('input')).toBeNull();
    expect(root.textContent).toContain('☑ done');
    expect(root.textContent).toContain('☐ todo');
  });
});

describe('isSafeUrl', () => {
  it.each([
    'https://a.b',
    'http://a.b',
    'mailto:me@x.y',
    '/api/media/1',
    '#top',
    'relative/page',
    '?q=1',
  ])('accepts %s', (url) => expect(isSafeUrl(url)).toBe(true));
  it.each([
    'javascript:alert(1)',
    ' javascript:x',
    'java\nscript:x',
    'vbscript:x',
    'data:text/html,x',
    'file:///etc/passwd',
    '',
  ])('refuses %j', (url) => expect(isSafeUrl(url)).toBe(false));
});
