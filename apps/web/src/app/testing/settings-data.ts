import type { AppSettingsView } from '@metatronos/shared-types';

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
    braveApiKey: null,
    telegramBotToken: null,
    telegramApiRoot: 'https://api.telegram.org',
    timezone: 'UTC',
    urlFetchAllowHosts: [],
    authProfiles: [],
    disabledTools: [],
    updatedAt: null,
    ...overrides,
  };
}
