import { TestBed } from '@angular/core/testing';
import type { ToolCallRecord } from '@metatronos/shared-types';
import { mediaFileName } from './media-image';
import { toolArguments, toolLabel, toolSummary } from './tool-labels';
import { ToolChip, formatDuration, imageOfCall, prettyJson } from './tool-chip';

const CALL: ToolCallRecord = {
  id: 't1',
  name: 'db_query',
  arguments: {
    operation: 'find',
    collection: 'contacts',
    filter: { name: 'Ana' },
  },
  result: '[{"name":"<img src=x onerror=alert(1)>"}]',
  error: null,
  durationMs: 230,
};

async function mount(call: ToolCallRecord, settled = false) {
  const fixture = TestBed.createComponent(ToolChip);
  fixture.componentRef.setInput('call', call);
  fixture.componentRef.setInput('settled', settled);
  await fixture.whenStable();
  const root = fixture.nativeElement as HTMLElement;
  const el = (testId: string) =>
    root.querySelector<HTMLElement>(`[data-testid="${testId}"]`);
  return { fixture, root, el };
}

describe('ToolChip', () => {
  it('names the third-party content a call brought into the turn, and says when a call waits for approval', async () => {
    const { el } = await mount({
      ...CALL,
      name: 'url_fetch',
      arguments: { url: 'https://example.org/page' },
      taint: {
        by: 'url_fetch',
        text: 'a web page from example.org',
        at: '2026-11-28T09:00:00.000Z',
      },
    });
    const marker = el('tool-chip-taint');
    expect(marker?.textContent?.trim()).toBe(
      'read third-party content: a web page from example.org',
    );
    expect(marker?.getAttribute('title')).toBe(
      'Text someone else wrote entered this turn here: a web page from example.org',
    );
    expect(marker?.getAttribute('data-by')).toBe('url_fetch');

    const waiting = await mount(
      {
        ...CALL,
        name: 'whatsapp_send_message',
        arguments: { to: '+491701234567', text: 'Hi' },
        result: '{"pending":true,"actionId":"a1","summary":"Send Hi"}',
        pendingActionId: 'a1',
      },
      true,
    );
    expect(waiting.el('tool-chip')?.getAttribute('data-status')).toBe(
      'waiting',
    );
    expect(waiting.el('tool-chip-status')?.textContent).toBe(
      'asked for your approval',
    );
    // It did not send: the chip says what it would do.
    expect(waiting.el('tool-chip-label')?.textContent).toBe(
      'Send a WhatsApp message',
    );
    expect(waiting.el('tool-chip-taint')).toBeNull();
  });

  it('says what the call did in words, what about, "done" and the duration, collapsed', async () => {
    const { el } = await mount(CALL);
    expect(el('tool-chip-label')?.textContent).toBe('Queried the database');
    expect(el('tool-chip-summary')?.textContent).toBe('contacts');
    expect(el('tool-chip')?.getAttribute('data-tool')).toBe('db_query');
    expect(el('tool-chip-status')?.textContent).toBe('done');
    expect(el('tool-chip-duration')?.textContent).toBe('230 ms');
    expect(el('tool-chip-toggle')?.getAttribute('aria-expanded')).toBe('false');
    expect(el('tool-chip-details')).toBeNull();
  });

  it('expands to the arguments as key: value rows and a collapsed result, as text only', async () => {
    const { fixture, root, el } = await mount(CALL);
    el('tool-chip-toggle')?.click();
    await fixture.whenStable();
    expect(el('tool-chip-toggle')?.getAttribute('aria-expanded')).toBe('true');
    expect(el('tool-chip-toggle')?.getAttribute('aria-controls')).toBe(
      el('tool-chip-details')?.id,
    );
    const rows = Array.from(
      el('tool-chip-arguments')?.querySelectorAll('.argument') ?? [],
    ).map(
      (row) =>
        `${row.querySelector('dt')?.textContent?.trim()} ${row.querySelector('dd')?.textContent?.trim()}`,
    );
    expect(rows).toEqual([
      'operation: find',
      'collection: contacts',
      'filter: {"name":"Ana"}',
    ]);
    expect(el('tool-chip-details')?.textContent).toContain('db_query');
    expect(el('tool-chip-result')).toBeNull();
    el('tool-chip-result-toggle')?.click();
    await fixture.whenStable();
    expect(el('tool-chip-result')?.textContent).toBe(
      '[\n  {\n    "name": "<img src=x onerror=alert(1)>"\n  }\n]',
    );
    expect(root.querySelector('img')).toBeNull();

    el('tool-chip-toggle')?.click();
    await fixture.whenStable();
    expect(el('tool-chip-details')).toBeNull();
  });

  it('shows a running call with a spinner, and as not finished once the reply ended without a result', async () => {
    const running = { ...CALL, result: null, durationMs: null };
    const { fixture, root, el } = await mount(running);
    expect(el('tool-chip')?.getAttribute('data-status')).toBe('running');
    expect(root.querySelector('.spinner')).not.toBeNull();
    expect(el('tool-chip-duration')).toBeNull();
    fixture.componentRef.setInput('settled', true);
    await fixture.whenStable();
    expect(el('tool-chip-status')?.textContent).toBe('not finished');
    expect(root.querySelector('.spinner')).toBeNull();
  });

  it('shows a failed call and its error', async () => {
    const { fixture, el } = await mount({
      ...CALL,
      result: '{"error":"Collection is read-only"}',
      error: 'Collection is read-only',
    });
    expect(el('tool-chip')?.getAttribute('data-status')).toBe('error');
    expect(el('tool-chip-status')?.textContent).toBe('failed');
    el('tool-chip-toggle')?.click();
    await fixture.whenStable();
    expect(el('tool-chip-error')?.textContent).toBe('Collection is read-only');
  });
});

const MEDIA_ID = '64b7f0c2a1b2c3d4e5f60718';
const IMAGE_CALL: ToolCallRecord = {
  id: 't2',
  name: 'generate_image',
  arguments: {
    prompt: 'A red fox in snow, watercolour',
    shortDescription: 'Red fox in snow',
  },
  result: JSON.stringify({
    success: true,
    mediaId: MEDIA_ID,
    url: `/api/media/${MEDIA_ID}`,
    markdown: `![Red fox in snow](/api/media/${MEDIA_ID})`,
    width: 1024,
    height: 768,
  }),
  error: null,
  durationMs: 8200,
};

describe('ToolChip with an image tool', () => {
  it('shows the generated image as a thumbnail served by the API, without expanding', async () => {
    const { el, root } = await mount(IMAGE_CALL);
    expect(el('tool-chip-status')?.textContent).toBe('done');
    const img = el('tool-chip-image')?.querySelector('img');
    expect(img?.getAttribute('src')).toBe(`/api/media/${MEDIA_ID}`);
    expect(img?.getAttribute('alt')).toBe('Red fox in snow');
    expect(img?.getAttribute('width')).toBe('1024');
    expect(img?.getAttribute('height')).toBe('768');
    expect(el('tool-chip-details')).toBeNull();
    expect(root.querySelector('[data-testid="media-viewer"]')).toBeNull();
  });

  it('opens a viewer with a download link on click, and closes it with the button, Escape or the backdrop', async () => {
    const { fixture, el } = await mount({
      ...IMAGE_CALL,
      name: 'edit_image',
      arguments: { ...IMAGE_CALL.arguments, imageId: 'x' },
    });
    el('media-thumb')?.click();
    await fixture.whenStable();
    const viewer = el('media-viewer');
    expect(
      viewer?.querySelector('[role="dialog"]')?.getAttribute('aria-modal'),
    ).toBe('true');
    expect(viewer?.querySelector('img')?.getAttribute('src')).toBe(
      `/api/media/${MEDIA_ID}`,
    );
    const download = el('media-download');
    expect(download?.getAttribute('href')).toBe(`/api/media/${MEDIA_ID}`);
    expect(download?.getAttribute('download')).toBe('Red-fox-in-snow.png');
    expect(document.activeElement).toBe(
      viewer?.querySelector('[role="dialog"]'),
    );

    el('media-close')?.click();
    await fixture.whenStable();
    expect(el('media-viewer')).toBeNull();

    el('media-thumb')?.click();
    await fixture.whenStable();
    document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));
    await fixture.whenStable();
    expect(el('media-viewer')).toBeNull();

    el('media-thumb')?.click();
    await fixture.whenStable();
    el('media-viewer')?.querySelector<HTMLElement>('.full')?.click();
    await fixture.whenStable();
    expect(el('media-viewer')).not.toBeNull();
    el('media-backdrop')?.click();
    await fixture.whenStable();
    expect(el('media-viewer')).toBeNull();
  });

  it('shows no image for a failed or running call, another tool, or a result without a valid id', async () => {
    const failed = await mount({
      ...IMAGE_CALL,
      result: '{"error":"Image generation failed: boom"}',
      error: 'Image generation failed: boom',
    });
    expect(failed.el('tool-chip-image')).toBeNull();
    const running = await mount({
      ...IMAGE_CALL,
      result: null,
      durationMs: null,
    });
    expect(running.el('tool-chip-image')).toBeNull();

    expect(imageOfCall({ ...IMAGE_CALL, name: 'db_query' })).toBeNull();
    for (const mediaId of [
      '../../api/auth/logout',
      'javascript:alert(1)',
      'https://evil.example/x.png',
      42,
    ]) {
      expect(
        imageOfCall({
          ...IMAGE_CALL,
          result: JSON.stringify({ success: true, mediaId }),
        }),
      ).toBeNull();
    }
    expect(imageOfCall({ ...IMAGE_CALL, result: 'not json' })).toBeNull();
    expect(
      imageOfCall({
        ...IMAGE_CALL,
        result: JSON.stringify({
          success: true,
          mediaId: MEDIA_ID,
          width: 'x',
        }),
      }),
    ).toEqual({
      mediaId: MEDIA_ID,
      description: 'Red fox in snow',
      width: null,
      height: null,
    });
  });
});

describe('formatting helpers', () => {
  it('makes safe download names', () => {
    expect(mediaFileName('Red fox in snow')).toBe('Red-fox-in-snow.png');
    expect(mediaFileName('../"évil"\r\nname')).toBe('evil-name.png');
    expect(mediaFileName('  ')).toBe('image.png');
  });

  it('prints durations readably', () => {
    expect(formatDuration(42)).toBe('42 ms');
    expect(formatDuration(1500)).toBe('1.5 s');
    expect(formatDuration(12_400)).toBe('12 s');
    expect(formatDuration(75_000)).toBe('1 min 15 s');
  });

  it('pretty-prints JSON strings and leaves other text alone', () => {
    expect(prettyJson('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(prettyJson('plain text')).toBe('plain text');
    expect(prettyJson({ b: [1] })).toBe('{\n  "b": [\n    1\n  ]\n}');
  });
});

describe('tool labels', () => {
  it('names known tools in words, running and done, and unknown ones from their name', () => {
    expect(toolLabel('web_search', { query: 'x' }, false)).toBe(
      'Searched the web',
    );
    expect(toolLabel('web_search', { query: 'x' }, true)).toBe(
      'Searching the web',
    );
    expect(toolLabel('db_query', { operation: 'insertOne' }, false)).toBe(
      'Changed the database',
    );
    expect(toolLabel('db_query', { operation: 'aggregate' }, false)).toBe(
      'Queried the database',
    );
    expect(toolLabel('someNew_tool', {}, false)).toBe('Used some new tool');
  });

  it('writes arguments as key: value and picks the one that says what the call is about', () => {
    expect(
      toolArguments({
        maxResults: 5,
        safe: true,
        tags: ['a', 'b'],
        none: null,
        nested: { a: [1] },
      }),
    ).toEqual([
      { key: 'max results', value: '5' },
      { key: 'safe', value: 'yes' },
      { key: 'tags', value: 'a, b' },
      { key: 'none', value: 'none' },
      { key: 'nested', value: '{"a":[1]}' },
    ]);
    expect(
      toolSummary('web_search', { count: 3, query: 'weather  in\nParis' }),
    ).toBe('weather in Paris');
    expect(toolSummary('x', { text: 'y'.repeat(100) })).toHaveLength(60);
    expect(toolSummary('x', { n: 1 })).toBeNull();
  });
});
