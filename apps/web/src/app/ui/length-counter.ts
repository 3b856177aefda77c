import { ChangeDetectionStrategy, Component, input } from '@angular/core';

/**
 * "120 / 2000" under a text field with a length limit, red once it is over. Place it in a
 * `<mat-hint align="end">` and give it an `id` for the field's `aria-describedby`.
 */
@Component({
  selector: 'mt-length-counter',
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: '{{ length() }} / {{ max() }}',
  styles: `
    :host {
      font-variant-numeric: tabular-nums;
    }

    :host(.over) {
      color: var(--mat-sys-error);
      font-weight: 600;
    }
  `,
  host: { '[class.over]': 'length() > max()' },
})
export class LengthCounter {
  readonly length = input.required<number>();
  readonly max = input.required<number>();
}
