import type {
  AccountKind,
  AccountPreset,
  AccountView,
  CreateAccountRequest,
  MailServerInput,
  UpdateAccountRequest,
} from '@metatronos/shared-types';

/** The IMAP (incoming) or SMTP (outgoing) connection of an email account. */
export type MailServerKey = 'imap' | 'smtp';

/** One mail server as typed in the form (the port as typed, checked on save). */
export interface ServerFields {
  host: string;
  port: string;
  secure: boolean;
  user: string;
  /** Empty while editing: the stored password is kept. */
  password: string;
}

/** Everything the account form holds; the fields of the other kind are ignored. */
export interface AccountFields {
  kind: AccountKind;
  name: string;
  address: string;
  imap: ServerFields;
  smtp: ServerFields;
  /** SMTP logs in with the IMAP user and password. */
  sameLogin: boolean;
  url: string;
  user: string;
  password: string;
  secure: boolean;
}

/** The usual port of each server with and without TLS from the first byte. */
export const DEFAULT_PORTS: Record<
  MailServerKey,
  { tls: number; plain: number }
> = {
  imap: { tls: 993, plain: 143 },
  smtp: { tls: 465, plain: 587 },
};

export type FieldErrors = Partial<Record<string, string>>;

function blankServer(key: MailServerKey): ServerFields {
  return {
    host: '',
    port: String(DEFAULT_PORTS[key].tls),
    secure: true,
    user: '',
    password: '',
  };
}

/** The empty form for a new account of `kind`. */
export function blankFields(kind: AccountKind): AccountFields {
  return {
    kind,
    name: '',
    address: '',
    imap: blankServer('imap'),
    smtp: blankServer('smtp'),
    sameLogin: true,
    url: '',
    user: '',
    password: '',
    secure: true,
  };
}

/** The form for editing an account: its settings, the password fields empty. */
export function fieldsOf(account: AccountView): AccountFields {
  const fields = blankFields(account.kind);
  fields.name = account.name;
  if (account.kind === 'email') {
    fields.address = account.address;
    for (const key of ['imap', 'smtp'] as const) {
      const server = account[key];
      fields[key] = {
        host: server.host,
        port: String(server.port),
        secure: server.secure,
        user: server.user,
        password: '',
      };
    }
    fields.sameLogin = account.smtp.user === account.imap.user;
  } else {
    fields.url = account.url;
    fields.user = account.user;
    fields.secure = account.secure;
  }
  return fields;
}

/** The form after choosing a provider's preset: its servers (or URL) filled in. */
export function withPreset(
  fields: AccountFields,
  preset: AccountPreset,
): AccountFields {
  if (preset.kind === 'calendar')
    return { ...fields, url: preset.url ?? fields.url };
  const next = { ...fields };
  for (const key of ['imap', 'smtp'] as const) {
    const server = preset[key];
    if (server)
      next[key] = {
        ...fields[key],
        host: server.host,
        port: String(server.port),
        secure: server.secure,
      };
  }
  return next;
}

/** SMTP's login as it will be sent: the IMAP one while "same login" is ticked. */
export function smtpLogin(fields: AccountFields): {
  user: string;
  password: string;
} {
  return fields.sameLogin
    ? { user: fields.imap.user.trim(), password: fields.imap.password }
    : { user: fields.smtp.user.trim(), password: fields.smtp.password };
}

const ADDRESS = /^[^\s@]+@[^\s@]+$/;

function portError(port: string): string | undefined {
  const value = Number(port.trim());
  return Number.isInteger(value) && value >= 1 && value <= 65535
    ? undefined
    : 'A port from 1 to 65535.';
}

/**
 * What is wrong with the form, by field (`imap.host`, `url`, …); empty when it can be sent.
 * `editing`: empty passwords keep the stored ones.
 */
export function fieldErrors(
  fields: AccountFields,
  editing: boolean,
): FieldErrors {
  const errors: FieldErrors = {};
  if (!fields.name.trim()) errors['name'] = 'Give the account a name.';
  if (fields.kind === 'email') {
    const address = fields.address.trim();
    if (!address) errors['address'] = 'Enter the email address.';
    else if (!ADDRESS.test(address))
      errors['address'] = 'This is not an email address.';
    for (const key of ['imap', 'smtp'] as const) {
      const server = fields[key];
      if (!server.host.trim()) errors[`${key}.host`] = 'Enter the server name.';
      const port = portError(server.port);
      if (port) errors[`${key}.port`] = port;
      if (key === 'smtp' && fields.sameLogin) continue;
      if (!server.user.trim()) errors[`${key}.user`] = 'Enter the user name.';
      if (!editing && !server.password)
        errors[`${key}.password`] = 'Enter the password.';
    }
  } else {
    const url = fields.url.trim();
    if (!url) errors['url'] = 'Enter the CalDAV address.';
    else if (!/^https?:\/\/[^\s/]+/i.test(url))
      errors['url'] = 'Starts with https:// (or http://).';
    else if (/^http:\/\//i.test(url) && fields.secure)
      errors['url'] =
        'A plain http:// address: untick TLS to allow it, or use https://.';
    if (!fields.user.trim()) errors['user'] = 'Enter the user name.';
    if (!editing && !fields.password)
      errors['password'] = 'Enter the password.';
  }
  return errors;
}

function serverInput(server: ServerFields): MailServerInput {
  return {
    host: server.host.trim(),
    port: Number(server.port.trim()),
    secure: server.secure,
    user: server.user.trim(),
    password: server.password,
  };
}

/** The CalDAV URL with a preset's `{user}` replaced by the user name. */
export function calendarUrl(fields: AccountFields): string {
  return fields.url
    .trim()
    .replace(/\{user\}/g, encodeURIComponent(fields.user.trim()));
}

/** The body of `POST /api/accounts` (and of its connection test). */
export function createRequest(fields: AccountFields): CreateAccountRequest {
  if (fields.kind === 'calendar')
    return {
      kind: 'calendar',
      name: fields.name.trim(),
      url: calendarUrl(fields),
      user: fields.user.trim(),
      password: fields.password,
      secure: fields.secure,
    };
  return {
    kind: 'email',
    name: fields.name.trim(),
    address: fields.address.trim(),
    imap: serverInput(fields.imap),
    smtp: { ...serverInput(fields.smtp), ...smtpLogin(fields) },
  };
}

/**
 * The body of `PATCH /api/accounts/:id`: only what changed; a password only when one was typed
 * (empty keeps the stored one).
 */
export function updateRequest(
  fields: AccountFields,
  account: AccountView,
): UpdateAccountRequest {
  const changes: UpdateAccountRequest = {};
  const name = fields.name.trim();
  if (name !== account.name) changes.name = name;
  if (account.kind === 'calendar') {
    const url = calendarUrl(fields);
    const user = fields.user.trim();
    if (url !== account.url) changes.url = url;
    if (user !== account.user) changes.user = user;
    if (fields.secure !== account.secure) changes.secure = fields.secure;
    if (fields.password) changes.password = fields.password;
    return changes;
  }
  const address = fields.address.trim();
  if (address !== account.address) changes.address = address;
  for (const key of ['imap', 'smtp'] as const) {
    const typed = serverInput(fields[key]);
    if (key === 'smtp') Object.assign(typed, smtpLogin(fields));
    const stored = account[key];
    const change: Partial<MailServerInput> = {};
    if (typed.host !== stored.host) change.host = typed.host;
    if (typed.port !== stored.port) change.port = typed.port;
    if (typed.secure !== stored.secure) change.secure = typed.secure;
    if (typed.user !== stored.user) change.user = typed.user;
    if (typed.password) change.password = typed.password;
    if (Object.keys(change).length) changes[key] = change;
  }
  return changes;
}

/** Whether an update touches a connection (the server tests it before storing it). */
export function changesConnection(changes: UpdateAccountRequest): boolean {
  return (
    changes.imap !== undefined ||
    changes.smtp !== undefined ||
    changes.url !== undefined ||
    changes.user !== undefined ||
    changes.secure !== undefined ||
    changes.password !== undefined
  );
}

/** Every password a test of the typed settings needs is typed. */
export function passwordsTyped(fields: AccountFields): boolean {
  if (fields.kind === 'calendar') return !!fields.password;
  return !!fields.imap.password && !!smtpLogin(fields).password;
}

/** The servers that would be used without TLS, in words ("IMAP", "SMTP", "CalDAV"). */
export function plainConnections(fields: AccountFields): string[] {
  if (fields.kind === 'calendar') return fields.secure ? [] : ['CalDAV'];
  return (['imap', 'smtp'] as const)
    .filter((key) => !fields[key].secure)
    .map((key) => key.toUpperCase());
}
