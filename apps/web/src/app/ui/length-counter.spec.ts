import { Component, signal } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { LengthCounter } from './length-counter';

@Component({
  imports: [LengthCounter],
  template: `<mt-length-counter [length]="length()" [max]="10" />`,
})
class Host {
  readonly length = signal(10);
}

describe('LengthCounter', () => {
  it('shows the length against the limit and marks it once it is over', async () => {
    const fixture = TestBed.createComponent(Host);
    await fixture.whenStable();
    const counter: HTMLElement =
      fixture.nativeElement.querySelector('mt-length-counter');
    expect(counter.textContent).toBe('10 / 10');
    expect(counter.classList).not.toContain('over');

    fixture.componentInstance.length.set(11);
    await fixture.whenStable();
    expect(counter.textContent).toBe('11 / 10');
    expect(counter.classList).toContain('over');
  });
});
