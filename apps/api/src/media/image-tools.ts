import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  IMAGE_PROMPT_MAX_LENGTH,
  IMAGE_SHORT_DESCRIPTION_MAX_LENGTH,
  type ImageToolResult,
} from '@metatronos/shared-types';
import { z } from 'zod';
import {
  AiToolProvider,
  toolError,
  type AiTool,
  type AiToolAvailabilityContext,
  type AiToolContext,
} from '../ai-tools/ai-tool';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/app-config.provider';
import { AttachmentsService } from '../attachments/attachments.service';
import { BudgetRefusal } from '../budget/budget-refusal';
import { BudgetService } from '../budget/budget.service';
import { attachmentTokens, promptTokensOf } from '../budget/model-prices';
import { UsageRecorder } from '../usage/usage-recorder';
import {
  createImageModel,
  IMAGE_WORST_OUTPUT_TOKENS,
  resolveImageModel,
  type ImageResult,
} from './image-models';
import { MediaStore, mediaUrl } from './media.store';

/** The image an edit starts from: one made earlier (`mediaId`) or one the owner attached (`attachmentId`). */
export interface EditSource {
  bytes: Buffer;
  mime: string;
  mediaId?: string;
  attachmentId?: string;
}

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
    private readonly budget: BudgetService,
    private readonly usage: UsageRecorder,
  ) {}

  /** IMAGE_TIMEOUT_MS. */
  get timeoutMs(): number {
    return this.config.media.imageTimeoutMs;
  }

  static isAvailable({ source, settings }: AiToolAvailabilityContext): boolean {
    return source === 'chat' && !!settings.imageModel;
  }

  async generate(
    args: { prompt: string; shortDescription: string; source?: EditSource },
    context: AiToolContext,
  ): Promise<string> {
    const resolved = resolveImageModel(context.settings);
    // Loaded (the first time) before the image's time limit starts.
    const model = await createImageModel(resolved);
    const timeoutMs = this.config.media.imageTimeoutMs;
    const signal = AbortSignal.any([
      context.signal,
      AbortSignal.timeout(timeoutMs),
    ]);
    const sourceImage = args.source && {
      bytes: args.source.bytes,
      mime: args.source.mime,
    };

    // Held to the budget like every model call: the worst case before, what was reported after.
    const call = {
      source: context.source,
      modelId: resolved.id,
      provider: resolved.route.provider,
      allowOverBudget: context.allowOverBudget === true,
    };
    let made: ImageResult;
    try {
      const held = await this.budget.hold(call, {
        inputTokens:
          promptTokensOf(Buffer.byteLength(args.prompt, 'utf8')) +
          (sourceImage
            ? attachmentTokens('image', sourceImage.bytes.length)
            : 0),
        outputTokens: IMAGE_WORST_OUTPUT_TOKENS,
      });
      try {
        made = await model.run({
          prompt: args.prompt,
          source: sourceImage,
          signal,
          timeoutMs,
        });
      } catch (error) {
        await held.release();
        throw error;
      }
      await this.usage.record({
        source: call.source,
        model: call.modelId,
        provider: call.provider,
        usage: made.usage ?? undefined,
        ...(made.usage ? {} : { costUsd: held.costUsd }),
      });
      await held.settle(made.usage);
    } catch (error) {
      if (error instanceof BudgetRefusal)
        return toolError(
          `No image was made: ${error.message} Tell the owner in these words.`,
        );
      const message = error instanceof Error ? error.message : String(error);
      this.logger.warn(
        `Image ${sourceImage ? 'edit' : 'generation'} with ${resolved.id} failed: ${message}`,
      );
      return toolError(
        `Image ${sourceImage ? 'edit' : 'generation'} failed: ${message}`,
      );
    }

    const stored = await this.store.save(made.bytes, {
      chatId: context.chatId,
      messageId: context.messageId,
      kind: args.source ? 'edited' : 'generated',
      prompt: args.prompt,
      shortDescription: args.shortDescription,
      model: resolved.id,
      ...(args.source?.mediaId ? { sourceMediaId: args.source.mediaId } : {}),
      ...(args.source?.attachmentId
        ? { sourceAttachmentId: args.source.attachmentId }
        : {}),
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

/** Text the model must give: a blank one is refused before anything runs. */
const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => value.trim() !== '', { error: 'must not be blank' });

const SHORT_DESCRIPTION = text(IMAGE_SHORT_DESCRIPTION_MAX_LENGTH).describe(
  'Alt text and file name, e.g. "Red fox in snow"',
);

const GENERATE_IMAGE_ARGS = z.object({
  prompt: text(IMAGE_PROMPT_MAX_LENGTH).describe(
    'Detailed: subject, style, composition, colours',
  ),
  shortDescription: SHORT_DESCRIPTION,
});

@AiToolProvider()
@Injectable()
export class GenerateImageTool implements AiTool<typeof GENERATE_IMAGE_ARGS> {
  readonly name = 'generate_image';
  readonly modes = ['media'];
  readonly description =
    'Create an image from a text prompt. Answers { success, mediaId, url, markdown, width, height }: ' +
    'put the markdown in your reply so the image shows inline; use the mediaId with edit_image to change it later.';
  readonly schema = GENERATE_IMAGE_ARGS;
  readonly promptLine =
    'create an image; put the returned `markdown` in your reply.';

  constructor(private readonly images: ImageService) {}

  /** Image models often take 30–60 s: the tool gets IMAGE_TIMEOUT_MS (plus a margin) instead of LLM_TOOL_TIMEOUT_MS. */
  get timeoutMs(): number {
    return this.images.timeoutMs + 5_000;
  }

  isAvailable(context: AiToolAvailabilityContext): boolean {
    return ImageService.isAvailable(context);
  }

  unavailableReason({ settings }: AiToolAvailabilityContext): string | null {
    return settings.imageModel ? null : 'No image model is chosen (Settings).';
  }

  async execute(
    args: z.output<typeof GENERATE_IMAGE_ARGS>,
    context: AiToolContext,
  ): Promise<string> {
    return this.images.generate(
      {
        prompt: args.prompt.trim(),
        shortDescription: args.shortDescription.trim(),
      },
      context,
    );
  }
}

const EDIT_IMAGE_ARGS = z.object({
  imageId: text(100).describe(
    'A mediaId, or the attachment id of an image the owner attached',
  ),
  prompt: text(IMAGE_PROMPT_MAX_LENGTH).describe(
    'What to change, e.g. "make the sky stormy, keep everything else"',
  ),
  shortDescription: SHORT_DESCRIPTION,
});

@AiToolProvider()
@Injectable()
export class EditImageTool implements AiTool<typeof EDIT_IMAGE_ARGS> {
  readonly name = 'edit_image';
  readonly modes = ['media'];
  readonly description =
    'Change an image made with generate_image or edit_image (its mediaId, the id in /api/media/<id>) or a PNG, JPEG or WebP ' +
    'image the owner attached (the attachment id shown next to it). Keeps the original; answers a new image like generate_image: ' +
    'put its markdown in your reply.';
  readonly schema = EDIT_IMAGE_ARGS;
  readonly promptLine =
    'change a generated or attached image; put the returned `markdown` in your reply.';

  constructor(
    private readonly images: ImageService,
    private readonly store: MediaStore,
    private readonly attachments: AttachmentsService,
  ) {}

  /** As generate_image: IMAGE_TIMEOUT_MS plus a margin. */
  get timeoutMs(): number {
    return this.images.timeoutMs + 5_000;
  }

  isAvailable(context: AiToolAvailabilityContext): boolean {
    return ImageService.isAvailable(context);
  }

  unavailableReason({ settings }: AiToolAvailabilityContext): string | null {
    return settings.imageModel ? null : 'No image model is chosen (Settings).';
  }

  async execute(
    args: z.output<typeof EDIT_IMAGE_ARGS>,
    context: AiToolContext,
  ): Promise<string> {
    const imageId = args.imageId
      .trim()
      .replace(/^\/?api\/(media|attachments)\//, '');
    const found = await this.source(imageId);
    if (typeof found === 'string') return toolError(found);
    return this.images.generate(
      {
        prompt: args.prompt.trim(),
        shortDescription: args.shortDescription.trim(),
        source: found,
      },
      context,
    );
  }

  /** A generated image first, then an attached one; a sentence for the model when neither fits. */
  private async source(id: string): Promise<EditSource | string> {
    const media = await this.store.find(id);
    if (media) {
      const bytes = await this.store.readBytes(media);
      if (!bytes)
        return `The file of image ${id} is missing; it cannot be edited.`;
      return { bytes, mime: media.mime, mediaId: id };
    }
    const attached = await this.attachments.imageSource(id);
    if (attached && 'unsupported' in attached)
      return `The attached image ${id} is ${attached.unsupported}; edit_image takes PNG, JPEG or WebP images.`;
    if (attached)
      return {
        bytes: attached.bytes,
        mime: attached.mime,
        attachmentId: attached.id,
      };
    return `No image with id ${JSON.stringify(id.slice(0, 100))}: use the mediaId returned by generate_image or edit_image, or the attachment id of an image the owner attached.`;
  }
}
