import {
  ChangeDetectionStrategy,
  Component,
  input,
  model,
} from '@angular/core';
import { MatIconButton } from '@angular/material/button';
import { Icon } from './icon';

/** The eye button that shows or hides a password field's text; place it with `matSuffix`. */
@Component({
  selector: 'mt-visibility-toggle',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [MatIconButton, Icon],
  template: `
    <button
      mat-icon-button
      type="button"
      [attr.aria-label]="(visible() ? 'Hide ' : 'Show ') + subject()"
      [attr.aria-pressed]="visible()"
      (click)="visible.set(!visible())"
    >
      <mt-icon [name]="visible() ? 'visibilityOff' : 'visibility'" />
    </button>
  `,
})
export class VisibilityToggle {
  readonly visible = model(false);
  /** What it shows, for the accessible label ("Show password"). */
  readonly subject = input('password');
}
