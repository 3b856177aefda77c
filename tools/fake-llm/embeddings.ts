/**
 * The embedding endpoints: OpenAI `POST /v1/embeddings` and Gemini `:embedContent` /
 * `:batchEmbedContents`, answered with deterministic vectors that carry a little meaning.
 *
 * A text's vector is a hashed bag of concepts: words are lower-cased, crudely stemmed
 * ("allergic" and "allergy" both become `allerg`), mapped through a small synonym table
 * ("relocate", "move", "live" and "address" share one concept), and each concept is hashed
 * into two signed dimensions, one of them among the first 64; the sum is normalised. Texts sharing concepts land near each
 * other, so a paraphrase a keyword index misses ("Which city is our home now?" for "We moved
 * to Lisbon") is found by similarity. Same text, same vector, on every run.
 */
import type { ServerResponse } from 'node:http';
import { geminiError } from './gemini-wire';
import { clientGone, pause, sendJson } from './http-replies';
import { openAiError } from './openai-wire';
import {
  isErrorReply,
  type FakeErrorReply,
  type FakeRecordedRequest,
} from './scripts';

export interface FakeEmbeddingReply {
  /** Wait this long before answering (stops early when the client goes away). */
  delayMs?: number;
}

export type FakeEmbeddingErrorReply = FakeErrorReply & { delayMs?: number };

export type FakeEmbeddingReplyScript =
  | FakeEmbeddingReply
  | FakeEmbeddingErrorReply
  | ((
      request: FakeRecordedRequest,
    ) => FakeEmbeddingReply | FakeEmbeddingErrorReply);

export interface FakeEmbeddingProvider {
  enqueue(...replies: FakeEmbeddingReplyScript[]): void;
  /** Answer when the queue is empty; `{}` (vectors at once) unless set; `null` answers HTTP 500. */
  fallback: FakeEmbeddingReplyScript | null;
  readonly requests: FakeRecordedRequest[];
  readonly pending: number;
  reset(): void;
}

/** Words of like meaning, one concept each (any form of a word listed here maps to it). */
const SYNONYM_GROUPS: Record<string, string[]> = {
  dwell: [
    'move',
    'moved',
    'relocate',
    'relocated',
    'live',
    'lived',
    'reside',
    'home',
    'house',
    'flat',
    'apartment',
    'address',
  ],
  place: ['city', 'cities', 'town', 'village'],
  work: [
    'job',
    'work',
    'employer',
    'employed',
    'company',
    'career',
    'position',
    'hired',
  ],
  allerg: [
    'allergy',
    'allergic',
    'allergies',
    'intolerant',
    'intolerance',
    'reaction',
  ],
  music: ['instrument', 'violin', 'cello', 'piano', 'guitar'],
  doctor: [
    'doctor',
    'physician',
    'pediatrician',
    'paediatrician',
    'dentist',
    'dr',
  ],
  price: ['price', 'cost', 'costs', 'fee', 'much', 'euros', 'expensive'],
  beverage: ['drink', 'tea', 'coffee', 'beverage'],
  vehicle: ['car', 'vehicle', 'auto'],
  birth: ['birthday', 'born'],
  diet: ['vegetarian', 'vegan', 'meat'],
  language: ['language', 'spanish', 'french', 'german'],
  network: ['wifi', 'internet', 'network'],
};

const STOP = new Set(
  'a an the and or but to of in on at for from with is are was were be been am i my me we our us you your he she it its his her they them their this that these those do does did what which who whom where when how why now after before then there here any anything some not no as by about into'.split(
    ' ',
  ),
);

/** A crude stemmer: one common suffix off, keeping at least three letters. */
function stem(word: string): string {
  for (const suffix of [
    'ations',
    'ation',
    'ing',
    'ies',
    'ed',
    'es',
    'ic',
    'y',
    's',
    'e',
  ])
    if (word.length - suffix.length >= 3 && word.endsWith(suffix))
      return word.slice(0, -suffix.length);
  return word;
}

const SYNONYMS = new Map<string, string>();
for (const [concept, list] of Object.entries(SYNONYM_GROUPS))
  for (const word of list) {
    SYNONYMS.set(word, concept);
    SYNONYMS.set(stem(word), concept);
  }

function fnv(text: string, seed: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The concepts of a text, as the fake's vectors see them (exported for tests that reason about nearness). */
export function fakeConcepts(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (!raw || STOP.has(raw)) continue;
    const stemmed = stem(raw);
    out.push(SYNONYMS.get(raw) ?? SYNONYMS.get(stemmed) ?? stemmed);
  }
  return out;
}

/** A unit vector of `dimensions` for `text`. */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const v = new Array<number>(dimensions).fill(0);
  // Like the real models (trained so a vector's leading dimensions are a shorter embedding of
  // their own), every concept lands once in the first 64 dimensions and once anywhere.
  const lead = Math.min(64, dimensions);
  for (const concept of fakeConcepts(text))
    for (const [seed, span] of [
      [1, lead],
      [2, dimensions],
    ]) {
      const h = fnv(concept, seed);
      v[h % span] += h & 0x80000000 ? -1 : 1;
    }
  let norm = Math.hypot(...v);
  if (norm === 0) {
    v[0] = 1;
    norm = 1;
  }
  return v.map((x) => x / norm);
}

/** Tokens a text is counted as (about four characters a token, at least one). */
function tokensOf(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function float32Base64(values: number[]): string {
  return Buffer.from(new Float32Array(values).buffer).toString('base64');
}

/** `POST /v1/embeddings`: `input` a string or a list; `dimensions` honoured (default 1536); base64 when asked. */
export async function answerOpenAiEmbeddings(
  req: FakeRecordedRequest,
  reply: FakeEmbeddingReply | FakeEmbeddingErrorReply,
  res: ServerResponse,
): Promise<void> {
  await pause(res, reply.delayMs);
  if (clientGone(res)) return;
  if (isErrorReply(reply)) return openAiError(res, reply);
  const body = (req.body ?? {}) as {
    input?: unknown;
    dimensions?: unknown;
    encoding_format?: unknown;
  };
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  if (!inputs.length || inputs.some((i) => typeof i !== 'string'))
    return openAiError(res, {
      status: 400,
      message: "'input' must be a string or a list of strings",
    });
  const dimensions =
    typeof body.dimensions === 'number' ? body.dimensions : 1536;
  const base64 = body.encoding_format === 'base64';
  const texts = inputs as string[];
  const tokens = texts.reduce((sum, t) => sum + tokensOf(t), 0);
  sendJson(res, 200, {
    object: 'list',
    model: req.model,
    data: texts.map((text, index) => {
      const vector = fakeEmbedding(text, dimensions);
      return {
        object: 'embedding',
        index,
        embedding: base64 ? float32Base64(vector) : vector,
      };
    }),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

interface GeminiEmbedRequest {
  content?: { parts?: Array<{ text?: string }> };
  outputDimensionality?: number;
}

/** Default sizes of Gemini's embedding models. */
function geminiDimensions(model: string, asked: unknown): number {
  if (typeof asked === 'number') return asked;
  return model.startsWith('gemini-embedding') ? 3072 : 768;
}

/** `:embedContent` (one content) and `:batchEmbedContents` (`requests`), as the genai SDK sends them. */
export async function answerGeminiEmbeddings(
  req: FakeRecordedRequest,
  batch: boolean,
  reply: FakeEmbeddingReply | FakeEmbeddingErrorReply,
  res: ServerResponse,
): Promise<void> {
  await pause(res, reply.delayMs);
  if (clientGone(res)) return;
  if (isErrorReply(reply)) return geminiError(res, reply);
  const requests: GeminiEmbedRequest[] = batch
    ? ((req.body as { requests?: GeminiEmbedRequest[] })?.requests ?? [])
    : [req.body as GeminiEmbedRequest];
  const embeddings = requests.map((r) => ({
    values: fakeEmbedding(
      (r.content?.parts ?? []).map((p) => p.text ?? '').join(' '),
      geminiDimensions(req.model, r.outputDimensionality),
    ),
  }));
  sendJson(res, 200, batch ? { embeddings } : { embedding: embeddings[0] });
}
