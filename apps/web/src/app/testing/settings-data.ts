import {
  DEFAULT_BUDGET,
  DEFAULT_MODEL_PRICES,
  DEFAULT_OUTPUT_LIMITS,
  type AppSettingsView,
} from '@metatronos/shared-types';

/** A complete `GET /api/settings` answer for specs: nothing configured, unless `overrides` say otherwise. */
export function settingsView(
  overrides: Partial<AppSettingsView> = {},
): AppSettingsView {
  return {
    geminiApiKey: null,
    openaiApiKey: null,
    openaiCompatible: [],
    primaryModel: null,
    imageModel: null,
    realtimeModel: null,
    realtimeVoice: null,
    telegramOwnerChatId: null,
    braveApiKey: null,
    telegramBotToken: null,
    telegramApiRoot: 'https://api.telegram.org',
    timezone: 'UTC',
    urlFetchAllowHosts: [],
    authProfiles: [],
    disabledTools: [],
    modelPrices: [],
    defaultModelPrices: [...DEFAULT_MODEL_PRICES],
    budget: { ...DEFAULT_BUDGET },
    outputLimits: { ...DEFAULT_OUTPUT_LIMITS },
    updatedAt: null,
    ...overrides,
  };
}
