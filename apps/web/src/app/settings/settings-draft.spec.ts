import { settingsView } from '../testing/settings-data';
import type { AppSettingsView } from '@metatronos/shared-types';
import {
  draftFrom,
  endpointErrors,
  modelWarning,
  newEndpointDraft,
  settingsChanges,
} from './settings-draft';

const SAVED: AppSettingsView = settingsView({
  geminiApiKey: '••••abcd',
  openaiApiKey: null,
  openaiCompatible: [
    {
      name: 'ollama',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: '••••wxyz',
    },
  ],
  primaryModel: 'gemini-2.5-flash',
  imageModel: null,
  braveApiKey: null,
  timezone: 'Europe/Paris',
  urlFetchAllowHosts: [],
  authProfiles: [],
  updatedAt: '2026-01-01T00:00:00.000Z',
});

describe('settingsChanges', () => {
  it('sends nothing for an untouched form: empty secrets and masked endpoint keys are "unchanged"', () => {
    expect(settingsChanges(SAVED, draftFrom(SAVED))).toEqual({});
  });

  it('sends a typed secret, trimmed, and null to remove one', () => {
    const draft = draftFrom(SAVED);
    draft.openaiApiKey = { value: '  sk-new  ', remove: false };
    draft.geminiApiKey = { value: '', remove: true };
    expect(settingsChanges(SAVED, draft)).toEqual({
      openaiApiKey: 'sk-new',
      geminiApiKey: null,
    });
  });

  it('never sends the mask back as a new secret, nor removes a secret that is not set', () => {
    const draft = draftFrom(SAVED);
    draft.geminiApiKey = { value: '••••abcd', remove: false };
    draft.braveApiKey = { value: '', remove: true };
    expect(settingsChanges(SAVED, draft)).toEqual({});
  });

  it('sends models and the time zone only when they changed; an emptied model is null', () => {
    const draft = draftFrom(SAVED);
    draft.primaryModel = ' gpt-4.1-mini ';
    draft.imageModel = '';
    draft.timezone = 'Europe/Paris';
    expect(settingsChanges(SAVED, draft)).toEqual({
      primaryModel: 'gpt-4.1-mini',
    });
    draft.primaryModel = '';
    draft.timezone = 'America/New_York';
    expect(settingsChanges(SAVED, draft)).toEqual({
      primaryModel: null,
      timezone: 'America/New_York',
    });
  });

  it('sends the whole endpoint list when a row changed, keeping untouched keys by their mask', () => {
    const draft = draftFrom(SAVED);
    draft.openaiCompatible = [
      ...draft.openaiCompatible,
      {
        ...newEndpointDraft(),
        name: 'lmstudio',
        baseUrl: 'http://box:1234/v1',
      },
    ];
    expect(settingsChanges(SAVED, draft)).toEqual({
      openaiCompatible: [
        {
          name: 'ollama',
          baseUrl: 'http://127.0.0.1:11434/v1',
          apiKey: '••••wxyz',
        },
        { name: 'lmstudio', baseUrl: 'http://box:1234/v1', apiKey: null },
      ],
    });
  });

  it('sends a new or removed endpoint key, and an empty list when every endpoint was removed', () => {
    const draft = draftFrom(SAVED);
    draft.openaiCompatible = [
      { ...draft.openaiCompatible[0], apiKey: { value: '', remove: true } },
    ];
    expect(settingsChanges(SAVED, draft).openaiCompatible).toEqual([
      { name: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1', apiKey: null },
    ]);
    draft.openaiCompatible = [
      {
        ...draft.openaiCompatible[0],
        apiKey: { value: 'secret', remove: false },
      },
    ];
    expect(settingsChanges(SAVED, draft).openaiCompatible).toEqual([
      {
        name: 'ollama',
        baseUrl: 'http://127.0.0.1:11434/v1',
        apiKey: 'secret',
      },
    ]);
    draft.openaiCompatible = [];
    expect(settingsChanges(SAVED, draft)).toEqual({ openaiCompatible: [] });
  });
});

describe('endpointErrors', () => {
  it('asks for a valid, unique name and an http(s) base URL', () => {
    const rows = [
      {
        ...newEndpointDraft(),
        name: 'ollama',
        baseUrl: 'http://127.0.0.1:11434/v1',
      },
      { ...newEndpointDraft(), name: 'ollama', baseUrl: 'ftp://x' },
      { ...newEndpointDraft(), name: 'has space', baseUrl: '' },
    ];
    const errors = endpointErrors(rows);
    expect(errors.get(rows[0].key)).toBeUndefined();
    expect(errors.get(rows[1].key)).toEqual({
      name: 'Another endpoint has this name.',
      baseUrl: expect.stringContaining('http://'),
    });
    expect(errors.get(rows[2].key)).toEqual({
      name: 'Letters, digits, - and _ only.',
      baseUrl: 'Enter the base URL.',
    });
  });
});

describe('modelWarning', () => {
  const has = { gemini: true, openai: false, endpoints: ['ollama'] };
  it('explains what a model id needs', () => {
    expect(modelWarning('gemini-2.5-flash', has)).toBeNull();
    expect(modelWarning('ollama/llama3.2', has)).toBeNull();
    expect(modelWarning('', has)).toBeNull();
    expect(modelWarning('gpt-4.1-mini', has)).toBe(
      'OpenAI models need an OpenAI API key.',
    );
    expect(modelWarning('o4-mini', has)).toBe(
      'OpenAI models need an OpenAI API key.',
    );
    expect(modelWarning('vllm/qwen', has)).toBe(
      'No OpenAI-compatible endpoint is named “vllm”.',
    );
    expect(modelWarning('claude-3', has)).toContain('Unknown model id');
  });
});
