import type { ActionEffect } from '@metatronos/shared-types';
import { CalendarActionsTool } from '../accounts/calendar/calendar-actions.tool';
import { EmailActionsTool } from '../accounts/email/email-actions.tool';
import type { AiTool } from '../ai-tools/ai-tool';
import { DbQueryTool } from '../ai-tools/core-tools/db-query.tool';
import { SaveMemoryTool } from '../ai-tools/core-tools/save-memory.tool';
import { ManageCronjobTool } from '../automations/jobs/manage-cronjob.tool';
import { ManagePulseTool } from '../automations/pulse/manage-pulse.tool';
import {
  TelegramListPermissionsTool,
  TelegramManagePermissionTool,
  TelegramReactTool,
  TelegramSendFileTool,
  TelegramSendVoiceTool,
} from '../telegram/telegram-tools';
import { UrlFetchTool } from '../url-fetch/url-fetch.tool';
import { WebSearchTool } from '../web-search/web-search.tool';
import {
  WhatsAppListPermissionsTool,
  WhatsAppManagePermissionTool,
  WhatsAppReadMessagesTool,
  WhatsAppSendMessageTool,
} from '../whatsapp/permissions/whatsapp-tools';
import { contactScopeProblem } from './contact-scope';
import { ToolTurn } from './tool-turn';

/** The declarations only: no dependency is touched, so each tool is built without its services. */
function bare<T>(Tool: new (...deps: never[]) => T): T {
  return new Tool(...(Array.from({ length: 5 }, () => null) as never[]));
}

const turn = () => new ToolTurn({ source: 'chat', runId: null });

function effectOf(
  tool: AiTool,
  args: Record<string, unknown>,
): ActionEffect | null {
  if (tool.grantsAccess) return 'grant';
  return tool.effect?.(args as never, turn()) ?? null;
}

describe('what each tool declares to the action policy', () => {
  const email = bare(EmailActionsTool);
  const calendar = bare(CalendarActionsTool);
  const cron = bare(ManageCronjobTool);
  const pulse = bare(ManagePulseTool);
  const db = bare(DbQueryTool);
  const table: Array<
    [string, AiTool, Record<string, unknown>, ActionEffect | null]
  > = [
    ['email send', email, { action: 'send' }, 'send'],
    ['email reply', email, { action: 'reply' }, 'send'],
    ['email move', email, { action: 'move' }, 'move'],
    ['email search', email, { action: 'search' }, null],
    ['email read', email, { action: 'read' }, null],
    ['email mark', email, { action: 'mark' }, null],
    ['calendar delete', calendar, { action: 'delete' }, 'delete'],
    ['calendar update', calendar, { action: 'update' }, 'delete'],
    ['calendar list', calendar, { action: 'list' }, null],
    [
      'whatsapp send',
      bare(WhatsAppSendMessageTool),
      { phone: '1', message: 'x' },
      'send',
    ],
    [
      'whatsapp permission',
      bare(WhatsAppManagePermissionTool),
      { action: 'revoke' },
      'grant',
    ],
    ['whatsapp read', bare(WhatsAppReadMessagesTool), {}, null],
    ['telegram file', bare(TelegramSendFileTool), { path: 'x' }, 'send'],
    ['telegram voice', bare(TelegramSendVoiceTool), { path: 'x' }, 'send'],
    ['telegram react', bare(TelegramReactTool), { emoji: '👍' }, null],
    [
      'telegram permission',
      bare(TelegramManagePermissionTool),
      { action: 'add' },
      'grant',
    ],
    ['cron create', cron, { action: 'create' }, 'schedule'],
    ['cron delete', cron, { action: 'delete' }, 'schedule'],
    ['cron list', cron, { action: 'list' }, null],
    ['pulse config', pulse, { action: 'update_config' }, 'schedule'],
    ['pulse notes', pulse, { action: 'update_notes' }, 'memory'],
    ['pulse get', pulse, { action: 'get_config' }, null],
    ['save_memory', bare(SaveMemoryTool), { memory: 'x' }, 'memory'],
    [
      'db_query cronjobs insert',
      db,
      { operation: 'insertOne', collection: 'cronjobs' },
      'schedule',
    ],
    [
      'db_query master update',
      db,
      { operation: 'updateOne', collection: 'master' },
      'memory',
    ],
    [
      'db_query cronjobs find',
      db,
      { operation: 'find', collection: 'cronjobs' },
      null,
    ],
    [
      'db_query ai_notes insert',
      db,
      { operation: 'insertOne', collection: 'ai_notes' },
      null,
    ],
    [
      'url_fetch POST',
      bare(UrlFetchTool),
      { url: 'https://a.example/', method: 'POST' },
      'fetch',
    ],
    [
      'url_fetch body',
      bare(UrlFetchTool),
      { url: 'https://a.example/', body: 'x' },
      'fetch',
    ],
    [
      'url_fetch new host',
      bare(UrlFetchTool),
      { url: 'https://a.example/' },
      'fetch',
    ],
    ['web_search', bare(WebSearchTool), { q: 'x' }, null],
  ];
  it.each(table)('%s → %s', (_label, tool, args, expected) => {
    expect(effectOf(tool, args)).toBe(expected);
  });

  it('url_fetch: a GET to a host the turn already fetched is not outward', () => {
    const tool = bare(UrlFetchTool);
    const t = turn();
    tool.taint({ url: 'https://A.example/page' }, '{"status":200}', t);
    expect(tool.effect({ url: 'https://a.example/other' }, t)).toBeNull();
    expect(tool.effect({ url: 'https://b.example/' }, t)).toBe('fetch');
  });

  // Per source of third-party content: the result marks the turn, in the owner's words.
  const sources: Array<
    [string, AiTool, Record<string, unknown>, string, string | null]
  > = [
    [
      'a web page',
      bare(UrlFetchTool),
      { url: 'https://news.example/a' },
      '{}',
      'a web page from news.example',
    ],
    [
      'a download',
      bare(UrlFetchTool),
      { url: 'https://x.example/f', download_path: 'f' },
      '{}',
      'a file downloaded from x.example',
    ],
    [
      'web search',
      bare(WebSearchTool),
      { q: 'weather' },
      '{}',
      'web search results for “weather”',
    ],
    [
      'an email read',
      email,
      { action: 'read', uid: 1 },
      '{"from":"ann@example.org","text":"hi"}',
      'an email from ann@example.org',
    ],
    [
      'an email search',
      email,
      { action: 'search' },
      '{"count":2,"messages":[]}',
      'email search results (senders and subjects)',
    ],
    [
      'an empty email search',
      email,
      { action: 'search' },
      '{"count":0,"messages":[]}',
      null,
    ],
    ['an email sent', email, { action: 'send' }, '{"sent":true}', null],
    [
      'calendar events',
      calendar,
      { action: 'list' },
      '{"events":[{"title":"x"}]}',
      'calendar events (invitations and shared calendars)',
    ],
    ['no calendar events', calendar, { action: 'list' }, '{"events":[]}', null],
    [
      'WhatsApp messages',
      bare(WhatsAppReadMessagesTool),
      { contact: '14155551234' },
      '{"messages":[{"text":"x"}]}',
      'WhatsApp messages of +14155551234',
    ],
    [
      'no WhatsApp messages',
      bare(WhatsAppReadMessagesTool),
      {},
      '{"messages":[]}',
      null,
    ],
  ];
  it.each(sources)('%s marks the turn', (_label, tool, args, result, text) => {
    const found = tool.taint?.(args as never, result, turn()) ?? null;
    expect(found?.text ?? null).toBe(text);
  });

  describe("a contact's turn reaches only that contact's chat", () => {
    const alice = new ToolTurn({
      source: 'auto-reply',
      runId: null,
      contact: { channel: 'telegram', address: '4242' },
    });
    it.each([
      [bare(TelegramReactTool), { emoji: '👍' }, false],
      [bare(TelegramReactTool), { emoji: '👍', chat_id: '4242' }, false],
      [bare(TelegramReactTool), { emoji: '👍', chat_id: 'tg:4242' }, false],
      [bare(TelegramReactTool), { emoji: '👍', chat_id: '777' }, true],
      [bare(TelegramReactTool), { emoji: '👍', chat_id: ' 0777 ' }, true],
      [bare(TelegramSendFileTool), { path: 'x', chat_id: '-100123' }, true],
      [bare(TelegramSendVoiceTool), { path: 'x', chat_id: '777' }, true],
      [bare(TelegramListPermissionsTool), {}, true],
      [bare(WhatsAppSendMessageTool), { phone: '4242', message: 'x' }, true],
      [bare(WhatsAppListPermissionsTool), {}, true],
    ] as Array<[AiTool, Record<string, unknown>, boolean]>)(
      '%#: %j refused %s',
      (tool, args, refused) => {
        expect(contactScopeProblem(tool, args, alice) !== null).toBe(refused);
      },
    );

    it('a channel tool that does not say where it acts is refused; other tools are not concerned', () => {
      const undeclared = { name: 'whatsapp_new_thing' } as AiTool;
      expect(contactScopeProblem(undeclared, {}, alice)).toBe(
        "whatsapp_new_thing cannot be used in a contact's turn",
      );
      expect(
        contactScopeProblem(bare(WebSearchTool), { q: 'x' }, alice),
      ).toBeNull();
      // Outside a contact's turn nothing is scoped.
      expect(
        contactScopeProblem(
          bare(TelegramReactTool),
          { emoji: '👍', chat_id: '777' },
          turn(),
        ),
      ).toBeNull();
    });
  });
});
