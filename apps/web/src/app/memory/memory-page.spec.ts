import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type {
  MemoryListResponse,
  MemoryNoteView,
} from '@metatronos/shared-types';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import type { FakeEventStream } from '../testing/fake-event-stream';
import { MemoryPage, recentChanges } from './memory-page';

const now = Date.now();
const iso = (msAgo: number) => new Date(now - msAgo).toISOString();

function note(over: Partial<MemoryNoteView>): MemoryNoteView {
  return {
    id: 'n1',
    text: 'Anna has a peanut allergy',
    source: 'owner',
    trust: 'owner',
    status: 'active',
    chatId: 'c1',
    messageIds: ['m1'],
    observedAt: iso(3 * 86_400_000),
    supersedes: null,
    supersededBy: null,
    expiresAt: null,
    history: [],
    createdAt: iso(3 * 86_400_000),
    updatedAt: iso(3 * 86_400_000),
    ...over,
  };
}

const ACTIVE = note({});
const PROPOSED = note({
  id: 'n2',
  text: 'The owner loves Mallory',
  source: 'web',
  trust: 'third-party',
  status: 'proposed',
  chatId: null,
  messageIds: [],
  createdAt: iso(3_600_000),
});

describe('MemoryPage', () => {
  let fixture: ComponentFixture<MemoryPage>;
  let http: HttpTestingController;
  let events: FakeEventStream;
  const { el, all, text } = testIdQueries(
    () => fixture.nativeElement as HTMLElement,
  );
  const stable = () => fixture.whenStable();

  async function load(list: MemoryListResponse): Promise<void> {
    fixture = TestBed.createComponent(MemoryPage);
    await stable();
    http.expectOne('/api/memories').flush(list);
    await stable();
  }

  beforeEach(() => {
    ({ http, events } = setUpApiTest(MemoryPage));
  });

  afterEach(() => tearDownApiTest(http));

  it('lists notes with their source and a link to the message in its chat, proposals apart', async () => {
    await load({ notes: [PROPOSED, ACTIVE] });
    const notes = all('memory-note');
    expect(notes).toHaveLength(2);
    expect(text('memory-proposals')).toContain('The owner loves Mallory');
    expect(text('memory-proposals')).toContain('Said by a web page');
    const link = el<HTMLAnchorElement>('memory-note-link');
    expect(link?.getAttribute('href')).toBe('/chat/c1#message-m1');
    expect(text('memory-notes')).toContain('Said by you');
  });

  it('approves a proposal with POST /approve and reloads', async () => {
    await load({ notes: [PROPOSED, ACTIVE] });
    el<HTMLButtonElement>('memory-approve')?.click();
    const req = http.expectOne('/api/memories/n2/approve');
    expect(req.request.method).toBe('POST');
    req.flush({ ...PROPOSED, status: 'active' });
    await stable();
    http.expectOne('/api/memories').flush({ notes: [ACTIVE] });
    await stable();
    expect(el('memory-proposals')).toBeNull();
  });

  it('discards a proposal with POST /discard', async () => {
    await load({ notes: [PROPOSED, ACTIVE] });
    el<HTMLButtonElement>('memory-discard')?.click();
    const req = http.expectOne('/api/memories/n2/discard');
    expect(req.request.method).toBe('POST');
    req.flush(null, { status: 204, statusText: 'No Content' });
    await stable();
    http.expectOne('/api/memories').flush({ notes: [ACTIVE] });
    await stable();
    expect(el('memory-proposals')).toBeNull();
  });

  it('runs the consolidation now and says when one is already running', async () => {
    await load({ notes: [ACTIVE] });
    el<HTMLButtonElement>('memory-consolidate')?.click();
    http
      .expectOne('/api/memories/consolidate')
      .flush(
        { message: 'A memory consolidation is already running.' },
        { status: 409, statusText: 'Conflict' },
      );
    await stable();
    expect(text('memory-action-error')).toContain('already running');
  });

  it('edits a note and forgets one', async () => {
    await load({ notes: [ACTIVE] });
    el<HTMLButtonElement>('memory-edit')?.click();
    await stable();
    const input = el<HTMLTextAreaElement>(
      'memory-edit-input',
    ) as HTMLTextAreaElement;
    input.value = 'Anna: peanut allergy, EpiPen';
    input.dispatchEvent(new Event('input'));
    el<HTMLButtonElement>('memory-save')?.click();
    const patch = http.expectOne('/api/memories/n1');
    expect(patch.request.body).toEqual({
      text: 'Anna: peanut allergy, EpiPen',
    });
    patch.flush({ ...ACTIVE, text: 'Anna: peanut allergy, EpiPen' });
    await stable();
    http.expectOne('/api/memories').flush({ notes: [ACTIVE] });
    await stable();
    el<HTMLButtonElement>('memory-forget')?.click();
    const del = http.expectOne('/api/memories/n1');
    expect(del.request.method).toBe('DELETE');
    del.flush(null);
    await stable();
    http.expectOne('/api/memories').flush({ notes: [] });
    await stable();
    expect(el('memory-empty')).not.toBeNull();
  });

  it('shows what the server refused without changing the list', async () => {
    await load({ notes: [ACTIVE] });
    el<HTMLButtonElement>('memory-forget')?.click();
    http
      .expectOne('/api/memories/n1')
      .flush(
        { statusCode: 404, message: 'No memory note with the id n1' },
        { status: 404, statusText: 'Not Found' },
      );
    await stable();
    expect(text('memory-action-error')).toContain('No memory note');
    expect(all('memory-note')).toHaveLength(1);
  });

  it('searches notes and chats and links each hit to its chat', async () => {
    await load({ notes: [ACTIVE] });
    const input = el<HTMLInputElement>(
      'memory-search-input',
    ) as HTMLInputElement;
    input.value = 'allergy';
    input.dispatchEvent(new Event('input'));
    el<HTMLButtonElement>('memory-search')?.click();
    const req = http.expectOne((r) => r.url === '/api/memories');
    expect(req.request.params.get('q')).toBe('allergy');
    req.flush({
      notes: [ACTIVE],
      results: [
        {
          kind: 'message',
          id: 'm1',
          text: 'Anna is allergic to peanuts',
          date: iso(86_400_000 * 200),
          chatId: 'c1',
          messageId: 'm1',
          source: 'owner',
          score: 3.2,
        },
      ],
    });
    await stable();
    expect(all('memory-result')).toHaveLength(1);
    expect(
      el<HTMLAnchorElement>('memory-result-link')?.getAttribute('href'),
    ).toBe('/chat/c1#message-m1');
  });

  it("shows the last consolidation run's changes with their reasons, or why it was refused", async () => {
    await load({
      notes: [ACTIVE],
      lastRun: {
        id: 'r1',
        startedAt: iso(6 * 3_600_000),
        outcome: 'done',
        reason: null,
        notesBefore: 12,
        changes: [
          {
            noteId: 'n9',
            action: 'expired',
            reason: 'expired on 2026-10-01',
            prior: 'Parking permit in the glovebox',
            by: 'rules',
          },
          {
            noteId: 'n8',
            action: 'superseded',
            reason: 'contradicted by the newer note n3: moved',
            prior: 'We live in Berlin',
            after: 'We moved to Lisbon',
            relatedNoteId: 'n3',
            sources: [{ chatId: 'c1', messageId: 'm7' }],
            by: 'model',
          },
        ],
        modelOutcome: 'done',
        modelReason: null,
        error: null,
        trigger: 'schedule',
      },
    });
    expect(text('memory-last-run')).toContain('2 change(s) to 12 notes');
    const changes = all('memory-run-change').map((c) => c.textContent ?? '');
    expect(changes[0]).toContain('Dropped (expired)');
    expect(changes[0]).toContain('Before: “Parking permit in the glovebox”');
    expect(changes[1]).toContain('Superseded (model)');
    expect(changes[1]).toContain('After: “We moved to Lisbon”');
    expect(
      el<HTMLAnchorElement>('memory-run-source')?.getAttribute('href'),
    ).toBe('/chat/c1#message-m7');
  });

  it("says why the model's part was skipped or failed", async () => {
    await load({
      notes: [],
      lastRun: {
        id: 'r2',
        startedAt: iso(3_600_000),
        outcome: 'done',
        reason: null,
        notesBefore: 3,
        changes: [],
        modelOutcome: 'failed',
        modelReason: null,
        error: 'The model did not answer with JSON.',
        trigger: 'owner',
      },
    });
    expect(text('memory-run-model')).toContain(
      'nothing of it was applied: The model did not answer with JSON.',
    );
  });

  it('reloads when the notes change on the server', async () => {
    await load({ notes: [] });
    events.emit('memories.changed', {
      id: 'n1',
      change: 'created',
      by: 'ai',
      at: iso(0),
    });
    http.expectOne('/api/memories').flush({ notes: [ACTIVE] });
    await stable();
    expect(all('memory-note')).toHaveLength(1);
  });
});

describe('recentChanges', () => {
  it('lists the last day’s new notes and kept versions with their reasons, newest first', () => {
    const edited = note({
      history: [
        {
          text: 'old text',
          at: iso(2 * 3_600_000),
          reason: 'merged with a duplicate',
          by: 'consolidation',
        },
        {
          text: 'older',
          at: iso(3 * 86_400_000),
          reason: 'edited',
          by: 'owner',
        },
      ],
    });
    const changes = recentChanges([edited, PROPOSED], now);
    expect(changes.map((c) => c.reason)).toEqual([
      'proposed',
      'merged with a duplicate',
    ]);
  });
});
