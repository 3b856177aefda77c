/**
 * A local stand-in for Telegram's Bot API, for grammY's `client.apiRoot`.
 *
 * One HTTP server on 127.0.0.1 answers `POST|GET /bot<token>/<method>` in the Bot API's
 * envelope (`{ ok: true, result }` or `{ ok: false, error_code, description, parameters }`):
 * `getMe`, `getUpdates` (long polling: held until an update arrives or `timeout` seconds
 * pass; `offset` acknowledges everything before it), `sendMessage`, `setMessageReaction`,
 * `deleteWebhook`. Tests push inbound messages with `receive()`, read what the bot sent
 * in `sent`, and script failures: a refused token (401), rate limits (429 with
 * `retry_after`) and server errors.
 *
 * Plain Node (no test framework imports): used by Jest specs and Playwright alike.
 */
import {
  createServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeTelegramChat {
  id: number;
  type: 'private' | 'group' | 'supergroup';
  title?: string;
  first_name?: string;
  username?: string;
}

export interface FakeTelegramUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  username?: string;
}

/** What a test sends to the bot. */
export interface FakeInbound {
  chat: FakeTelegramChat;
  from?: FakeTelegramUser;
  text: string;
  /** Mention the bot (adds `@<bot username> ` and a mention entity). */
  mention?: boolean;
  /** The id of one of the bot's messages this one answers. */
  replyTo?: number;
  /** Seconds since the epoch (default: now). */
  date?: number;
  /** A file the message carries; `text` becomes its caption. Served by `getFile` and `/file/bot<token>/…`. */
  file?: {
    kind: 'photo' | 'document' | 'voice';
    bytes: Buffer;
    /** Documents: the file name. */
    name?: string;
  };
}

/** A call the bot made, as recorded. */
export interface FakeTelegramCall {
  method: string;
  token: string;
  params: Record<string, unknown>;
}

/** A scripted failure for the next call(s) of a method. */
export interface FakeTelegramFailure {
  method: string;
  status: number;
  description: string;
  retryAfter?: number;
  /** How many calls fail (default 1). */
  times?: number;
}

export interface FakeTelegramServer {
  /** `http://127.0.0.1:<port>`: the bot's apiRoot. */
  url: string;
  /** Tokens the server accepts. Others get 401 Unauthorized. */
  readonly tokens: Set<string>;
  readonly bot: FakeTelegramUser;
  /** Every call, in order. */
  readonly calls: FakeTelegramCall[];
  /** The `sendMessage` calls that succeeded: `{ chat_id, text, … }`. */
  readonly sent: Array<Record<string, unknown> & { message_id: number }>;
  /** Files the bot uploaded (`sendDocument`, `sendVoice`): the chat, the file name and the size of the request. */
  readonly uploads: Array<{
    method: string;
    chatId: string | null;
    filename: string | null;
    bytes: number;
    /** The multipart body as received (latin1), to check what was uploaded. */
    raw: string;
  }>;
  /** `setMessageReaction` calls. */
  readonly reactions: Array<Record<string, unknown>>;
  /** Queues an inbound message as an update; returns its update_id and message_id. */
  receive(message: FakeInbound): { updateId: number; messageId: number };
  /** Makes the next call(s) of a method fail. */
  fail(failure: FakeTelegramFailure): void;
  /** Updates not yet acknowledged by an `offset`. */
  pending(): number;
  /** The highest offset the bot has acknowledged with. */
  readonly acknowledged: number;
  /** Waits until `predicate()` holds (polls every 10 ms), or rejects after `ms`. */
  waitFor(predicate: () => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

interface Update {
  update_id: number;
  message: Record<string, unknown>;
}

export async function startFakeTelegram(
  options: { tokens?: string[]; username?: string } = {},
): Promise<FakeTelegramServer> {
  const tokens = new Set(
    options.tokens ?? ['123456:TEST-token-abcdefghijklmnop'],
  );
  const bot: FakeTelegramUser = {
    id: 7000001,
    is_bot: true,
    first_name: 'Metatron',
    username: options.username ?? 'metatron_test_bot',
  };
  const calls: FakeTelegramCall[] = [];
  const sent: FakeTelegramServer['sent'] = [];
  const uploads: FakeTelegramServer['uploads'] = [];
  const reactions: FakeTelegramServer['reactions'] = [];
  const failures: FakeTelegramFailure[] = [];
  let updates: Update[] = [];
  let nextUpdateId = 500;
  let nextMessageId = 1;
  let acknowledged = 0;
  const waiters = new Set<() => void>();
  /** file_id → its bytes and path. */
  const files = new Map<string, { path: string; bytes: Buffer }>();
  let nextFileId = 1;
  const sockets = new Set<Socket>();

  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };

  const answer = (
    res: ServerResponse,
    status: number,
    body: Record<string, unknown>,
  ) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const readParams = async (
    req: IncomingMessage,
    url: URL,
  ): Promise<Record<string, unknown>> => {
    const params: Record<string, unknown> = Object.fromEntries(
      url.searchParams,
    );
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    if (!raw) return params;
    const type = String(req.headers['content-type'] ?? '');
    if (type.includes('application/json'))
      Object.assign(params, JSON.parse(raw) as Record<string, unknown>);
    else if (type.includes('x-www-form-urlencoded'))
      Object.assign(params, Object.fromEntries(new URLSearchParams(raw)));
    else params['_raw'] = raw;
    return params;
  };

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
      if (download) {
        const file = [...files.values()].find((f) => f.path === download[2]);
        if (!tokens.has(download[1]) || !file) {
          res.writeHead(404);
          res.end();
          return;
        }
        res.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-length': String(file.bytes.length),
        });
        res.end(file.bytes);
        return;
      }
      const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
      if (!match)
        return answer(res, 404, {
          ok: false,
          error_code: 404,
          description: 'Not Found',
        });
      const [, token, method] = match;
      const params = await readParams(req, url);
      calls.push({ method, token, params });
      if (!tokens.has(token))
        return answer(res, 401, {
          ok: false,
          error_code: 401,
          description: 'Unauthorized',
        });
      const failure = failures.find((f) => f.method === method);
      if (failure) {
        failure.times = (failure.times ?? 1) - 1;
        if (failure.times <= 0) failures.splice(failures.indexOf(failure), 1);
        return answer(res, failure.status, {
          ok: false,
          error_code: failure.status,
          description: failure.description,
          ...(failure.retryAfter !== undefined
            ? { parameters: { retry_after: failure.retryAfter } }
            : {}),
        });
      }
      switch (method) {
        case 'getMe':
          return answer(res, 200, { ok: true, result: bot });
        case 'deleteWebhook':
          return answer(res, 200, { ok: true, result: true });
        case 'getUpdates': {
          const offset = Number(params['offset'] ?? 0);
          if (offset > 0) {
            acknowledged = Math.max(acknowledged, offset);
            updates = updates.filter((u) => u.update_id >= offset);
          }
          const timeoutS = Math.min(Number(params['timeout'] ?? 0), 50);
          const ready = () => updates.length > 0;
          if (!ready() && timeoutS > 0) {
            await new Promise<void>((resolve) => {
              const done = () => {
                clearTimeout(timer);
                waiters.delete(done);
                resolve();
              };
              const timer = setTimeout(done, timeoutS * 1000);
              waiters.add(done);
              req.once('close', done);
            });
          }
          const limit = Number(params['limit'] ?? 100);
          return answer(res, 200, {
            ok: true,
            result: updates.slice(0, limit),
          });
        }
        case 'sendMessage': {
          const message = {
            message_id: nextMessageId++,
            ...params,
          };
          sent.push(message);
          return answer(res, 200, {
            ok: true,
            result: {
              message_id: message.message_id,
              date: Math.floor(Date.now() / 1000),
              chat: { id: Number(params['chat_id']), type: 'private' },
              from: bot,
              text: params['text'],
            },
          });
        }
        case 'getFile': {
          const fileId = String(params['file_id'] ?? '');
          const file = files.get(fileId);
          if (!file)
            return answer(res, 400, {
              ok: false,
              error_code: 400,
              description: 'Bad Request: invalid file_id',
            });
          return answer(res, 200, {
            ok: true,
            result: {
              file_id: fileId,
              file_unique_id: `u${fileId}`,
              file_size: file.bytes.length,
              file_path: file.path,
            },
          });
        }
        case 'setMessageReaction':
          reactions.push(params);
          return answer(res, 200, { ok: true, result: true });
        case 'sendDocument':
        case 'sendVoice': {
          const raw = String(params['_raw'] ?? '');
          const field = (name: string) =>
            new RegExp(`name="${name}"\\r\\n\\r\\n([^\\r]*)`).exec(raw)?.[1] ??
            null;
          uploads.push({
            method,
            chatId: field('chat_id') ?? (params['chat_id'] as string) ?? null,
            filename: /filename="?([^";\r\n]*)"?/.exec(raw)?.[1] ?? null,
            bytes: raw.length,
            raw,
          });
          return answer(res, 200, {
            ok: true,
            result: {
              message_id: nextMessageId++,
              date: Math.floor(Date.now() / 1000),
              chat: { id: Number(field('chat_id')), type: 'private' },
            },
          });
        }
        default:
          return answer(res, 404, {
            ok: false,
            error_code: 404,
            description: `Not Found: method ${method} is not faked`,
          });
      }
    })().catch((error: unknown) => {
      if (!res.headersSent)
        answer(res, 500, {
          ok: false,
          error_code: 500,
          description: (error as Error).message,
        });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    tokens,
    bot,
    calls,
    sent,
    uploads,
    reactions,
    get acknowledged() {
      return acknowledged;
    },
    receive(inbound) {
      const messageId = nextMessageId++;
      const from = inbound.from ?? {
        id: inbound.chat.id,
        is_bot: false,
        first_name: inbound.chat.first_name ?? 'Someone',
        username: inbound.chat.username,
      };
      const mention = `@${bot.username} `;
      const text = inbound.mention ? mention + inbound.text : inbound.text;
      const message: Record<string, unknown> = {
        message_id: messageId,
        date: inbound.date ?? Math.floor(Date.now() / 1000),
        chat: inbound.chat,
        from,
        text,
      };
      if (inbound.file) {
        const fileId = `file-${nextFileId++}`;
        const folder = {
          photo: 'photos',
          document: 'documents',
          voice: 'voice',
        }[inbound.file.kind];
        files.set(fileId, {
          path: `${folder}/${fileId}`,
          bytes: inbound.file.bytes,
        });
        const size = inbound.file.bytes.length;
        delete message['text'];
        if (text) message['caption'] = text;
        if (inbound.file.kind === 'photo')
          message['photo'] = [
            {
              file_id: `${fileId}-small`,
              file_unique_id: 's',
              width: 90,
              height: 90,
            },
            {
              file_id: fileId,
              file_unique_id: 'l',
              width: 800,
              height: 600,
              file_size: size,
            },
          ];
        else if (inbound.file.kind === 'document')
          message['document'] = {
            file_id: fileId,
            file_unique_id: 'd',
            file_name: inbound.file.name ?? 'file.bin',
            file_size: size,
          };
        else
          message['voice'] = {
            file_id: fileId,
            file_unique_id: 'v',
            duration: 3,
            mime_type: 'audio/ogg',
            file_size: size,
          };
      }
      if (inbound.mention)
        message['entities'] = [
          { type: 'mention', offset: 0, length: mention.length - 1 },
        ];
      if (inbound.replyTo !== undefined)
        message['reply_to_message'] = {
          message_id: inbound.replyTo,
          date: message['date'],
          chat: inbound.chat,
          from: bot,
          text: '…',
        };
      const updateId = nextUpdateId++;
      updates.push({ update_id: updateId, message });
      wake();
      return { updateId, messageId };
    },
    fail(failure) {
      failures.push({ ...failure });
    },
    pending: () => updates.length,
    async waitFor(predicate, ms = 15_000) {
      const deadline = Date.now() + ms;
      while (!predicate()) {
        if (Date.now() > deadline)
          throw new Error('fake Telegram: condition not met in time');
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        wake();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
