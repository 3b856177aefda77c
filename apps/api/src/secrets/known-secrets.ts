import { Injectable } from '@nestjs/common';
import { AccountCredentials } from '../accounts/account-records';
import { SettingsService } from '../settings/settings.service';
import {
  SecretRedactor,
  redactCredentialShapes,
  type ScanEncoding,
} from './secret-redaction';

/**
 * The one place that knows every secret the app holds now: the settings' API keys
 * (Gemini, OpenAI, OpenAI-compatible endpoints, Brave), the Telegram bot token, the
 * auth profiles' values, the email and calendar accounts' passwords, and what
 * feature modules contribute (the MCP servers' header and env values and OAuth
 * tokens). Whatever goes to the model or to a file the model can read is checked
 * against this list.
 */
@Injectable()
export class KnownSecrets {
  /** Secrets held by modules this one cannot import (they import it): asked on every read. */
  private readonly sources: Array<() => readonly string[]> = [];

  constructor(
    private readonly settings: SettingsService,
    private readonly accounts: AccountCredentials,
  ) {}

  /** A module that holds secrets of its own adds them here (read fresh each time: they change). */
  contribute(source: () => readonly string[]): void {
    this.sources.push(source);
  }

  async values(): Promise<string[]> {
    const [fromSettings, accounts] = await Promise.all([
      this.settings.currentSecrets(),
      this.accounts.list(),
    ]);
    const passwords = accounts.flatMap((a) =>
      a.kind === 'email' ? [a.imap.password, a.smtp.password] : [a.password],
    );
    const contributed = this.sources.flatMap((source) => source());
    return [...fromSettings, ...passwords, ...contributed].filter(
      (s): s is string => typeof s === 'string' && s.length > 0,
    );
  }

  /**
   * The redactor last built, by what it was built from: the memory index asks for one at every
   * turn, and building one (each secret's encoded forms) cost more than the redaction.
   */
  private last: { key: string; redactor: SecretRedactor } | null = null;

  /** A redactor for the secrets held now (secrets change: the same one only while they do not). */
  async redactor(
    encoding: ScanEncoding = 'text',
    extra: readonly string[] = [],
  ): Promise<SecretRedactor> {
    const secrets = [...(await this.values()), ...extra];
    const key = JSON.stringify([encoding, secrets]);
    if (this.last?.key !== key)
      this.last = { key, redactor: new SecretRedactor(secrets, encoding) };
    return this.last.redactor;
  }

  /**
   * For text that is kept (memory notes and their index): every secret held now in any
   * form the redactor finds, then anything shaped like a credential.
   */
  async scrubber(): Promise<(text: string) => string> {
    const redactor = await this.redactor();
    return (text) => redactCredentialShapes(redactor.redact(text));
  }
}
