import { Injectable } from '@nestjs/common';
import type { ToolTurn } from '../actions/tool-turn';
import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { addAbortSignal, type Readable } from 'node:stream';
import { z } from 'zod';
import {
  AiToolProvider,
  toolError,
  type AiTool,
  type AiToolContext,
} from '../ai-tools/ai-tool';
import {
  FileAccessError,
  writeChunks,
  type ContainedDir,
} from '../files/contained-file';
import { FileDirs, type ResolvedFilePath } from '../files/file-dirs';
import { KnownSecrets } from '../secrets/known-secrets';
import {
  StreamingSecretRedactor,
  type SecretRedactor,
} from '../secrets/secret-redaction';
import type { StoredAuthProfile } from '../settings/url-fetch-settings';
import { checkRequestHeaders } from './request-headers';
import {
  decodeText,
  htmlToReadableText,
  isHtml,
  isTextual,
} from './response-text';
import {
  matchesUrlPrefix,
  UrlFetcher,
  UrlFetchError,
  type FetchMethod,
} from './url-fetcher';

const KIB = 1024;
const MIB = 1024 * KIB;
export const URL_FETCH_INLINE_MAX_BYTES = 512 * KIB;
export const URL_FETCH_DOWNLOAD_MAX_BYTES = 100 * MIB;
export const URL_FETCH_DEFAULT_TIMEOUT_SECONDS = 30;
export const URL_FETCH_MAX_TIMEOUT_SECONDS = 120;
const BODY_MAX_BYTES = 512 * KIB;

const URL_FETCH_ARGS = z.object({
  url: z.string().max(4000).describe('http(s) URL'),
  method: z
    .enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
    .optional()
    .describe('Default GET'),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      'Only Accept, Content-Type, User-Agent, If-None-Match, If-Modified-Since, Range',
    ),
  body: z
    .unknown()
    .optional()
    .describe('POST/PUT/PATCH body: a string, or JSON'),
  auth_profile: z
    .string()
    .max(40)
    .optional()
    .describe('Id of an auth profile the owner set up (adds its credentials)'),
  download_path: z
    .string()
    .max(1000)
    .optional()
    .describe(
      'Save the body to file_cache_dir/<path> (up to 100 MiB) instead of returning it',
    ),
  timeout_seconds: z
    .number()
    .min(1)
    .max(URL_FETCH_MAX_TIMEOUT_SECONDS)
    .optional()
    .describe(`Default ${URL_FETCH_DEFAULT_TIMEOUT_SECONDS}`),
  max_bytes: z
    .int()
    .min(1)
    .max(URL_FETCH_DOWNLOAD_MAX_BYTES)
    .optional()
    .describe('Default 524288 inline (the most), 100 MiB for a download'),
});

type UrlFetchArgs = z.output<typeof URL_FETCH_ARGS>;

/**
 * `url_fetch`: HTTP(S) for the model behind the address guard (see UrlFetcher).
 * Credentials never come from the model: an auth profile's header is added by id,
 * only under its URL prefix, and its value is masked out of whatever comes back.
 */
@AiToolProvider()
@Injectable()
export class UrlFetchTool implements AiTool<typeof URL_FETCH_ARGS> {
  readonly name = 'url_fetch';
  readonly description =
    'HTTP(S) request to a public URL. HTML comes back as readable text; use download_path to save files. ' +
    'Private and local addresses are refused unless the owner allowed them.';
  readonly schema = URL_FETCH_ARGS;
  readonly promptLine =
    'fetch a web page or call an HTTP API (public addresses; HTML as text; download_path saves a file).';
  readonly modes = ['web'];
  readonly timeoutMs = (URL_FETCH_MAX_TIMEOUT_SECONDS + 5) * 1000;

  constructor(
    private readonly fetcher: UrlFetcher,
    private readonly dirs: FileDirs,
    private readonly secrets: KnownSecrets,
  ) {}

  /**
   * Outward when it can carry data out: a method other than GET, a body, or a host
   * this turn has not fetched yet (its URL could hold what the turn read).
   */
  effect(args: UrlFetchArgs, turn: ToolTurn): 'fetch' | null {
    if ((args.method ?? 'GET') !== 'GET' || args.body !== undefined)
      return 'fetch';
    const host = hostOf(args.url);
    return host && turn.hasFetched(host) ? null : 'fetch';
  }

  summarize(args: UrlFetchArgs): string {
    const body =
      args.body === undefined
        ? ''
        : ` with the body ${typeof args.body === 'string' ? args.body : JSON.stringify(args.body)}`;
    return `${args.method ?? 'GET'} ${args.url}${body}${args.download_path ? `, saved to ${args.download_path}` : ''}`;
  }

  /** Whatever a server answers is someone else's text. */
  taint(args: UrlFetchArgs, _result: string, turn: ToolTurn): { text: string } {
    const host = hostOf(args.url) ?? 'the web';
    turn.noteFetched(host);
    return {
      text: args.download_path
        ? `a file downloaded from ${host}`
        : `a web page from ${host}`,
    };
  }

  async execute(args: UrlFetchArgs, context: AiToolContext): Promise<string> {
    const prepared = this.prepare(args, context);
    if (typeof prepared === 'string') return toolError(prepared);
    const { auth, download } = prepared;
    const timeoutSeconds =
      args.timeout_seconds ?? URL_FETCH_DEFAULT_TIMEOUT_SECONDS;
    const timeout = AbortSignal.timeout(timeoutSeconds * 1000);
    const signal = AbortSignal.any([context.signal, timeout]);
    // Every secret the app holds (the profile's value among them) is masked from what comes back.
    const extra = auth ? [auth.value] : [];
    const redactor = await this.secrets.redactor('text', extra);
    const hide = (text: string) => redactor.redact(text);
    try {
      const response = await this.fetcher.open({
        url: args.url,
        method: prepared.method,
        headers: prepared.headers,
        body: prepared.body,
        auth,
        allowHostPorts: context.settings.urlFetchAllowHosts,
        signal,
      });
      // Stop or the timeout also stops reading the body.
      addAbortSignal(signal, response.body);
      if (download)
        return await this.save(
          response,
          download,
          args.max_bytes,
          signal,
          await this.secrets.redactor('latin1', extra),
          hide,
        );
      const maxBytes = args.max_bytes ?? URL_FETCH_INLINE_MAX_BYTES;
      const { bytes, truncated } = await readCapped(response.body, maxBytes);
      const result: Record<string, unknown> = {
        url: hide(response.url),
        status: response.status,
        content_type: response.contentType,
        bytes: bytes.length,
        truncated,
      };
      if (response.redirects) result['redirects'] = response.redirects;
      if (!isTextual(response.contentType, bytes)) {
        result['note'] =
          'Binary content is not shown: use download_path to save it.';
        return JSON.stringify(result);
      }
      const text = decodeText(bytes, response.contentType);
      if (isHtml(response.contentType)) {
        const page = await htmlToReadableText(text);
        if (page.title) result['title'] = hide(page.title);
        result['text'] = hide(page.text);
      } else result['body'] = hide(text);
      return JSON.stringify(result);
    } catch (error) {
      if (context.signal.aborted) return toolError('The fetch was cancelled.');
      if (timeout.aborted)
        return toolError(
          `The request timed out after ${timeoutSeconds} s (timeout_seconds)`,
        );
      if (error instanceof UrlFetchError) return toolError(hide(error.message));
      const code = (error as { code?: unknown }).code;
      return toolError(
        hide(
          `The fetch failed while reading the response (${typeof code === 'string' ? code : (error as Error).message})`,
        ),
      );
    }
  }

  /** Everything checked before a byte goes out: a sentence when something is refused. */
  private prepare(
    args: UrlFetchArgs,
    { settings }: AiToolContext,
  ):
    | string
    | {
        method: FetchMethod;
        headers: Record<string, string>;
        body?: Buffer;
        auth: StoredAuthProfile | null;
        download: DownloadTarget | null;
      } {
    const method = args.method ?? 'GET';
    const headers = checkRequestHeaders(args.headers);
    if (!headers.ok) return headers.error;
    let body: Buffer | undefined;
    if (args.body !== undefined) {
      if (!['POST', 'PUT', 'PATCH'].includes(method))
        return `body is only sent with POST, PUT or PATCH (method is ${method})`;
      const text =
        typeof args.body === 'string' ? args.body : JSON.stringify(args.body);
      body = Buffer.from(text, 'utf8');
      if (body.length > BODY_MAX_BYTES)
        return `body is ${body.length} bytes; the limit is ${BODY_MAX_BYTES}`;
      headers.headers['Content-Type'] ??=
        typeof args.body === 'string'
          ? 'text/plain; charset=utf-8'
          : 'application/json';
    }
    let auth: StoredAuthProfile | null = null;
    if (args.auth_profile !== undefined) {
      const profiles = settings.authProfiles;
      const found = profiles.find((p) => p.id === args.auth_profile);
      if (!found)
        return profiles.length
          ? `Unknown auth_profile '${args.auth_profile}'; the owner has set up: ${profiles.map((p) => `${p.id} (${p.urlPrefix})`).join(', ')}`
          : `Unknown auth_profile '${args.auth_profile}': the owner has set up no auth profiles`;
      let url: URL | null = null;
      try {
        url = new URL(args.url.trim());
      } catch {
        // parseFetchUrl reports it below with the usual wording.
      }
      if (url && !matchesUrlPrefix(url, found.urlPrefix))
        return `auth_profile '${found.id}' only applies to URLs under ${found.urlPrefix}`;
      auth = found;
    }
    let download: DownloadTarget | null = null;
    if (args.download_path !== undefined) {
      const resolved = this.dirs.resolve(args.download_path, {
        defaultAlias: 'file_cache_dir',
      });
      if (!resolved.ok) return resolved.error;
      if (resolved.alias !== 'file_cache_dir')
        return `download_path must be in file_cache_dir (got ${resolved.display})`;
      download = resolved;
    } else if (
      args.max_bytes !== undefined &&
      args.max_bytes > URL_FETCH_INLINE_MAX_BYTES
    )
      return `max_bytes above ${URL_FETCH_INLINE_MAX_BYTES} (512 KiB) needs download_path: larger bodies are saved to a file, not returned`;
    return { method, headers: headers.headers, body, auth, download };
  }

  /**
   * Streams the body, secrets masked, into a new temporary file created in the
   * target's folder, opened once without following links; then renames it inside
   * that same open folder. Swapping the folder for a link meanwhile changes nothing:
   * the bytes go to the folder that was opened, never outside. No partial file is left.
   */
  private async save(
    response: Awaited<ReturnType<UrlFetcher['open']>>,
    target: DownloadTarget,
    maxBytes = URL_FETCH_DOWNLOAD_MAX_BYTES,
    signal: AbortSignal,
    redactor: SecretRedactor,
    hide: (text: string) => string,
  ): Promise<string> {
    if (response.status < 200 || response.status > 299) {
      response.body.destroy();
      return toolError(
        `The server answered HTTP ${response.status}; nothing was saved to ${target.display}`,
      );
    }
    const declared = Number(response.headers['content-length']);
    if (
      !response.headers['content-encoding'] &&
      Number.isFinite(declared) &&
      declared > maxBytes
    ) {
      response.body.destroy();
      return toolError(
        `The response is ${declared} bytes, more than max_bytes (${maxBytes}); nothing was saved`,
      );
    }
    let parent: { dir: ContainedDir; name: string };
    try {
      parent = await this.dirs.openParent(target, { createParents: true });
      const existing = await parent.dir.lstat(parent.name);
      if (existing?.isDirectory()) {
        await parent.dir.close();
        throw new FileAccessError(`${target.display} is a directory`);
      }
    } catch (error) {
      response.body.destroy();
      if (error instanceof FileAccessError) return toolError(error.message);
      throw error;
    }
    const { dir, name } = parent;
    const partial = `.${name}.part-${randomBytes(4).toString('hex')}`;
    let handle: FileHandle | null = null;
    let received = 0;
    let tooLarge = false;
    const masking = new StreamingSecretRedactor(redactor);
    try {
      handle = await dir.openFile(partial, 'create');
      const file = handle;
      const size = await writeChunks(
        file,
        (async function* () {
          for await (const chunk of response.body as AsyncIterable<Buffer>) {
            signal.throwIfAborted();
            received += chunk.length;
            if (received > maxBytes) {
              tooLarge = true;
              throw new UrlFetchError('too large');
            }
            const out = masking.push(chunk);
            if (out.length) yield out;
          }
          const rest = masking.end();
          if (rest.length) yield rest;
        })(),
      );
      await file.close();
      handle = null;
      await dir.rename(partial, dir, name);
      return JSON.stringify({
        path: target.display,
        bytes: size,
        content_type: response.contentType,
        status: response.status,
        ...(masking.count > 0 && {
          note: `${masking.count} occurrence(s) of a stored secret were redacted before saving.`,
        }),
      });
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await dir.remove(partial).catch(() => undefined);
      if (tooLarge)
        return toolError(
          `The response is larger than max_bytes (${maxBytes}); nothing was saved`,
        );
      if (error instanceof FileAccessError)
        return toolError(hide(error.message));
      throw error;
    } finally {
      await dir.close();
    }
  }
}

type DownloadTarget = ResolvedFilePath;

/** Reads at most `maxBytes`; a longer body is cut there (and the connection closed). */
async function readCapped(
  body: Readable,
  maxBytes: number,
): Promise<{ bytes: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let total = 0;
  let truncated = false;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (total + chunk.length > maxBytes) {
      chunks.push(chunk.subarray(0, maxBytes - total));
      total = maxBytes;
      truncated = true;
      break;
    }
    chunks.push(chunk);
    total += chunk.length;
  }
  if (truncated) body.destroy();
  return { bytes: Buffer.concat(chunks, total), truncated };
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase() || null;
  } catch {
    return null;
  }
}
