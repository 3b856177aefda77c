import type { Content, GenerateContentResponse, Part } from '@google/genai';
import type { LlmToolSpec } from '../llm-adapter';
import { RecentByText } from './adapter-support';

/**
 * The Gemini Developer API's `streamGenerateContent` request of a turn, and the conversation it carries,
 * built here instead of through the SDK's `chats` and `models` modules. Those convert every request
 * and every streamed piece field by field (`getValueByPath`/`setValueByPath` over each part) and deep-copy
 * the history twice a request: a quarter of the API's allocation in a plain Gemini turn (246 of 845 KB,
 * stop 42). What is sent, and what the conversation keeps, is the SDK's (2.x) to the byte:
 * `gemini-request.spec.ts` holds both to the SDK's own output. The HTTP call, its headers and its
 * errors stay the SDK's (`GeminiClient.streamGenerateContent`).
 */

/** What a request sets besides its contents (the adapter's whole `GenerateContentConfig`). */
export interface GeminiRequestConfig {
  systemPrompt: string | null;
  tools: LlmToolSpec[] | null;
  maxOutputTokens?: number;
}

/** The SDK's `tModel` for the Developer API: the model's resource name, refused when it could leave the path. */
export function geminiModelPath(model: string): string {
  if (!model || typeof model !== 'string')
    throw new Error('model is required and must be a string');
  if (model.includes('..') || model.includes('?') || model.includes('&'))
    throw new Error('invalid model parameter');
  return model.startsWith('models/') || model.startsWith('tunedModels/')
    ? model
    : `models/${model}`;
}

/**
 * The fields of a part the SDK sends to the Developer API, in its order (`partToMldev`); any other is
 * dropped. A function call keeps `args`, `id` and `name`.
 */
const PART_FIELDS = [
  'mediaResolution',
  'toolCall',
  'toolResponse',
  'audioTranscription',
  'codeExecutionResult',
  'executableCode',
  'fileData',
  'functionCall',
  'functionResponse',
  'inlineData',
  'text',
  'thought',
  'thoughtSignature',
  'videoMetadata',
  'partMetadata',
  'mediaProcessing',
  'speechMetadata',
] as const;

function wirePart(part: Part): Record<string, unknown> {
  const source = part as Record<string, unknown>;
  const wire: Record<string, unknown> = {};
  for (const field of PART_FIELDS) {
    const value = source[field];
    if (value == null) continue;
    wire[field] = field === 'functionCall' ? wireCall(value) : value;
  }
  return wire;
}

function wireCall(call: unknown): Record<string, unknown> {
  const { args, id, name, partialArgs, willContinue } = call as Record<
    string,
    unknown
  >;
  const wire: Record<string, unknown> = {};
  if (args != null) wire['args'] = args;
  if (id != null) wire['id'] = id;
  if (name != null) wire['name'] = name;
  if (partialArgs !== undefined)
    throw new Error(
      'partialArgs parameter is only supported in Gemini Enterprise Agent Platform mode, not in Gemini Developer API mode.',
    );
  if (willContinue !== undefined)
    throw new Error(
      'willContinue parameter is only supported in Gemini Enterprise Agent Platform mode, not in Gemini Developer API mode.',
    );
  return wire;
}

function wireContent(content: Content): Record<string, unknown> {
  const wire: Record<string, unknown> = {};
  const parts = content.parts as unknown;
  if (parts != null)
    wire['parts'] = Array.isArray(parts) ? parts.map(wirePart) : parts;
  if (content.role != null) wire['role'] = content.role;
  return wire;
}

/** The latest system instructions as JSON, by their text (a prompt is built anew for each request). */
const instructionJson = new RecentByText((text) =>
  JSON.stringify({ parts: [{ text }], role: 'user' }),
);

/** Each tool's declaration as JSON, made once per spec (a turn's specs are the registry's own objects). */
const declarationJson = new WeakMap<LlmToolSpec, string>();

function declarationOf(tool: LlmToolSpec): string {
  let json = declarationJson.get(tool);
  if (json === undefined) {
    json = JSON.stringify({
      name: tool.name,
      description: tool.description,
      parametersJsonSchema: tool.parameters,
    });
    declarationJson.set(tool, json);
  }
  return json;
}

/**
 * The request body, as the SDK's `generateContentParametersToMldev` writes it for these contents and
 * this config: `contents`, then `systemInstruction`, `tools` and `toolConfig` (with tools), then
 * `generationConfig` (always present, empty without a token limit).
 */
export function geminiRequestBody(
  contents: Content[],
  config: GeminiRequestConfig,
): string {
  if (!contents.length) throw new Error('contents are required');
  let body = `{"contents":${JSON.stringify(contents.map(wireContent))}`;
  if (config.systemPrompt)
    body += `,"systemInstruction":${instructionJson.get(config.systemPrompt)}`;
  if (config.tools?.length)
    body += `,"tools":[{"functionDeclarations":[${config.tools.map(declarationOf).join(',')}]}],"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}}`;
  body += `,"generationConfig":${config.maxOutputTokens ? `{"maxOutputTokens":${JSON.stringify(config.maxOutputTokens)}}` : '{}'}}`;
  return body;
}

/** A content the model may be sent again: parts, none of them empty (the SDK's `isValidContent`). */
function isValidContent(content: Content): boolean {
  if (!Array.isArray(content.parts) || content.parts.length === 0) return false;
  for (const part of content.parts)
    if (part == null || Object.keys(part).length === 0) return false;
  return true;
}

/**
 * The history a request carries (the SDK's `extractCuratedHistory`): a run of model contents with an
 * invalid one is left out, together with the user content before it. A content of another role
 * counts as an invalid model content.
 */
export function curatedHistory(history: readonly Content[]): Content[] {
  const curated: Content[] = [];
  let i = 0;
  while (i < history.length) {
    if (history[i].role === 'user') {
      curated.push(history[i]);
      i++;
      continue;
    }
    const output: Content[] = [];
    let valid = true;
    // The SDK's loop takes only `model` contents here and never ends on another role (a reply can
    // name any role): such a content is taken as an invalid model one.
    while (i < history.length && history[i].role !== 'user') {
      output.push(history[i]);
      if (valid && (history[i].role !== 'model' || !isValidContent(history[i])))
        valid = false;
      i++;
    }
    if (valid) curated.push(...output);
    else curated.pop();
  }
  return curated;
}

/**
 * One turn's conversation with Gemini, as the SDK's chat session keeps it: each request sends the
 * curated history and the new user content; once a reply was read to its end, the user content and
 * the reply's contents (one per streamed piece) join the history, or an empty model content when a
 * piece was invalid or no piece carried a finish reason.
 */
export class GeminiConversation {
  private readonly history: Content[];

  constructor(history: Content[]) {
    for (const content of history)
      if (content.role !== 'user' && content.role !== 'model')
        throw new Error(`Role must be user or model, but got ${content.role}.`);
    this.history = history;
  }

  /** The contents of a request that sends `message` (the SDK's `tContent` of a part list). */
  contentsFor(message: Part[]): { contents: Content[]; input: Content } {
    if (!message.length) throw new Error('PartListUnion is required');
    const input: Content = { role: 'user', parts: message };
    return { contents: [...curatedHistory(this.history), input], input };
  }

  /** A reply that was read to its end: its pieces, in order, as they came. */
  record(input: Content, pieces: readonly GenerateContentResponse[]): void {
    const output: Content[] = [];
    let valid = true;
    let finished = false;
    for (const piece of pieces) {
      const candidate = piece.candidates?.[0];
      if (candidate?.content != null && isValidContent(candidate.content))
        output.push(candidate.content);
      else valid = false;
      if (candidate?.finishReason != null) finished = true;
    }
    this.history.push(input);
    if (
      valid &&
      finished &&
      output.length > 0 &&
      output.every((content) => content.role !== undefined)
    )
      this.history.push(...output);
    else this.history.push({ role: 'model', parts: [] });
  }
}
