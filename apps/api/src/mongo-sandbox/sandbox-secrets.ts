/**
 * Where the sandbox learns the current secret values (API keys…) so it can scrub
 * them from any result, whatever projection or rename the AI used.
 * SettingsModule provides the real one.
 */
export abstract class SandboxSecrets {
  abstract currentSecrets(): Promise<string[]>;
}
