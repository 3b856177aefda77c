import {
  type AccountPreset,
  type CalendarAccountView,
  type EmailAccountView,
  type EmailDraftView,
  PASSWORD_MASK,
} from '@metatronos/shared-types';

/** Test data for the accounts specs. */
export function emailAccount(
  id: string,
  name: string,
  extra: Partial<EmailAccountView> = {},
): EmailAccountView {
  return {
    id,
    kind: 'email',
    name,
    address: `${id}@example.org`,
    imap: {
      host: 'imap.example.org',
      port: 993,
      secure: true,
      user: `${id}@example.org`,
      password: PASSWORD_MASK,
    },
    smtp: {
      host: 'smtp.example.org',
      port: 465,
      secure: true,
      user: `${id}@example.org`,
      password: PASSWORD_MASK,
    },
    createdAt: '2026-11-20T09:00:00.000Z',
    updatedAt: '2026-11-20T09:00:00.000Z',
    ...extra,
  };
}

export function calendarAccount(
  id: string,
  name: string,
  extra: Partial<CalendarAccountView> = {},
): CalendarAccountView {
  return {
    id,
    kind: 'calendar',
    name,
    url: 'https://dav.example.org/',
    user: 'me',
    password: PASSWORD_MASK,
    secure: true,
    address: 'me',
    createdAt: '2026-11-20T09:00:00.000Z',
    updatedAt: '2026-11-20T09:00:00.000Z',
    ...extra,
  };
}

export const PRESETS: AccountPreset[] = [
  {
    id: 'gmail',
    label: 'Gmail',
    kind: 'email',
    imap: { host: 'imap.gmail.com', port: 993, secure: true },
    smtp: { host: 'smtp.gmail.com', port: 465, secure: true },
    note: 'Use an app password, not your Google password.',
  },
  {
    id: 'fastmail-cal',
    label: 'Fastmail calendar',
    kind: 'calendar',
    url: 'https://caldav.fastmail.com/dav/principals/user/{user}/',
  },
];

export function emailDraft(
  id: string,
  extra: Partial<EmailDraftView> = {},
): EmailDraftView {
  return {
    id,
    accountId: 'work',
    accountAddress: 'work@example.org',
    action: 'send',
    to: ['ann@example.net'],
    cc: [],
    subject: `Subject ${id}`,
    text: `Hello Ann,\nthis is ${id}.`,
    inReplyTo: null,
    source: 'cron',
    chatId: null,
    jobId: null,
    jobName: null,
    repliesTo: null,
    status: 'pending',
    error: null,
    createdAt: '2026-11-28T09:00:00.000Z',
    sentAt: null,
    ...extra,
  };
}
