import { ChangeDetectionStrategy, Component, input } from '@angular/core';
import {
  type MessageAttachment,
  attachmentUrl,
} from '@metatronos/shared-types';
import { Icon } from '../ui/icon';
import { formatBytes } from './attachment-uploads';

/** The files of a sent message: images as thumbnails (open full size), other files as download chips. */
@Component({
  selector: 'mt-attachment-list',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [Icon],
  template: `
    @for (file of attachments(); track file.id) {
      @if (file.kind === 'image') {
        <a
          class="thumb"
          [href]="url(file)"
          target="_blank"
          rel="noopener"
          data-testid="attachment-image"
          [attr.title]="file.name"
        >
          <img [src]="url(file)" [alt]="file.name" loading="lazy" />
        </a>
      } @else {
        <a
          class="file"
          [href]="url(file)"
          [attr.download]="file.name"
          data-testid="attachment-file"
        >
          <mt-icon name="description" />
          <span class="name">{{ file.name }}</span>
          <span class="size">{{ size(file) }}</span>
        </a>
      }
    }
  `,
  styles: `
    :host {
      display: flex;
      flex-wrap: wrap;
      gap: 6px;
      margin-bottom: 6px;
    }
    .thumb {
      display: block;
      line-height: 0;
      border-radius: 8px;
      overflow: hidden;
      background: var(--mat-sys-surface-container-high);
    }
    .thumb img {
      max-width: 200px;
      max-height: 160px;
      object-fit: cover;
    }
    .file {
      --mt-icon-size: 18px;
      display: inline-flex;
      align-items: center;
      gap: 6px;
      max-width: 100%;
      padding: 4px 10px;
      border-radius: 16px;
      background: var(--mat-sys-surface-container-high);
      color: var(--mat-sys-on-surface);
      font: var(--mat-sys-label-medium);
      text-decoration: none;
    }
    .name {
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
    }
    .size {
      color: var(--mat-sys-on-surface-variant);
    }
  `,
})
export class AttachmentList {
  readonly attachments = input.required<MessageAttachment[]>();

  protected url(file: MessageAttachment): string {
    return attachmentUrl(file.id);
  }

  protected size(file: MessageAttachment): string {
    return formatBytes(file.size);
  }
}
