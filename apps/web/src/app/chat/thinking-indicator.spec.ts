import { TestBed } from '@angular/core/testing';
import { ThinkingIndicator, elapsedText } from './thinking-indicator';

describe('ThinkingIndicator', () => {
  afterEach(() => jest.useRealTimers());

  it('counts the seconds since the wait began, every second', () => {
    jest.useFakeTimers({ now: Date.parse('2026-01-01T10:00:00Z') });
    const fixture = TestBed.createComponent(ThinkingIndicator);
    fixture.componentRef.setInput('since', Date.now() - 4_000);
    fixture.detectChanges();
    const text = () =>
      (fixture.nativeElement as HTMLElement).textContent?.replace(/\s+/g, ' ');
    expect(text()).toContain('Thinking… 4 s');
    jest.advanceTimersByTime(3_000);
    fixture.detectChanges();
    expect(text()).toContain('Thinking… 7 s');
    jest.advanceTimersByTime(20_000);
    fixture.detectChanges();
    expect(text()).toContain('Still waiting for the model… 27 s');
  });

  it('writes minutes past a minute', () => {
    expect(elapsedText(0)).toBe('0 s');
    expect(elapsedText(59_999)).toBe('59 s');
    expect(elapsedText(65_000)).toBe('1 min 5 s');
    expect(elapsedText(-5)).toBe('0 s');
  });
});
