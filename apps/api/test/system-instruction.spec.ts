import {
  MEMORY_MAX_LENGTH,
  type SystemInstruction,
} from '@metatronos/shared-types';
import { Injectable } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import type TestAgent from 'supertest/lib/agent';
import { CombinedPromptBuilder } from '../src/system-instruction/combined-prompt.builder';
import {
  PromptSectionProvider,
  type PromptSection,
} from '../src/system-instruction/prompt-section';
import { createTestApp, type TestApp } from './support/test-app';
import { sharedTestDatabase } from './support/test-database';

describe('system instruction', () => {
  let t: TestApp;
  let owner: TestAgent;
  const settings = () =>
    t.app.get<Connection>(getConnectionToken()).collection('settings');
  const prompt = async (): Promise<string | null> =>
    (await owner.get('/api/system-instruction/prompt').expect(200)).body.prompt;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.owner();
    t.clock.set(new Date('2026-11-21T13:05:00Z'));
    await owner
      .patch('/api/settings')
      .send({ timezone: 'Europe/Paris' })
      .expect(200);
  });
  afterAll(() => t.close());

  it('answers the defaults: Metatron, empty memory, tools on, the built-in collections documented', async () => {
    const res = await owner.get('/api/system-instruction').expect(200);
    const instruction: SystemInstruction = res.body;
    expect(instruction.coreInstruction).toContain('Metatron');
    expect(instruction.coreInstruction).toContain('Personal Data Management');
    expect(instruction.memory).toBe('');
    expect(instruction.memoryEnabled).toBe(true);
    for (const name of ['master', 'contacts', 'schedule'])
      expect(instruction.dbSchema).toContain(name);
  });

  it("builds a new chat's prompt (default mode): core, memory, the tools with the other modes named, then the date in the owner zone", async () => {
    const text = (await prompt()) as string;
    const headings = [...text.matchAll(/^## .+$/gm)].map((m) => m[0]);
    expect(headings.slice(-3)).toEqual([
      '## Your Memory',
      '## Available Tools',
      '## Current Date & Time',
    ]);
    expect(text).toContain(
      'Saturday, 21 November 2026 at 14:05 (Europe/Paris, GMT+01:00)',
    );
    expect(text).toContain('## Your Memory\nNo memories stored yet.');
    expect(text).toMatch(/- \*\*save_memory\*\*: /);
    expect(text).toContain('- data: db_query, update_db_schema');
    expect(text).not.toMatch(/- \*\*db_query\*\*: /);
    expect(text.indexOf('\n\n---\n\n')).toBeGreaterThan(0);
  });

  it('adds the sections of a mode while the conversation is in it: the database in data, Pulse in automations (counters in the volatile tail)', async () => {
    const builder = t.app.get(CombinedPromptBuilder);
    const headings = async (mode: string) =>
      [
        ...(
          (await builder.buildCombinedPrompt({ source: 'chat', mode })) ?? ''
        ).matchAll(/^## .+$/gm),
      ].map((m) => m[0]);
    expect((await headings('data')).slice(-4)).toEqual([
      '## Your Memory',
      '## Your Database',
      '## Available Tools',
      '## Current Date & Time',
    ]);
    expect((await headings('automations')).slice(-5)).toEqual([
      '## Your Memory',
      '## Available Tools',
      '## Pulse Status',
      '## Pulse Counters',
      '## Current Date & Time',
    ]);
    const data = (await builder.buildCombinedPrompt({
      source: 'chat',
      mode: 'data',
    })) as string;
    expect(data).toMatch(/- \*\*db_query\*\*: /);
    expect(data).toMatch(/- \*\*update_db_schema\*\*: /);
  });

  it('lists sections contributed through the registry in order', () => {
    expect(t.app.get(CombinedPromptBuilder).sectionIds()).toEqual([
      'memory',
      'database',
      'tools',
      'pulse-status',
      'pulse-notes',
      'relax-mode',
      'whatsapp-permissions',
      'accounts',
      'pulse-counters',
      'memory-recall',
      'untrusted-content',
      'datetime',
    ]);
  });

  it('shows each audience exactly the sections written for it', () => {
    const builder = t.app.get(CombinedPromptBuilder);
    const ownerAndRuns = [
      'memory',
      'database',
      'tools',
      'pulse-status',
      'pulse-notes',
      'whatsapp-permissions',
      'accounts',
      'pulse-counters',
      'datetime',
    ];
    // Recalled notes and the relax mode's words are the owner's only: an unattended run does not get them.
    expect(builder.sectionIds('owner')).toEqual([
      ...ownerAndRuns.slice(0, 5),
      'relax-mode',
      ...ownerAndRuns.slice(5, -1),
      'memory-recall',
      'untrusted-content',
      'datetime',
    ]);
    // What marked a turn is told to every audience (it is in no one's words).
    expect(builder.sectionIds('unattended')).toEqual([
      ...ownerAndRuns.slice(0, -1),
      'untrusted-content',
      'datetime',
    ]);
    expect(builder.sectionIds('trusted-contact')).toEqual([
      'memory',
      'untrusted-content',
      'datetime',
    ]);
    expect(builder.sectionIds('untrusted-contact')).toEqual([
      'untrusted-content',
      'datetime',
    ]);
  });

  it('renders a contact prompt from the sections that contact may see, untrusted when nobody says', async () => {
    const builder = t.app.get(CombinedPromptBuilder);
    const headings = (text: string | null) =>
      (text ?? '').split('\n').filter((line) => line.startsWith('## '));
    expect(
      headings(await builder.buildCombinedPrompt({ source: 'auto-reply' })),
    ).toEqual(['## Current Date & Time']);
    expect(
      headings(
        await builder.buildCombinedPrompt({
          source: 'auto-reply',
          audience: 'trusted-contact',
        }),
      ),
    ).toEqual(['## Your Memory', '## Current Date & Time']);
    const cron = headings(
      await builder.buildCombinedPrompt({
        source: 'cron',
        mode: 'automations',
      }),
    );
    expect(cron).toEqual(
      headings(
        await builder.buildCombinedPrompt({
          source: 'chat',
          mode: 'automations',
        }),
      ),
    );
    expect(cron).toEqual(
      expect.arrayContaining([
        '## Your Memory',
        '## Available Tools',
        '## Pulse Status',
        '## Pulse Counters',
        '## Current Date & Time',
      ]),
    );
  });

  it('shows a section that names no audience to the owner only', async () => {
    @PromptSectionProvider()
    @Injectable()
    class OwnerNotesSection implements PromptSection {
      readonly id = 'owner-notes';
      readonly order = 99;
      render() {
        return '## Owner Notes\nThe garage code is 4711.';
      }
    }
    const other = await createTestApp({
      providers: [{ provide: OwnerNotesSection, useClass: OwnerNotesSection }],
    });
    try {
      const builder = other.app.get(CombinedPromptBuilder);
      expect(builder.sectionIds('owner')).toContain('owner-notes');
      for (const audience of [
        'unattended',
        'trusted-contact',
        'untrusted-contact',
      ] as const)
        expect(builder.sectionIds(audience)).not.toContain('owner-notes');
      expect(await builder.buildCombinedPrompt({ source: 'chat' })).toContain(
        'The garage code is 4711.',
      );
      for (const source of ['cron', 'pulse', 'auto-reply'] as const)
        expect(await builder.buildCombinedPrompt({ source })).not.toContain(
          'Owner Notes',
        );
      expect(
        await builder.buildCombinedPrompt({
          source: 'auto-reply',
          audience: 'trusted-contact',
        }),
      ).not.toContain('Owner Notes');
    } finally {
      await other.close();
    }
  });

  it('saves edits, stamps updatedAt and shows them in the prompt', async () => {
    t.clock.advance(60_000);
    const res = await owner
      .patch('/api/system-instruction')
      .send({
        coreInstruction: 'You are Metatron, terse.',
        memory: '- Owner: Ada',
      })
      .expect(200);
    expect(res.body).toMatchObject({
      coreInstruction: 'You are Metatron, terse.',
      memory: '- Owner: Ada',
      memoryEnabled: true,
    });
    expect(res.body.updatedAt).toBe(t.clock.now().toISOString());
    const text = (await prompt()) as string;
    expect(
      text.startsWith(
        'You are Metatron, terse.\n\n---\n\n## Your Memory\n- Owner: Ada',
      ),
    ).toBe(true);
    expect(text).toContain('## Your Memory\n- Owner: Ada');
  });

  it('answers the default core instruction for a reset preview after an edit, and writes nothing', async () => {
    const before = (await owner.get('/api/system-instruction').expect(200))
      .body as SystemInstruction;
    expect(before.coreInstruction).toBe('You are Metatron, terse.');
    const res = await owner.get('/api/system-instruction/default').expect(200);
    expect(Object.keys(res.body)).toEqual(['coreInstruction']);
    expect(res.body.coreInstruction).toContain('Personal Data Management');
    expect(res.body.coreInstruction).not.toBe(before.coreInstruction);
    expect(
      (await owner.get('/api/system-instruction').expect(200)).body,
    ).toEqual(before);
  });

  it('refuses a memory over 4,000 characters and keeps the old one', async () => {
    const res = await owner
      .patch('/api/system-instruction')
      .send({ memory: 'x'.repeat(MEMORY_MAX_LENGTH + 1) })
      .expect(400);
    expect(JSON.stringify(res.body.message)).toContain(
      `memory must be at most ${MEMORY_MAX_LENGTH} characters`,
    );
    await owner
      .patch('/api/system-instruction')
      .send({ memoryEnabled: 'yes' })
      .expect(400);
    expect(
      (await owner.get('/api/system-instruction').expect(200)).body.memory,
    ).toBe('- Owner: Ada');
    await owner
      .patch('/api/system-instruction')
      .send({ memory: 'y'.repeat(MEMORY_MAX_LENGTH) })
      .expect(200);
  });

  it('leaves the tools out of the prompt when memory is off, and sends no prompt for a blank core', async () => {
    await owner
      .patch('/api/system-instruction')
      .send({ memoryEnabled: false })
      .expect(200);
    expect(await prompt()).not.toContain('## Available Tools');
    await owner
      .patch('/api/system-instruction')
      .send({ coreInstruction: '  \n ' })
      .expect(200);
    expect(await prompt()).toBeNull();
  });

  it('backfills an empty stored database documentation with the default one', async () => {
    await settings().updateOne(
      { _id: 'system_instruction' as never },
      { $set: { dbSchema: '' } },
    );
    const fresh = await createTestApp({
      database: sharedTestDatabase(
        t.app.get<Connection>(getConnectionToken()).name,
      ),
    });
    try {
      const res = await (
        await fresh
          .http()
          .post('/api/auth/login')
          .send({ password: 'correct horse battery' })
          .expect(200)
      ).headers;
      const cookie = String(res['set-cookie']).split(';')[0];
      const instruction: SystemInstruction = (
        await fresh
          .http()
          .get('/api/system-instruction')
          .set('Cookie', cookie)
          .expect(200)
      ).body;
      expect(instruction.dbSchema).toContain('contacts');
    } finally {
      await fresh.close();
    }
  });

  it('needs the owner session', async () => {
    await t.http().get('/api/system-instruction').expect(401);
    await t.http().get('/api/system-instruction/prompt').expect(401);
    await t.http().get('/api/system-instruction/default').expect(401);
  });
});
