import type { HttpTestingController } from '@angular/common/http/testing';
import { type ComponentFixture, TestBed } from '@angular/core/testing';
import {
  MEMORY_MAX_LENGTH,
  type SystemInstruction,
} from '@metatronos/shared-types';
import { setUpApiTest, tearDownApiTest } from '../testing/api-test';
import type { FakeEventStream } from '../testing/fake-event-stream';
import { InstructionPage } from './instruction-page';
import { lineDiff } from './line-diff';

const INSTRUCTION: SystemInstruction = {
  coreInstruction: 'You are Metatron.',
  memory: 'Owner likes tea.',
  memoryEnabled: true,
  dbSchema: '# contacts\n- name',
  updatedAt: '2026-01-01T10:00:00.000Z',
};
const PROMPT = 'You are Metatron.\n\n## Memory\nOwner likes tea.';

describe('InstructionPage', () => {
  let fixture: ComponentFixture<InstructionPage>;
  let http: HttpTestingController;
  let events: FakeEventStream;

  const root = () => fixture.nativeElement as HTMLElement;
  const el = <T extends HTMLElement = HTMLElement>(testId: string) =>
    root().querySelector<T>(`[data-testid="${testId}"]`);
  const text = (testId: string) => el(testId)?.textContent?.trim();
  const saveButton = () =>
    el<HTMLButtonElement>('save-instruction') as HTMLButtonElement;
  const stable = () => fixture.whenStable();

  function type(testId: string, value: string): void {
    const field = el<HTMLTextAreaElement>(testId) as HTMLTextAreaElement;
    field.value = value;
    field.dispatchEvent(new Event('input'));
  }

  async function load(
    instruction = INSTRUCTION,
    prompt: string | null = PROMPT,
  ): Promise<void> {
    fixture = TestBed.createComponent(InstructionPage);
    await stable();
    http.expectOne('/api/system-instruction').flush(instruction);
    http.expectOne('/api/system-instruction/prompt').flush({ prompt });
    await stable();
  }

  beforeEach(() => {
    ({ http, events } = setUpApiTest(InstructionPage));
  });

  afterEach(() => {
    tearDownApiTest(http);
  });

  it("?chat= previews that chat's prompt and names the mark its newest reply ended with", async () => {
    fixture = TestBed.createComponent(InstructionPage);
    fixture.componentRef.setInput('chat', 'c1');
    await stable();
    http.expectOne('/api/system-instruction').flush(INSTRUCTION);
    http.expectNone('/api/system-instruction/prompt');
    http.expectOne('/api/chats/c1/prompt').flush({
      chatId: 'c1',
      mode: 'default',
      prompt: 'You are Metatron.\n\n## Third-party content in this turn',
      taint: [
        {
          by: 'url_fetch',
          text: 'a web page from example.org',
          at: '2026-01-01T10:00:00.000Z',
        },
      ],
    });
    await stable();
    expect(text('prompt-preview')).toContain(
      '## Third-party content in this turn',
    );
    expect(text('prompt-for-chat')).toContain('“default”');
    expect(text('prompt-taint')).toContain(
      'read third-party content: a web page from example.org',
    );
  });

  it('a new chat preview names no mark', async () => {
    await load();
    expect(el('prompt-for-chat')).toBeNull();
    expect(el('prompt-taint')).toBeNull();
  });

  it('fills the editors and shows the prompt verbatim', async () => {
    await load();
    expect(el<HTMLTextAreaElement>('core-instruction-input')?.value).toBe(
      'You are Metatron.',
    );
    expect(el<HTMLTextAreaElement>('memory-input')?.value).toBe(
      'Owner likes tea.',
    );
    expect(el<HTMLTextAreaElement>('db-schema-input')?.value).toBe(
      '# contacts\n- name',
    );
    expect(
      el('memory-enabled-toggle')
        ?.querySelector('button')
        ?.getAttribute('aria-checked'),
    ).toBe('true');
    expect(text('memory-counter')).toBe(`16 / ${MEMORY_MAX_LENGTH}`);
    const preview = el('prompt-preview');
    expect(preview?.tagName).toBe('PRE');
    expect(preview?.textContent).toBe(PROMPT);
  });

  it('says when there is no system prompt', async () => {
    await load({ ...INSTRUCTION, coreInstruction: '' }, null);
    expect(text('prompt-preview')).toBe(
      'No system prompt: the core instruction is blank.',
    );
  });

  it('enables Save only with changes, marks them unsaved, and sends only what changed', async () => {
    await load();
    expect(saveButton().disabled).toBe(true);
    expect(el('unsaved-indicator')).toBeNull();

    type('core-instruction-input', 'You are Metatron, be brief.');
    await stable();
    expect(text('unsaved-indicator')).toContain('Unsaved changes');
    expect(saveButton().disabled).toBe(false);

    // Typing the old text back means nothing changed.
    type('core-instruction-input', 'You are Metatron.');
    await stable();
    expect(saveButton().disabled).toBe(true);

    type('core-instruction-input', 'Be brief.');
    el('memory-enabled-toggle')?.querySelector('button')?.click();
    await stable();
    expect(text('memory-enabled-help')).toContain('no tools');
    saveButton().click();
    await stable();
    const req = http.expectOne('/api/system-instruction');
    expect(req.request.method).toBe('PATCH');
    expect(req.request.body).toEqual({
      coreInstruction: 'Be brief.',
      memoryEnabled: false,
    });
    req.flush({
      ...INSTRUCTION,
      coreInstruction: 'Be brief.',
      memoryEnabled: false,
      updatedAt: '2026-01-01T11:00:00.000Z',
    });
    await stable();

    http
      .expectOne('/api/system-instruction/prompt')
      .flush({ prompt: 'Be brief.' });
    await stable();
    expect(text('prompt-preview')).toBe('Be brief.');
    expect(el('unsaved-indicator')).toBeNull();
    expect(saveButton().disabled).toBe(true);
    expect(
      document.querySelector('mat-snack-bar-container')?.textContent,
    ).toContain('System instruction saved.');

    // The server's event about our own save changes nothing.
    events.emit('system-instruction.updated', {
      updatedAt: '2026-01-01T11:00:00.000Z',
      by: 'owner',
    });
    await stable();
    http.expectNone('/api/system-instruction');
    http.expectNone('/api/system-instruction/prompt');
  });

  it('counts the memory live, turns red and blocks Save when it is too long', async () => {
    await load();
    type('memory-input', 'x'.repeat(MEMORY_MAX_LENGTH));
    await stable();
    expect(text('memory-counter')).toBe(
      `${MEMORY_MAX_LENGTH} / ${MEMORY_MAX_LENGTH}`,
    );
    expect(el('memory-counter')?.classList).not.toContain('over');
    expect(el('memory-input')?.getAttribute('aria-invalid')).toBe('false');
    expect(saveButton().disabled).toBe(false);

    type('memory-input', 'x'.repeat(MEMORY_MAX_LENGTH + 3));
    await stable();
    expect(text('memory-counter')).toBe(
      `${MEMORY_MAX_LENGTH + 3} / ${MEMORY_MAX_LENGTH}`,
    );
    expect(el('memory-counter')?.classList).toContain('over');
    expect(el('memory-input')?.getAttribute('aria-invalid')).toBe('true');
    expect(el('memory-input')?.closest('mat-form-field')?.classList).toContain(
      'mat-form-field-invalid',
    );
    expect(text('memory-too-long')).toContain('3 characters too long');
    expect(saveButton().disabled).toBe(true);
  });

  it('shows the 400 message of a refused save and keeps the edits', async () => {
    await load();
    type('db-schema-input', '# broken');
    await stable();
    saveButton().click();
    await stable();
    http.expectOne('/api/system-instruction').flush(
      {
        statusCode: 400,
        message: ['dbSchema must be shorter than 20000 characters'],
        error: 'Bad Request',
      },
      { status: 400, statusText: 'Bad Request' },
    );
    await stable();
    expect(text('instruction-error')).toBe(
      'dbSchema must be shorter than 20000 characters',
    );
    expect(el<HTMLTextAreaElement>('db-schema-input')?.value).toBe('# broken');
    expect(el('unsaved-indicator')).not.toBeNull();
  });

  it('discards edits back to the saved values', async () => {
    await load();
    type('memory-input', 'scratch');
    await stable();
    el('discard-instruction')?.click();
    await stable();
    expect(el<HTMLTextAreaElement>('memory-input')?.value).toBe(
      'Owner likes tea.',
    );
    expect(saveButton().disabled).toBe(true);
  });

  it('follows the AI updating its memory when there are no edits', async () => {
    await load();
    events.emit('system-instruction.updated', {
      updatedAt: '2026-01-01T12:00:00.000Z',
      by: 'ai',
    });
    await stable();
    http.expectOne('/api/system-instruction').flush({
      ...INSTRUCTION,
      memory: 'Owner likes green tea.',
      updatedAt: '2026-01-01T12:00:00.000Z',
    });
    http
      .expectOne('/api/system-instruction/prompt')
      .flush({ prompt: 'updated prompt' });
    await stable();
    expect(el<HTMLTextAreaElement>('memory-input')?.value).toBe(
      'Owner likes green tea.',
    );
    expect(text('prompt-preview')).toBe('updated prompt');
    expect(el('instruction-changed-elsewhere')).toBeNull();
  });

  it('does not clobber unsaved edits when the AI updates its memory, and offers a reload', async () => {
    await load();
    type('core-instruction-input', 'my draft');
    await stable();
    events.emit('system-instruction.updated', {
      updatedAt: '2026-01-01T12:00:00.000Z',
      by: 'ai',
    });
    await stable();
    http
      .expectOne('/api/system-instruction/prompt')
      .flush({ prompt: 'new prompt' });
    await stable();
    http.expectNone('/api/system-instruction');
    expect(text('instruction-changed-elsewhere')).toContain(
      'Metatron updated its memory',
    );
    expect(el<HTMLTextAreaElement>('core-instruction-input')?.value).toBe(
      'my draft',
    );

    el('reload-instruction')?.click();
    await stable();
    http.expectOne('/api/system-instruction').flush({
      ...INSTRUCTION,
      memory: 'new memory',
      updatedAt: '2026-01-01T12:00:00.000Z',
    });
    await stable();
    expect(el<HTMLTextAreaElement>('core-instruction-input')?.value).toBe(
      'You are Metatron.',
    );
    expect(el<HTMLTextAreaElement>('memory-input')?.value).toBe('new memory');
    expect(el('instruction-changed-elsewhere')).toBeNull();
  });

  it('shows a load error with Retry', async () => {
    fixture = TestBed.createComponent(InstructionPage);
    await stable();
    http
      .expectOne('/api/system-instruction')
      .flush(
        { statusCode: 500, message: 'Boom' },
        { status: 500, statusText: 'Error' },
      );
    http.expectOne('/api/system-instruction/prompt').flush({ prompt: null });
    await stable();
    expect(text('api-error')).toContain("Couldn't load the system instruction");
    expect(el('memory-input')).toBeNull();
    el('api-error-retry')?.click();
    await stable();
    http.expectOne('/api/system-instruction').flush(INSTRUCTION);
    await stable();
    expect(el('api-error')).toBeNull();
    expect(el<HTMLTextAreaElement>('memory-input')?.value).toBe(
      'Owner likes tea.',
    );
  });

  it('previews a reset to default as a line diff from the editor, and on confirm puts the default in the editor unsaved', async () => {
    await load({
      ...INSTRUCTION,
      coreInstruction: 'You are Metatron.\nBe terse.',
    });
    el('reset-instruction')?.click();
    await stable();
    http
      .expectOne('/api/system-instruction/default')
      .flush({ coreInstruction: 'You are Metatron.\nAct on your own.' });
    await stable();
    const lines = Array.from(
      root().querySelectorAll<HTMLElement>(
        '[data-testid="reset-diff"] .diff-line',
      ),
    ).map((line) => [line.dataset['kind'], line.textContent?.trim()]);
    expect(lines).toEqual([
      ['same', 'You are Metatron.'],
      ['removed', '− Be terse.'],
      ['added', '+ Act on your own.'],
    ]);
    // Nothing is written by previewing.
    http.expectNone('/api/system-instruction');
    expect(el('unsaved-indicator')).toBeNull();

    el('reset-confirm')?.click();
    await stable();
    expect(el('reset-preview')).toBeNull();
    expect(el<HTMLTextAreaElement>('core-instruction-input')?.value).toBe(
      'You are Metatron.\nAct on your own.',
    );
    expect(el('unsaved-indicator')).not.toBeNull();
    saveButton().click();
    await stable();
    const req = http.expectOne('/api/system-instruction');
    expect(req.request.body).toEqual({
      coreInstruction: 'You are Metatron.\nAct on your own.',
    });
    req.flush({
      ...INSTRUCTION,
      coreInstruction: 'You are Metatron.\nAct on your own.',
      updatedAt: '2026-01-01T11:00:00.000Z',
    });
    await stable();
    http.expectOne('/api/system-instruction/prompt').flush({ prompt: 'x' });
  });

  it('says when the instruction already is the default, and Cancel leaves the editor alone', async () => {
    await load();
    type('core-instruction-input', 'draft');
    await stable();
    el('reset-instruction')?.click();
    await stable();
    http
      .expectOne('/api/system-instruction/default')
      .flush({ coreInstruction: 'draft' });
    await stable();
    expect(text('reset-nothing')).toContain('already the default');
    expect(el('reset-confirm')).toBeNull();
    el('reset-cancel')?.click();
    await stable();
    expect(el('reset-preview')).toBeNull();
    expect(el<HTMLTextAreaElement>('core-instruction-input')?.value).toBe(
      'draft',
    );
  });

  it('diffs lines: kept, removed and added, in order', () => {
    expect(lineDiff('a\nb\nc', 'a\nc\nd')).toEqual([
      { kind: 'same', text: 'a' },
      { kind: 'removed', text: 'b' },
      { kind: 'same', text: 'c' },
      { kind: 'added', text: 'd' },
    ]);
    expect(lineDiff('', 'x')).toEqual([{ kind: 'added', text: 'x' }]);
  });
});
