import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  IMAGE_PROMPT_MAX_LENGTH,
  IMAGE_SHORT_DESCRIPTION_MAX_LENGTH,
  type ImageToolResult,
} from '@metatronos/shared-types';
import { AiToolProvider, toolError, type AiTool, type AiToolAvailabilityContext, type AiToolContext } from '../ai-tools/ai-tool';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { createImageModel, resolveImageModel } from './image-models';
import { MediaStore, mediaUrl, type StoredMedia } from './media.store';

/**
 * Runs the configured image model and stores what it returns. Only from the
 * owner's chat: cron, Pulse and auto-replies get no image tools.
 */
@Injectable()
export class ImageService {
  private readonly logger = new Logger(ImageService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: MediaStore,
  ) {}

  /** IMAGE_TIMEOUT_MS. */
  get timeoutMs(): number {
    return this.config.media.imageTimeoutMs;
  }

  static isAvailable({ source, settings }: AiToolAvailabilityContext): boolean {
    return source === 'chat' && !!settings.imageModel;
  }

  async generate(args: { prompt: string; shortDescription: string; source?: StoredMedia }, context: AiToolContext): Promise<string> {
    const resolved = resolveImageModel(context.settings);
    const timeoutMs = this.config.media.imageTimeoutMs;
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(timeoutMs)]);
    let sourceImage: { bytes: Buffer; mime: string } | undefined;
    if (args.source) {
      const bytes = await this.store.readBytes(args.source);
      if (!bytes) return toolError(`The file of image ${String(args.source._id)} is missing; it cannot be edited.`);
      sourceImage = { bytes, mime: args.source.mime };
    }

    let bytes: Buffer;
    try {
      bytes = await createImageModel(resolved).run({ prompt: args.prompt, source: sourceImage, signal, timeoutMs });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.logger.warn(`Image ${sourceImage ? 'edit' : 'generation'} with ${resolved.id} failed: ${message}`);
      return toolError(`Image ${sourceImage ? 'edit' : 'generation'} failed: ${message}`);
    }

    const stored = await this.store.save(bytes, {
      chatId: context.chatId,
      messageId: context.messageId,
      kind: args.source ? 'edited' : 'generated',
      prompt: args.prompt,
      shortDescription: args.shortDescription,
      model: resolved.id,
      ...(args.source ? { sourceMediaId: String(args.source._id) } : {}),
    });
    const id = String(stored._id);
    const url = mediaUrl(id);
    const result: ImageToolResult = {
      success: true,
      mediaId: id,
      url,
      markdown: `![${markdownAlt(args.shortDescription)}](${url})`,
      width: stored.width,
      height: stored.height,
    };
    return JSON.stringify(result);
  }
}

/** Alt text that cannot end the image syntax early or span lines. */
export function markdownAlt(text: string): string {
  return text
    .replace(/[\r\n]+/g, ' ')
    .replace(/([\\[\]])/g, '\\$1')
    .trim();
}

const PROMPT = {
  type: 'string',
  maxLength: IMAGE_PROMPT_MAX_LENGTH,
};
const SHORT_DESCRIPTION = {
  type: 'string',
  maxLength: IMAGE_SHORT_DESCRIPTION_MAX_LENGTH,
  description: 'A few words describing the image (alt text and file name), e.g. "Red fox in snow"',
};

function requireText(value: unknown, name: string): string | null {
  return typeof value === 'string' && value.trim() ? null : `Argument '${name}' must not be blank`;
}

@AiToolProvider()
@Injectable()
export class GenerateImageTool implements AiTool {
  readonly definition = {
    name: 'generate_image',
    description:
      'Create a new image from a text prompt with the configured image model. Answers { success, mediaId, url, markdown, width, height }: ' +
      'put the returned markdown in your reply so the image shows inline. Use the mediaId with edit_image to change the image later.',
    parameters: {
      type: 'object' as const,
      properties: {
        prompt: { ...PROMPT, description: 'A detailed description of the image to create (subject, style, composition, colours)' },
        shortDescription: SHORT_DESCRIPTION,
      },
      required: ['prompt', 'shortDescription'],
    },
  };
  readonly promptLine =
    "create an image from a detailed prompt; include the returned `markdown` (e.g. ![Red fox](/api/media/…)) in your reply so the image shows inline, and keep its mediaId for edit_image.";

  constructor(private readonly images: ImageService) {}

  /** Image models often take 30–60 s: the tool gets IMAGE_TIMEOUT_MS (plus a margin) instead of LLM_TOOL_TIMEOUT_MS. */
  get timeoutMs(): number {
    return this.images.timeoutMs + 5_000;
  }

  isAvailable(context: AiToolAvailabilityContext): boolean {
    return ImageService.isAvailable(context);
  }

  async execute(args: Record<string, unknown>, context: AiToolContext): Promise<string> {
    const problem = requireText(args['prompt'], 'prompt') ?? requireText(args['shortDescription'], 'shortDescription');
    if (problem) return toolError(problem);
    return this.images.generate(
      { prompt: (args['prompt'] as string).trim(), shortDescription: (args['shortDescription'] as string).trim() },
      context,
    );
  }
}

@AiToolProvider()
@Injectable()
export class EditImageTool implements AiTool {
  readonly definition = {
    name: 'edit_image',
    description:
      'Change an image made earlier with generate_image or edit_image, by its mediaId (the id in /api/media/<id>). The original is kept; ' +
      'answers a new image as { success, mediaId, url, markdown, width, height }: put the returned markdown in your reply.',
    parameters: {
      type: 'object' as const,
      properties: {
        imageId: { type: 'string', maxLength: 100, description: 'The mediaId of the image to change' },
        prompt: { ...PROMPT, description: 'What to change, e.g. "make the sky stormy, keep everything else"' },
        shortDescription: SHORT_DESCRIPTION,
      },
      required: ['imageId', 'prompt', 'shortDescription'],
    },
  };
  readonly promptLine =
    'change an image made earlier, by its mediaId (from /api/media/<id>); include the returned `markdown` in your reply so the new image shows inline.';

  constructor(
    private readonly images: ImageService,
    private readonly store: MediaStore,
  ) {}

  /** As generate_image: IMAGE_TIMEOUT_MS plus a margin. */
  get timeoutMs(): number {
    return this.images.timeoutMs + 5_000;
  }

  isAvailable(context: AiToolAvailabilityContext): boolean {
    return ImageService.isAvailable(context);
  }

  async execute(args: Record<string, unknown>, context: AiToolContext): Promise<string> {
    const problem =
      requireText(args['imageId'], 'imageId') ?? requireText(args['prompt'], 'prompt') ?? requireText(args['shortDescription'], 'shortDescription');
    if (problem) return toolError(problem);
    const imageId = (args['imageId'] as string).trim().replace(/^\/?api\/media\//, '');
    const source = await this.store.find(imageId);
    if (!source) return toolError(`No image with id ${JSON.stringify(imageId.slice(0, 100))}: use the mediaId returned by generate_image or edit_image.`);
    return this.images.generate(
      { prompt: (args['prompt'] as string).trim(), shortDescription: (args['shortDescription'] as string).trim(), source },
      context,
    );
  }
}
