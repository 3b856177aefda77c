import type { HttpTestingController } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import {
  setUpApiTest,
  tearDownApiTest,
  testIdQueries,
} from '../testing/api-test';
import { settingsView } from '../testing/settings-data';
import { VoiceSettingsCard } from './voice-settings-card';

describe('VoiceSettingsCard', () => {
  let http: HttpTestingController;

  beforeEach(() => {
    ({ http } = setUpApiTest(VoiceSettingsCard));
  });

  afterEach(() => tearDownApiTest(http));

  async function render(realtime: {
    realtimeModel: string | null;
    realtimeVoice: string | null;
  }) {
    const fixture = TestBed.createComponent(VoiceSettingsCard);
    fixture.componentRef.setInput('settings', {
      ...settingsView(),
      ...realtime,
    });
    await fixture.whenStable();
    const root = fixture.nativeElement as HTMLElement;
    return { fixture, ...testIdQueries(() => root) };
  }

  const type = (input: HTMLInputElement | null, value: string) => {
    if (!input) throw new Error('no input');
    input.value = value;
    input.dispatchEvent(new Event('input'));
  };

  it('shows the saved model and voice, and sends only these two (blank → the default)', async () => {
    const { fixture, el } = await render({
      realtimeModel: 'gpt-realtime-mini',
      realtimeVoice: null,
    });
    const model = el<HTMLInputElement>('voice-realtime-model');
    const voice = el<HTMLInputElement>('voice-realtime-voice');
    expect(model?.value).toBe('gpt-realtime-mini');
    expect(voice?.value).toBe('');
    expect(voice?.placeholder).toBe('marin');
    type(model, '  ');
    type(voice, 'cedar');
    el<HTMLButtonElement>('voice-settings-save')?.click();
    const req = http.expectOne('/api/settings');
    expect(req.request.method).toBe('PATCH');
    expect(req.request.body).toEqual({
      realtimeModel: null,
      realtimeVoice: 'cedar',
    });
    req.flush({
      ...settingsView(),
      realtimeModel: null,
      realtimeVoice: 'cedar',
    });
    await fixture.whenStable();
    expect(el('voice-settings-saved')?.textContent).toMatch(/Saved/);
    expect(el<HTMLInputElement>('voice-realtime-voice')?.value).toBe('cedar');
  });

  it('says in words why the server refused', async () => {
    const { fixture, el } = await render({
      realtimeModel: null,
      realtimeVoice: null,
    });
    type(el<HTMLInputElement>('voice-realtime-voice'), 'x'.repeat(41));
    el<HTMLButtonElement>('voice-settings-save')?.click();
    http.expectOne('/api/settings').flush(
      {
        statusCode: 400,
        message: [
          'realtimeVoice must be shorter than or equal to 40 characters',
        ],
      },
      { status: 400, statusText: 'Bad Request' },
    );
    await fixture.whenStable();
    expect(el('voice-settings-error')?.textContent).toMatch(/realtimeVoice/);
    expect(el('voice-settings-saved')).toBeNull();
  });
});
