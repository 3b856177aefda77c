import { TestBed } from '@angular/core/testing';
import type { ToolCallRecord } from '@metatronos/shared-types';
import { ToolChip, formatDuration, prettyJson } from './tool-chip';

const CALL: ToolCallRecord = {
  id: 't1',
  name: 'db_query',
  arguments: { operation: 'find', collection: 'contacts', filter: { name: 'Ana' } },
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
  const el = (testId: string) => root.querySelector<HTMLElement>(`[data-testid="${testId}"]`);
  return { fixture, root, el };
}

describe('ToolChip', () => {
  it('shows the tool name, "done" and the duration, collapsed', async () => {
    const { el } = await mount(CALL);
    expect(el('tool-chip')?.textContent).toContain('db_query');
    expect(el('tool-chip-status')?.textContent).toBe('done');
    expect(el('tool-chip-duration')?.textContent).toBe('230 ms');
    expect(el('tool-chip-toggle')?.getAttribute('aria-expanded')).toBe('false');
    expect(el('tool-chip-details')).toBeNull();
  });

  it('expands to pretty-printed arguments and result, as text only', async () => {
    const { fixture, root, el } = await mount(CALL);
    el('tool-chip-toggle')?.click();
    await fixture.whenStable();
    expect(el('tool-chip-toggle')?.getAttribute('aria-expanded')).toBe('true');
    expect(el('tool-chip-toggle')?.getAttribute('aria-controls')).toBe(el('tool-chip-details')?.id);
    expect(el('tool-chip-arguments')?.textContent).toBe(JSON.stringify(CALL.arguments, null, 2));
    expect(el('tool-chip-result')?.textContent).toBe('[\n  {\n    "name": "<img src=x onerror=alert(1)>"\n  }\n]');
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
    const { fixture, el } = await mount({ ...CALL, result: '{"error":"Collection is read-only"}', error: 'Collection is read-only' });
    expect(el('tool-chip')?.getAttribute('data-status')).toBe('error');
    expect(el('tool-chip-status')?.textContent).toBe('failed');
    el('tool-chip-toggle')?.click();
    await fixture.whenStable();
    expect(el('tool-chip-error')?.textContent).toBe('Collection is read-only');
  });
});

describe('formatting helpers', () => {
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
