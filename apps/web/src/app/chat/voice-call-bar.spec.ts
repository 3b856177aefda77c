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
});
