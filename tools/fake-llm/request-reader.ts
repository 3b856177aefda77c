/** Reads a request's body: JSON, or `multipart/form-data` (OpenAI image edits) through busboy. */
import type { IncomingMessage } from 'node:http';
import { busboy } from '../../apps/api/src/attachments/busboy';
import type { FakeUploadedFile } from './scripts';

export interface ReadBody {
  /** The parsed JSON (`undefined` when empty or not JSON), or a multipart request's text fields. */
  body: unknown;
  /** A multipart request's file parts; absent for any other request. */
  files?: FakeUploadedFile[];
}

export function readRequestBody(req: IncomingMessage): Promise<ReadBody> {
  return /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '')
    ? readMultipart(req)
    : readJson(req);
}

async function readJson(req: IncomingMessage): Promise<ReadBody> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  try {
    return { body: raw ? JSON.parse(raw) : undefined };
  } catch {
    return { body: undefined };
  }
}

function readMultipart(req: IncomingMessage): Promise<ReadBody> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    const files: FakeUploadedFile[] = [];
    const reading: Array<Promise<void>> = [];
    const parser = busboy({ headers: req.headers, defParamCharset: 'utf8' });
    parser.on('field', (field, value) => {
      fields[field] = value;
    });
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      reading.push(
        new Promise<void>((done, fail) => {
          stream.on('error', fail);
          stream.on('end', () => {
            files.push({
              field,
              filename: info.filename ?? '',
              contentType: info.mimeType,
              data: Buffer.concat(chunks),
            });
            done();
          });
        }),
      );
    });
    parser.on('error', reject);
    parser.on('close', () => {
      Promise.all(reading).then(() => resolve({ body: fields, files }), reject);
    });
    req.pipe(parser);
  });
}
