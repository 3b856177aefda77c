import type {
  AbstractControl,
  FormControl,
  FormGroupDirective,
  NgForm,
  ValidationErrors,
  ValidatorFn,
} from '@angular/forms';
import type { ErrorStateMatcher } from '@angular/material/core';

/** Group validator: `password` and `confirm` must be equal (only checked once both have a value). */
export const passwordsMatch: ValidatorFn = (
  group: AbstractControl,
): ValidationErrors | null => {
  const password: unknown = group.get('password')?.value;
  const confirm: unknown = group.get('confirm')?.value;
  return password && confirm && password !== confirm
    ? { mismatch: true }
    : null;
};

/** Shows errors while typing (dirty), not only after the field lost focus. */
export class LiveErrorStateMatcher implements ErrorStateMatcher {
  isErrorState(
    control: FormControl | null,
    form: FormGroupDirective | NgForm | null,
  ): boolean {
    return (
      !!control &&
      control.invalid &&
      (control.dirty || control.touched || !!form?.submitted)
    );
  }
}

/** The confirmation field is also in error when it does not match the password. */
export class ConfirmErrorStateMatcher implements ErrorStateMatcher {
  isErrorState(
    control: FormControl | null,
    form: FormGroupDirective | NgForm | null,
  ): boolean {
    if (!control) return false;
    const shown = control.dirty || control.touched || !!form?.submitted;
    return shown && (control.invalid || !!control.parent?.hasError('mismatch'));
  }
}
