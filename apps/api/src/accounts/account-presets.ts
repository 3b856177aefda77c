import type { AccountPreset } from '@metatronos/shared-types';

const TLS_IMAP = { port: 993, secure: true } as const;
const TLS_SMTP = { port: 465, secure: true } as const;
const STARTTLS_SMTP = { port: 587, secure: false } as const;

/**
 * Server settings of common providers, to start the add-account form from. Every
 * one of them wants an app password (or a bridge password), not the web login.
 */
export const ACCOUNT_PRESETS: readonly AccountPreset[] = [
  {
    id: 'gmail',
    label: 'Gmail',
    kind: 'email',
    imap: { host: 'imap.gmail.com', ...TLS_IMAP },
    smtp: { host: 'smtp.gmail.com', ...TLS_SMTP },
    note: 'Needs 2-step verification and an app password (Google Account → Security → App passwords).',
  },
  {
    id: 'outlook',
    label: 'Outlook.com / Microsoft 365',
    kind: 'email',
    imap: { host: 'outlook.office365.com', ...TLS_IMAP },
    smtp: { host: 'smtp-mail.outlook.com', ...STARTTLS_SMTP },
    note: 'Needs an app password; SMTP on port 587 is upgraded with STARTTLS. Some Microsoft 365 tenants allow OAuth only.',
  },
  {
    id: 'fastmail',
    label: 'Fastmail',
    kind: 'email',
    imap: { host: 'imap.fastmail.com', ...TLS_IMAP },
    smtp: { host: 'smtp.fastmail.com', ...TLS_SMTP },
    note: 'Use an app password (Settings → Privacy & Security → App passwords).',
  },
  {
    id: 'icloud',
    label: 'iCloud Mail',
    kind: 'email',
    imap: { host: 'imap.mail.me.com', ...TLS_IMAP },
    smtp: { host: 'smtp.mail.me.com', ...STARTTLS_SMTP },
    note: 'Use an app-specific password (account.apple.com → Sign-In and Security); the user is the part before @icloud.com for IMAP.',
  },
  {
    id: 'yahoo',
    label: 'Yahoo Mail',
    kind: 'email',
    imap: { host: 'imap.mail.yahoo.com', ...TLS_IMAP },
    smtp: { host: 'smtp.mail.yahoo.com', ...TLS_SMTP },
    note: 'Use an app password (Account security → Generate app password).',
  },
  {
    id: 'proton-bridge',
    label: 'Proton Mail Bridge',
    kind: 'email',
    imap: { host: '127.0.0.1', port: 1143, secure: false },
    smtp: { host: '127.0.0.1', port: 1025, secure: false },
    note: 'Proton Mail Bridge runs on this machine: use the user name and password the Bridge shows (not your Proton password).',
  },
  {
    id: 'fastmail-calendar',
    label: 'Fastmail Calendar',
    kind: 'calendar',
    url: 'https://caldav.fastmail.com/dav/principals/user/{user}/',
    note: 'Use an app password with CalDAV access.',
  },
  {
    id: 'icloud-calendar',
    label: 'iCloud Calendar',
    kind: 'calendar',
    url: 'https://caldav.icloud.com/',
    note: 'The user is your Apple ID email; use an app-specific password.',
  },
  {
    id: 'nextcloud-calendar',
    label: 'Nextcloud',
    kind: 'calendar',
    url: 'https://cloud.example.com/remote.php/dav',
    note: 'Replace cloud.example.com with your server; use an app password (Settings → Security).',
  },
  {
    id: 'radicale-calendar',
    label: 'Radicale (self-hosted)',
    kind: 'calendar',
    url: 'http://127.0.0.1:5232/',
    note: 'A Radicale on this machine; plain http:// needs "TLS" turned off explicitly.',
  },
];
