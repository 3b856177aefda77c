import { Component, signal } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { Router, provideRouter } from '@angular/router';
import { RouterTestingHarness } from '@angular/router/testing';
import {
  CONFIRM,
  LEAVE_QUESTION,
  unsavedChangesGuard,
  warnBeforeUnload,
} from './unsaved-changes';

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

@Component({ template: '<input data-testid="field" />' })
class SavingEditor {
  readonly dirty = signal(false);
  readonly save = jest.fn(() => this.dirty.set(false));

  constructor() {
    warnBeforeUnload(this.dirty, this.save);
  }
}

@Component({ template: '<p>Elsewhere</p>' })
class Elsewhere {}

describe('unsaved edits and in-app navigation', () => {
  let confirm: jest.Mock;

  beforeEach(() => {
    confirm = jest.fn(() => false);
    TestBed.configureTestingModule({
      providers: [
        { provide: CONFIRM, useValue: confirm },
        provideRouter([
          {
            path: 'edit',
            component: SavingEditor,
            canDeactivate: [unsavedChangesGuard],
          },
          { path: 'elsewhere', component: Elsewhere },
        ]),
      ],
    });
  });

  it('asks before leaving a page with unsaved edits, and stays when the owner says no', async () => {
    const harness = await RouterTestingHarness.create('/edit');
    const router = TestBed.inject(Router);
    const editor = harness.routeDebugElement?.componentInstance as SavingEditor;

    // Nothing unsaved: no question.
    await harness.navigateByUrl('/elsewhere');
    expect(confirm).not.toHaveBeenCalled();
    expect(router.url).toBe('/elsewhere');

    await harness.navigateByUrl('/edit');
    const dirtyEditor = harness.routeDebugElement
      ?.componentInstance as SavingEditor;
    expect(dirtyEditor).not.toBe(editor);
    dirtyEditor.dirty.set(true);
    await harness.navigateByUrl('/elsewhere');
    expect(confirm).toHaveBeenCalledWith(LEAVE_QUESTION);
    expect(router.url).toBe('/edit');

    confirm.mockReturnValue(true);
    await harness.navigateByUrl('/elsewhere');
    expect(router.url).toBe('/elsewhere');
  });

  it('saves the form on Ctrl+S or Cmd+S instead of the browser saving the page', async () => {
    const harness = await RouterTestingHarness.create('/edit');
    const editor = harness.routeDebugElement?.componentInstance as SavingEditor;
    const press = (init: KeyboardEventInit) => {
      const event = new KeyboardEvent('keydown', {
        key: 's',
        cancelable: true,
        bubbles: true,
        ...init,
      });
      (
        harness.routeNativeElement?.querySelector('input') as HTMLInputElement
      ).dispatchEvent(event);
      return event;
    };

    // Nothing to save: the browser's dialog is still kept away, nothing is sent.
    expect(press({ ctrlKey: true }).defaultPrevented).toBe(true);
    expect(editor.save).not.toHaveBeenCalled();

    editor.dirty.set(true);
    expect(press({ ctrlKey: true }).defaultPrevented).toBe(true);
    expect(editor.save).toHaveBeenCalledTimes(1);

    editor.dirty.set(true);
    expect(press({ metaKey: true, key: 'S' }).defaultPrevented).toBe(true);
    expect(editor.save).toHaveBeenCalledTimes(2);

    // Plain "s" is typing.
    editor.dirty.set(true);
    expect(press({}).defaultPrevented).toBe(false);
    expect(editor.save).toHaveBeenCalledTimes(2);
  });

  it('leaves Ctrl+S to the browser when no form is shown', async () => {
    await RouterTestingHarness.create('/elsewhere');
    const event = new KeyboardEvent('keydown', {
      key: 's',
      ctrlKey: true,
      cancelable: true,
    });
    document.dispatchEvent(event);
    expect(event.defaultPrevented).toBe(false);
  });
});
