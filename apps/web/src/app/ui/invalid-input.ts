import { Directive, effect, inject, input } from '@angular/core';
import { MatInput } from '@angular/material/input';

/**
 * Puts a `matInput` without a form control into Material's error state while `mtInvalid` is true: the field
 * turns red and gets `aria-invalid="true"` (a plain `[attr.aria-invalid]` would be overwritten by MatInput).
 */
@Directive({ selector: '[matInput][mtInvalid]' })
export class InvalidInput {
  readonly mtInvalid = input(false);

  constructor() {
    const field = inject(MatInput);
    effect(() => {
      const invalid = this.mtInvalid();
      if (field.errorState !== invalid) {
        field.errorState = invalid;
        field.stateChanges.next();
      }
    });
  }
}
