import {
  ChangeDetectionStrategy,
  Component,
  ElementRef,
  computed,
  effect,
  input,
  signal,
  viewChild,
} from '@angular/core';
import { mediaUrl } from '../core/api-client';
import { Icon } from '../ui/icon';

/** A safe ASCII file name for the download attribute: `Red-fox-in-snow.png`. */
export function mediaFileName(description: string, fallback = 'image'): string {
  const base = description
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 60)
    .replace(/[-.]+$/, '');
  return `${base || fallback}.png`;
}

/**
 * An image served by MetatronOS (`/api/media/<id>`): a thumbnail that opens a
 * simple viewer overlay with the full image and a download link. The id is
 * checked by the caller; the URL is built here, never taken from a tool result.
 */
@Component({
  selector: 'mt-media-image',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [Icon],
  host: { '(document:keydown.escape)': 'close()' },
  template: `
    <button
      type="button"
      class="thumb"
      data-testid="media-thumb"
      [attr.aria-label]="'Open image: ' + label()"
      (click)="open()"
    >
      <img
        [src]="url()"
        [alt]="label()"
        [attr.width]="width()"
        [attr.height]="height()"
        loading="lazy"
      />
    </button>
    @if (viewing()) {
      <div class="overlay" data-testid="media-viewer">
        <button
          type="button"
          class="backdrop"
          data-testid="media-backdrop"
          aria-label="Close"
          tabindex="-1"
          (click)="close()"
        ></button>
        <div
          #dialog
          class="viewer"
          role="dialog"
          aria-modal="true"
          [attr.aria-label]="label()"
          tabindex="-1"
        >
          <img class="full" [src]="url()" [alt]="label()" />
          <div class="actions">
            <span class="caption">{{ label() }}</span>
            <a
              class="download"
              data-testid="media-download"
              [href]="url()"
              [attr.download]="fileName()"
              >Download</a
            >
            <button
              type="button"
              class="close"
              data-testid="media-close"
              aria-label="Close"
              (click)="close()"
            >
              <mt-icon name="close" aria-hidden="true" />
            </button>
          </div>
        </div>
      </div>
    }
  `,
  styles: `
    :host {
      display: block;
    }
    .thumb {
      display: inline-block;
      padding: 0;
      border: 1px solid var(--mat-sys-outline-variant);
      border-radius: var(--mat-sys-corner-small);
      background: var(--mat-sys-surface-container-high);
      cursor: zoom-in;
      line-height: 0;
      overflow: hidden;
    }
    .thumb:focus-visible {
      outline: 2px solid var(--mat-sys-primary);
      outline-offset: 2px;
    }
    .thumb {
      max-width: 100%;
    }
    .thumb img {
      /* A fixed cap (not a percentage of the shrink-to-fit button) so the button hugs the scaled image. */
      display: block;
      max-width: 240px;
      max-height: 240px;
      width: auto;
      height: auto;
      object-fit: contain;
    }
    .overlay {
      position: fixed;
      inset: 0;
      z-index: 1000;
      display: flex;
      align-items: center;
      justify-content: center;
      padding: 24px;
    }
    .backdrop {
      position: absolute;
      inset: 0;
      border: 0;
      background: rgb(0 0 0 / 75%);
      cursor: zoom-out;
    }
    .viewer {
      position: relative;
      display: flex;
      flex-direction: column;
      gap: 8px;
      max-width: 100%;
      max-height: 100%;
      outline: none;
    }
    .full {
      max-width: 100%;
      max-height: calc(100vh - 120px);
      object-fit: contain;
      background: var(--mat-sys-surface-container-high);
    }
    .actions {
      display: flex;
      align-items: center;
      gap: 12px;
      color: #fff;
      font: var(--mat-sys-body-medium);
    }
    .caption {
      flex: 1;
      overflow-wrap: anywhere;
    }
    .download {
      color: #fff;
    }
    .close {
      display: inline-flex;
      padding: 6px;
      border: 0;
      border-radius: 50%;
      background: rgb(255 255 255 / 15%);
      color: #fff;
      cursor: pointer;
      --mt-icon-size: 20px;
    }
  `,
})
export class MediaImage {
  /** A media id (24 hex digits), checked by the caller. */
  readonly mediaId = input.required<string>();
  readonly description = input('');
  readonly width = input<number | null>(null);
  readonly height = input<number | null>(null);

  protected readonly viewing = signal(false);
  private readonly dialog = viewChild<ElementRef<HTMLElement>>('dialog');

  protected readonly url = computed(() => mediaUrl(this.mediaId()));
  protected readonly label = computed(
    () => this.description().trim() || 'Generated image',
  );
  protected readonly fileName = computed(() =>
    mediaFileName(this.description()),
  );

  constructor() {
    // Focus moves into the viewer so Escape and screen readers land there.
    effect(() => this.dialog()?.nativeElement.focus());
  }

  open(): void {
    this.viewing.set(true);
  }

  close(): void {
    this.viewing.set(false);
  }
}
