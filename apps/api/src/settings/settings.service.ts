import { BadRequestException, Injectable, Logger } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import {
  DEFAULT_MODEL_PRICES,
  type AppSettingsView,
  type UpdateAppSettingsRequest,
} from '@metatronos/shared-types';
import {
  nextBudget,
  nextModelPrices,
  nextOutputLimits,
  storedSpendSettings,
  type SpendSettings,
} from '../budget/budget-settings';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import { SandboxSecrets } from '../mongo-sandbox/sandbox-secrets';
import { MODEL_ID_HELP, routeModel } from './model-route';
import { keepWellFormed } from '../database/stored-document-shape';
import {
  APP_SETTINGS_ID,
  AppSettingsRecord,
  AppSettingsSchema,
} from './schemas/app-settings.schema';
import { isMaskedSecret, maskSecret } from './secret-mask';
import { isValidTimeZone, systemTimeZone } from './timezone';
import { telegramTokenProblem } from './telegram-token-check';
import {
  authProfilesRecord,
  authProfilesView,
  nextUrlFetchSettings,
  storedAuthProfiles,
  type UrlFetchSettings,
} from './url-fetch-settings';
import { fieldLabel } from '../http/field-labels';

/** The owner's settings with secrets in clear: for the server's own use, never for a response. */
export interface AppSettings extends UrlFetchSettings, SpendSettings {
  geminiApiKey: string | null;
  openaiApiKey: string | null;
  openaiCompatible: Array<{
    name: string;
    baseUrl: string;
    apiKey: string | null;
  }>;
  primaryModel: string | null;
  imageModel: string | null;
  realtimeModel: string | null;
  realtimeVoice: string | null;
  /** The owner's own Telegram chat with the bot: spend notices go there. */
  telegramOwnerChatId: string | null;
  braveApiKey: string | null;
  /** The Telegram bot's token (BotFather): long polling runs while it is set. */
  telegramBotToken: string | null;
  /** The Bot API server: Telegram's own, or a self-hosted one. */
  telegramApiRoot: string;
  timezone: string;
  /** Tools the owner switched off (Tools page): never offered, never run. */
  disabledTools: string[];
  /** Attended turns too wait for the owner before they send or delete. */
  alwaysConfirm: boolean;
  updatedAt: Date | null;
}

export const DEFAULT_TELEGRAM_API_ROOT = 'https://api.telegram.org';

const SECRET_FIELDS = [
  'geminiApiKey',
  'openaiApiKey',
  'braveApiKey',
  'telegramBotToken',
] as const;
/** Answers which names `disabledTools` may hold (the AI tools module registers it: settings cannot import the registry). */
export type ToolNameCheck = (name: string) => boolean;

type SecretField = (typeof SECRET_FIELDS)[number];

/**
 * Reads and writes AppSettings. Every LLM turn reads them, so the service keeps
 * the last read in memory; it is the only writer, so the copy cannot go stale.
 */
@Injectable()
export class SettingsService extends SandboxSecrets {
  private readonly logger = new Logger(SettingsService.name);
  private cached: Promise<AppSettings> | null = null;
  private toolNameCheck: ToolNameCheck | null = null;

  constructor(
    @InjectModel(AppSettingsRecord.name)
    private readonly model: Model<AppSettingsRecord>,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
  ) {
    super();
  }

  /** Called once at start-up by the tool registry's side. */
  useToolNameCheck(check: ToolNameCheck): void {
    this.toolNameCheck = check;
  }

  /** A restored backup replaced the settings document: read it again. */
  @OnEvent('backup.restored')
  forgetAfterRestore(): void {
    this.cached = null;
  }

  get(): Promise<AppSettings> {
    if (!this.cached) {
      this.cached = this.load();
      this.cached.catch(() => (this.cached = null));
    }
    return this.cached;
  }

  async view(): Promise<AppSettingsView> {
    return toView(await this.get());
  }

  async update(request: UpdateAppSettingsRequest): Promise<AppSettingsView> {
    const current = await this.get();
    const next: AppSettings = {
      ...current,
      openaiCompatible: current.openaiCompatible.map((e) => ({ ...e })),
    };
    const problems: string[] = [];

    for (const field of SECRET_FIELDS) {
      next[field] = nextSecret(request[field as SecretField], current[field]);
    }
    if (request.openaiCompatible !== undefined) {
      const names = new Set<string>();
      next.openaiCompatible = request.openaiCompatible.map((endpoint, i) => {
        if (names.has(endpoint.name))
          problems.push(
            `openaiCompatible has two endpoints named '${endpoint.name}'`,
          );
        names.add(endpoint.name);
        const baseUrl = endpoint.baseUrl.replace(/\/+$/, '');
        const kept = keptEndpointKey(
          current.openaiCompatible.find((e) => e.name === endpoint.name),
          baseUrl,
          endpoint.apiKey,
          `openaiCompatible[${i}].apiKey`,
        );
        if (typeof kept !== 'object') problems.push(kept);
        return {
          name: endpoint.name,
          baseUrl,
          apiKey:
            typeof kept === 'object'
              ? nextSecret(endpoint.apiKey, kept.key)
              : null,
        };
      });
    }
    // DTO instances define every declared field, so "absent" is undefined, never a missing key.
    if (request.primaryModel !== undefined)
      next.primaryModel = request.primaryModel?.trim() || null;
    if (request.imageModel !== undefined)
      next.imageModel = request.imageModel?.trim() || null;
    if (request.realtimeModel !== undefined)
      next.realtimeModel = request.realtimeModel?.trim() || null;
    if (request.realtimeVoice !== undefined)
      next.realtimeVoice = request.realtimeVoice?.trim() || null;
    if (request.telegramOwnerChatId !== undefined)
      next.telegramOwnerChatId =
        String(request.telegramOwnerChatId ?? '').trim() || null;
    problems.push(...nextTelegram(request, current, next));
    if (request.timezone !== undefined) {
      if (isValidTimeZone(request.timezone.trim()))
        next.timezone = request.timezone.trim();
      else
        problems.push(
          `timezone must be an IANA time zone such as Europe/Paris (got "${request.timezone}")`,
        );
    }
    // Re-checked when the endpoint list changes too: removing an endpoint must not strand the model.
    if (
      next.primaryModel &&
      (request.primaryModel !== undefined ||
        request.openaiCompatible !== undefined)
    ) {
      const route = routeModel(next.primaryModel);
      if (!route)
        problems.push(
          `${fieldLabel('primaryModel')} must be ${MODEL_ID_HELP} (got "${next.primaryModel}")`,
        );
      else if (
        route.endpoint &&
        !next.openaiCompatible.some((e) => e.name === route.endpoint)
      ) {
        problems.push(
          `primaryModel '${next.primaryModel}' names the endpoint '${route.endpoint}', which is not in openaiCompatible`,
        );
      }
    }
    if (
      next.imageModel &&
      request.imageModel !== undefined &&
      !/^[A-Za-z0-9][A-Za-z0-9._:@+/-]{0,199}$/.test(next.imageModel)
    ) {
      problems.push(
        `${fieldLabel('imageModel')} must be a model id such as gemini-2.5-flash-image or gpt-image-1 (got "${next.imageModel}")`,
      );
    }
    if (
      next.realtimeModel &&
      request.realtimeModel !== undefined &&
      !/^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,199}$/.test(next.realtimeModel)
    )
      problems.push(
        `${fieldLabel('realtimeModel')} must be a model id such as gpt-realtime (got "${next.realtimeModel}")`,
      );
    if (
      next.realtimeVoice &&
      request.realtimeVoice !== undefined &&
      !/^[A-Za-z][A-Za-z0-9_-]{0,39}$/.test(next.realtimeVoice)
    )
      problems.push(
        `${fieldLabel('realtimeVoice')} must be a voice name such as marin (got "${next.realtimeVoice}")`,
      );
    Object.assign(next, nextUrlFetchSettings(request, current, problems));
    if (request.disabledTools !== undefined) {
      const check = this.toolNameCheck;
      const unknown = request.disabledTools.filter(
        (name) => !check || !check(name),
      );
      if (unknown.length)
        problems.push(
          `${fieldLabel('disabledTools')} must name tools that can be switched off; not: ${unknown.map((n) => `'${n.slice(0, 64)}'`).join(', ')}`,
        );
      next.disabledTools = [...new Set(request.disabledTools)];
    }
    if (typeof request.alwaysConfirm === 'boolean')
      next.alwaysConfirm = request.alwaysConfirm;
    if (request.modelPrices !== undefined)
      next.modelPrices = nextModelPrices(request.modelPrices, problems);
    if (request.budget !== undefined)
      next.budget = nextBudget(request.budget, current.budget, problems);
    if (request.outputLimits !== undefined)
      next.outputLimits = nextOutputLimits(
        request.outputLimits,
        current.outputLimits,
        problems,
      );
    if (problems.length) throw new BadRequestException(problems);
    // A new token, or the token at a new server, is saved only once Telegram accepts it.
    if (
      next.telegramBotToken !== null &&
      (next.telegramBotToken !== current.telegramBotToken ||
        next.telegramApiRoot !== current.telegramApiRoot)
    ) {
      const problem = await telegramTokenProblem(
        next.telegramApiRoot,
        next.telegramBotToken,
      );
      if (problem) throw new BadRequestException([problem]);
    }

    next.updatedAt = this.clock.now();
    const { updatedAt, authProfiles, ...fields } = next;
    await this.model.updateOne(
      { _id: APP_SETTINGS_ID },
      {
        $set: {
          ...fields,
          authProfiles: authProfilesRecord(authProfiles),
          updatedAt,
        },
      },
      { upsert: true },
    );
    this.cached = Promise.resolve(next);
    this.events.emit('settings.updated', {
      updatedAt: updatedAt.toISOString(),
    });
    return toView(next);
  }

  /** Every secret value set now, so the sandbox can scrub them from anything the AI reads. */
  async currentSecrets(): Promise<string[]> {
    const settings = await this.get();
    return [
      ...SECRET_FIELDS.map((f) => settings[f]),
      ...settings.openaiCompatible.map((e) => e.apiKey),
      ...settings.authProfiles.map((p) => p.value),
    ].filter((s): s is string => !!s && s.length >= 4);
  }

  private async load(): Promise<AppSettings> {
    const found = await this.model.findById(APP_SETTINGS_ID).lean().exec();
    // A field of the wrong shape (an old restore, a hand edit) falls back to its default: the app must start.
    const { doc: stored, problems } = found
      ? keepWellFormed(AppSettingsSchema, found)
      : { doc: null, problems: [] };
    if (problems.length)
      this.logger.warn(
        `The stored settings have fields of the wrong shape, used with their defaults until saved again: ${problems.map((p) => `${p.path} ${p.problem}`).join('; ')}`,
      );
    return {
      geminiApiKey: stored?.geminiApiKey ?? null,
      openaiApiKey: stored?.openaiApiKey ?? null,
      openaiCompatible: (stored?.openaiCompatible ?? []).map((e) => ({
        name: e.name,
        baseUrl: e.baseUrl,
        apiKey: e.apiKey ?? null,
      })),
      primaryModel: stored?.primaryModel ?? null,
      imageModel: stored?.imageModel ?? null,
      realtimeModel: stored?.realtimeModel ?? null,
      realtimeVoice: stored?.realtimeVoice ?? null,
      telegramOwnerChatId: stored?.telegramOwnerChatId ?? null,
      braveApiKey: stored?.braveApiKey ?? null,
      telegramBotToken: stored?.telegramBotToken ?? null,
      telegramApiRoot: stored?.telegramApiRoot ?? DEFAULT_TELEGRAM_API_ROOT,
      timezone:
        stored?.timezone && isValidTimeZone(stored.timezone)
          ? stored.timezone
          : systemTimeZone(),
      urlFetchAllowHosts: stored?.urlFetchAllowHosts ?? [],
      authProfiles: storedAuthProfiles(stored?.authProfiles),
      disabledTools: Array.isArray(stored?.disabledTools)
        ? stored.disabledTools.filter((n) => typeof n === 'string')
        : [],
      // On for a new install (no settings stored yet); off for a document written before the setting existed.
      alwaysConfirm: stored ? stored.alwaysConfirm === true : true,
      ...storedSpendSettings(stored),
      updatedAt: stored?.updatedAt ?? null,
    };
  }
}

/**
 * The stored key an endpoint entry may keep when the request sends it masked or
 * omits it; a message naming the field when it may not. A key is bound to the
 * endpoint's name and base URL: it is never sent to an address the owner did not
 * enter it for, so a changed baseUrl needs the key again.
 */
function keptEndpointKey(
  stored: { baseUrl: string; apiKey: string | null } | undefined,
  baseUrl: string,
  apiKey: string | null | undefined,
  field: string,
): { key: string | null } | string {
  const keeps =
    apiKey === undefined ||
    (typeof apiKey === 'string' && isMaskedSecret(apiKey.trim()));
  // A new name (renamed or added endpoint) has no stored key to keep: a masked value keeps nothing.
  if (!keeps || !stored?.apiKey) return { key: null };
  if (!sameEndpointAddress(stored.baseUrl, baseUrl))
    return `${field} must be sent again because baseUrl changed (from ${stored.baseUrl} to ${baseUrl}): a stored key is only sent to the address it was entered for`;
  if (apiKey !== undefined && apiKey.trim() !== maskSecret(stored.apiKey))
    return `${field} is a masked value that does not match the stored key; send the key itself, or null to remove it`;
  return { key: stored.apiKey };
}

/**
 * Same scheme, host, port, credentials, path and query: letter case of scheme and
 * host, a default port and trailing slashes do not count as a change; a path's case does.
 */
export function sameEndpointAddress(a: string, b: string): boolean {
  const normal = (url: string): string => {
    try {
      const parsed = new URL(url);
      parsed.pathname = parsed.pathname.replace(/\/+$/, '');
      return parsed.href.replace(/\/+$/, '');
    } catch {
      return url.replace(/\/+$/, '');
    }
  };
  return normal(a) === normal(b);
}

const TELEGRAM_TOKEN = /^\d{1,20}:[A-Za-z0-9_-]{20,100}$/;

/**
 * Checks the Telegram fields of `next` (its token already merged): the token's
 * shape, and the API root as an http(s) URL. Like an endpoint key, a stored
 * token is bound to the server it was entered for: changing the root needs the
 * token again, so it is never sent to an address the owner did not enter it for.
 */
function nextTelegram(
  request: UpdateAppSettingsRequest,
  current: AppSettings,
  next: AppSettings,
): string[] {
  const problems: string[] = [];
  if (request.telegramApiRoot !== undefined) {
    const root = (
      request.telegramApiRoot?.trim() || DEFAULT_TELEGRAM_API_ROOT
    ).replace(/\/+$/, '');
    let valid = false;
    try {
      const url = new URL(root);
      valid =
        (url.protocol === 'https:' || url.protocol === 'http:') &&
        !url.username &&
        !url.password &&
        !url.search &&
        !url.hash;
    } catch {
      valid = false;
    }
    if (!valid)
      problems.push(
        `The Telegram API root must be an http(s) URL such as ${DEFAULT_TELEGRAM_API_ROOT} (got "${request.telegramApiRoot}")`,
      );
    else next.telegramApiRoot = root;
  }
  const tokenKept =
    request.telegramBotToken === undefined ||
    (typeof request.telegramBotToken === 'string' &&
      isMaskedSecret(request.telegramBotToken.trim()));
  if (
    tokenKept &&
    current.telegramBotToken &&
    !sameEndpointAddress(current.telegramApiRoot, next.telegramApiRoot)
  )
    problems.push(
      `The Telegram bot token must be given again because the Telegram API root changed (from ${current.telegramApiRoot} to ${next.telegramApiRoot}): a saved token is only sent to the server it was entered for`,
    );
  if (
    !tokenKept &&
    next.telegramBotToken !== null &&
    !TELEGRAM_TOKEN.test(next.telegramBotToken)
  )
    problems.push(
      'The Telegram bot token must be a token as BotFather gives it, like 123456789:AA… (digits, a colon, then letters, digits, - and _)',
    );
  return problems;
}

function nextSecret(
  value: string | null | undefined,
  current: string | null,
): string | null {
  if (value === undefined) return current;
  if (value === null) return null;
  const trimmed = value.trim();
  if (trimmed === '') return null;
  return isMaskedSecret(trimmed) ? current : trimmed;
}

function toView(settings: AppSettings): AppSettingsView {
  return {
    geminiApiKey: maskSecret(settings.geminiApiKey),
    openaiApiKey: maskSecret(settings.openaiApiKey),
    openaiCompatible: settings.openaiCompatible.map((e) => ({
      name: e.name,
      baseUrl: e.baseUrl,
      apiKey: maskSecret(e.apiKey),
    })),
    primaryModel: settings.primaryModel,
    imageModel: settings.imageModel,
    realtimeModel: settings.realtimeModel,
    realtimeVoice: settings.realtimeVoice,
    telegramOwnerChatId: settings.telegramOwnerChatId,
    braveApiKey: maskSecret(settings.braveApiKey),
    telegramBotToken: maskSecret(settings.telegramBotToken),
    telegramApiRoot: settings.telegramApiRoot,
    timezone: settings.timezone,
    urlFetchAllowHosts: settings.urlFetchAllowHosts,
    authProfiles: authProfilesView(settings.authProfiles),
    disabledTools: [...settings.disabledTools],
    alwaysConfirm: settings.alwaysConfirm,
    modelPrices: settings.modelPrices.map((p) => ({ ...p })),
    defaultModelPrices: DEFAULT_MODEL_PRICES.map((p) => ({ ...p })),
    budget: { ...settings.budget },
    outputLimits: { ...settings.outputLimits },
    updatedAt: settings.updatedAt ? settings.updatedAt.toISOString() : null,
  };
}
