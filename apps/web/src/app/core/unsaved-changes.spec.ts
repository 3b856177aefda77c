import { Component, signal } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { warnBeforeUnload } from './unsaved-changes';

@Component({ template: '' })
class Editor {
  readonly dirty = signal(false);

  constructor() {
    warnBeforeUnload(this.dirty);
  }
}

describe('warnBeforeUnload', () => {
  const unload = () => {
    const event = new Event('beforeunload', { cancelable: true });
    window.dispatchEvent(event);
    return event;
  };

  it('asks before leaving only while there are unsaved edits, and stops with the component', () => {
    const fixture = TestBed.createComponent(Editor);
    expect(unload().defaultPrevented).toBe(false);

    fixture.componentInstance.dirty.set(true);
    expect(unload().defaultPrevented).toBe(true);

    fixture.destroy();
    expect(unload().defaultPrevented).toBe(false);
  });
});
