import type { AccountCredentials } from '../accounts/account-records';
import type { SettingsService } from '../settings/settings.service';
import { KnownSecrets } from './known-secrets';

/** KnownSecrets over a fixed list: for the unit specs of the tools that redact. */
export function fixedSecrets(values: string[]): KnownSecrets {
  const settings: Pick<SettingsService, 'currentSecrets'> = {
    currentSecrets: async () => values,
  };
  const accounts: Pick<AccountCredentials, 'list'> = { list: async () => [] };
  return new KnownSecrets(
    settings as SettingsService,
    accounts as AccountCredentials,
  );
}
