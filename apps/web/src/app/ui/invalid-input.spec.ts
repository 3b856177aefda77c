import { Component, signal } from '@angular/core';
import { TestBed } from '@angular/core/testing';
import { MatFormField, MatLabel } from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import { InvalidInput } from './invalid-input';

@Component({
  imports: [MatFormField, MatLabel, MatInput, InvalidInput],
  template: `
    <mat-form-field>
      <mat-label>Notes</mat-label>
      <textarea matInput value="Some notes" [mtInvalid]="invalid()"></textarea>
    </mat-form-field>
  `,
})
class Host {
  readonly invalid = signal(false);
}

describe('InvalidInput', () => {
  it('puts the field into the error state while mtInvalid is true, aria-invalid included', async () => {
    const fixture = TestBed.createComponent(Host);
    await fixture.whenStable();
    const root: HTMLElement = fixture.nativeElement;
    const field = root.querySelector('textarea') as HTMLTextAreaElement;
    expect(field.getAttribute('aria-invalid')).toBe('false');
    expect(root.querySelector('mat-form-field')?.classList).not.toContain(
      'mat-form-field-invalid',
    );

    fixture.componentInstance.invalid.set(true);
    await fixture.whenStable();
    expect(field.getAttribute('aria-invalid')).toBe('true');
    expect(root.querySelector('mat-form-field')?.classList).toContain(
      'mat-form-field-invalid',
    );

    fixture.componentInstance.invalid.set(false);
    await fixture.whenStable();
    expect(field.getAttribute('aria-invalid')).toBe('false');
  });
});
