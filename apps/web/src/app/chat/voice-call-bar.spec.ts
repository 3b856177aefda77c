import type { HttpTestingController } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import { setUpApiTest, tearDownApiTest } from '../testing/api-test';
import { VoiceCallBar } from './voice-call-bar';

describe('VoiceCallBar', () => {
  let http: HttpTestingController;
  const saved = Object.getOwnPropertyDescriptor(navigator, 'mediaDevices');

  beforeEach(() => {
    ({ http } = setUpApiTest(VoiceCallBar));
  });

  afterEach(() => {
    tearDownApiTest(http);
    if (saved) Object.defineProperty(navigator, 'mediaDevices', saved);
    else delete (navigator as { mediaDevices?: unknown }).mediaDevices;
  });

  async function press(): Promise<HTMLElement> {
    const fixture = TestBed.createComponent(VoiceCallBar);
    fixture.componentRef.setInput('chatId', 'c1');
    await fixture.whenStable();
    const element = fixture.nativeElement as HTMLElement;
    const mic = element.querySelector<HTMLButtonElement>(
      '[data-testid="mic-button"]',
    );
    expect(mic?.getAttribute('aria-label')).toContain('Talk to Metatron');
    mic?.click();
    await fixture.componentInstance.start();
    await fixture.whenStable();
    return element;
  }

  it('explains a refused microphone in plain words and starts no call', async () => {
    Object.defineProperty(navigator, 'mediaDevices', {
      configurable: true,
      value: {
        getUserMedia: () =>
          Promise.reject(
            Object.assign(new Error('denied'), { name: 'NotAllowedError' }),
          ),
      },
    });
    const element = await press();
    expect(
      element.querySelector('[data-testid="call-problem"]')?.textContent,
    ).toMatch(/microphone is blocked/);
    expect(element.querySelector('[data-testid="call-bar"]')).toBeNull();
    expect(element.querySelector('[data-testid="mic-button"]')).not.toBeNull();
    http.expectNone('/api/voice/calls');
  });

  it('says so when the browser has no microphone at all', async () => {
    Object.defineProperty(navigator, 'mediaDevices', {
      configurable: true,
      value: undefined,
    });
    const element = await press();
    expect(
      element.querySelector('[data-testid="call-problem"]')?.textContent,
    ).toMatch(/No microphone/);
    http.expectNone('/api/voice/calls');
  });

  function grantMicrophone(): void {
    const track = { stop: jest.fn(), enabled: true };
    Object.defineProperty(navigator, 'mediaDevices', {
      configurable: true,
      value: {
        getUserMedia: () =>
          Promise.resolve({
            getTracks: () => [track],
            getAudioTracks: () => [track],
          }),
      },
    });
  }

  async function pressAndAnswer(
    provider: 'gemini' | 'openai',
  ): Promise<{ element: HTMLElement; settle: () => Promise<void> }> {
    const fixture = TestBed.createComponent(VoiceCallBar);
    fixture.componentRef.setInput('chatId', 'c1');
    await fixture.whenStable();
    const started = fixture.componentInstance.start();
    await new Promise((r) => setTimeout(r));
    http
      .expectOne('/api/voice/provider?chatId=c1')
      .flush({ provider, model: 'm' });
    await new Promise((r) => setTimeout(r));
    return {
      element: fixture.nativeElement as HTMLElement,
      settle: async () => {
        await started;
        await fixture.whenStable();
      },
    };
  }

  it('calls through the Gemini relay when the chat model is a Gemini Live model, and says which key is missing', async () => {
    grantMicrophone();
    const { element, settle } = await pressAndAnswer('gemini');
    const relay = http.expectOne('/api/voice/relay-calls');
    expect(relay.request.body).toEqual({ chatId: 'c1' });
    relay.flush(
      {
        message:
          "No Gemini API key is set, and this chat's model speaks through Gemini Live: add the key in Settings.",
      },
      { status: 409, statusText: 'Conflict' },
    );
    await settle();
    expect(
      element.querySelector('[data-testid="call-problem"]')?.textContent,
    ).toMatch(/Gemini API key/);
    http.expectNone('/api/voice/calls');
  });

  it('keeps WebRTC to OpenAI for any other chat', async () => {
    grantMicrophone();
    const { element, settle } = await pressAndAnswer('openai');
    await settle();
    http.expectNone('/api/voice/relay-calls');
    // jsdom has no WebRTC: the OpenAI path got as far as the peer connection.
    expect(
      element.querySelector('[data-testid="call-problem"]')?.textContent,
    ).toMatch(/cannot make calls/);
  });
});
