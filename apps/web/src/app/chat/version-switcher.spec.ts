import { type ComponentFixture, TestBed } from '@angular/core/testing';
import type { MessageVersions } from '@metatronos/shared-types';
import { VersionSwitcher } from './version-switcher';

describe('VersionSwitcher', () => {
  let fixture: ComponentFixture<VersionSwitcher>;
  let asked: number[];
  const root = () => fixture.nativeElement as HTMLElement;
  const button = (testId: string) =>
    root().querySelector(`[data-testid="${testId}"]`) as HTMLButtonElement;

  async function show(
    versions: MessageVersions,
    disabled = false,
  ): Promise<void> {
    fixture = TestBed.createComponent(VersionSwitcher);
    fixture.componentRef.setInput('versions', versions);
    fixture.componentRef.setInput('disabled', disabled);
    asked = [];
    fixture.componentInstance.go.subscribe((n) => asked.push(n));
    await fixture.whenStable();
  }

  it('shows n/m in a labelled group and asks for the version before or after', async () => {
    await show({ index: 2, count: 3 });
    const group = root().querySelector('[role="group"]');
    expect(group?.getAttribute('aria-label')).toBe('Version 2 of 3');
    expect(
      root().querySelector('[data-testid="version-label"]')?.textContent,
    ).toBe('2/3');
    expect(button('version-previous').getAttribute('aria-label')).toBe(
      'Previous version',
    );
    expect(button('version-next').getAttribute('aria-label')).toBe(
      'Next version',
    );
    button('version-previous').click();
    button('version-next').click();
    expect(asked).toEqual([1, 3]);
  });

  it('offers no arrow past the first or the last version', async () => {
    await show({ index: 1, count: 2 });
    expect(button('version-previous').disabled).toBe(true);
    expect(button('version-next').disabled).toBe(false);
    await show({ index: 2, count: 2 });
    expect(button('version-previous').disabled).toBe(false);
    expect(button('version-next').disabled).toBe(true);
  });

  it('keeps both arrows waiting while disabled (a reply runs)', async () => {
    await show({ index: 2, count: 3 }, true);
    expect(button('version-previous').disabled).toBe(true);
    expect(button('version-next').disabled).toBe(true);
    button('version-previous').click();
    expect(asked).toEqual([]);
  });

  it('is reached with the keyboard: real buttons, in order', async () => {
    await show({ index: 2, count: 3 });
    const buttons = Array.from(root().querySelectorAll('button'));
    expect(buttons.map((b) => b.dataset['testid'])).toEqual([
      'version-previous',
      'version-next',
    ]);
    expect(buttons.every((b) => b.type === 'button' && b.tabIndex === 0)).toBe(
      true,
    );
  });
});
