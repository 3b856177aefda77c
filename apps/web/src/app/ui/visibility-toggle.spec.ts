import { Component, signal } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { VisibilityToggle } from './visibility-toggle';

@Component({
  imports: [VisibilityToggle],
  template: `<mt-visibility-toggle [(visible)]="shown" subject="passwords" />`,
})
class Host {
  readonly shown = signal(false);
}

describe('VisibilityToggle', () => {
  it('flips the bound signal and says what it will do next', async () => {
    const fixture = TestBed.createComponent(Host);
    await fixture.whenStable();
    const button: HTMLButtonElement =
      fixture.nativeElement.querySelector('button');
    expect(button.getAttribute('aria-label')).toBe('Show passwords');
    expect(button.getAttribute('aria-pressed')).toBe('false');

    button.click();
    await fixture.whenStable();
    expect(fixture.componentInstance.shown()).toBe(true);
    expect(button.getAttribute('aria-label')).toBe('Hide passwords');
    expect(button.getAttribute('aria-pressed')).toBe('true');

    button.click();
    await fixture.whenStable();
    expect(fixture.componentInstance.shown()).toBe(false);
  });
});
