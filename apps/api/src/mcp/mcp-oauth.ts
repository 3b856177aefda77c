import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Model } from 'mongoose';
import type {
  OAuthClientProvider,
  OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpOAuthView } from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { maskSecret } from '../settings/secret-mask';
import {
  decideAddress,
  isLocalhostName,
  parseFetchUrl,
} from '../url-fetch/address-guard';
import { McpOAuthRecord } from './schemas/mcp-oauth.schema';

/** The route the authorization server sends the owner's browser back to. */
export const MCP_OAUTH_CALLBACK_PATH = '/api/mcp/oauth/callback';
/** A sign-in left unfinished this long is forgotten (its state no longer accepted). */
export const MCP_SIGN_IN_TTL_MS = 10 * 60_000;
/** `state` as we make it: 32 random bytes, base64url. */
const STATE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Thrown by the provider while a server connects on its own: it asks for a sign-in only
 * the owner can give (no client registration or no usable token). The connection shows
 * "needs sign-in" and waits, rather than registering or retrying by itself.
 */
export class McpSignInNeeded extends Error {
  constructor() {
    super('needs sign-in');
    this.name = 'McpSignInNeeded';
  }
}

/** An OAuth step refused or failed, in words for the owner (no token, code or verifier in it). */
export class McpOAuthRefused extends Error {}

/** What the flow needs to know about one HTTP server. */
export interface McpOAuthTarget {
  serverId: string;
  url: string;
  allowHosts: readonly string[];
  /** The guarded fetch (url_fetch's address guard and this server's allowHosts). */
  fetch: FetchLike;
}

type ProviderMode =
  /** The connection on its own: uses and refreshes stored tokens, never starts a sign-in. */
  | { kind: 'connect' }
  /** The owner's "Sign in": may register a client; keeps the authorization URL. */
  | { kind: 'sign-in'; redirectUrl: string; started: (url: URL) => void }
  /** The redirect came back: exchanges the code with the stored verifier. */
  | { kind: 'callback'; redirectUrl: string; verifier: string };

/**
 * OAuth 2.1 with PKCE for the owner's Streamable HTTP MCP servers, through the SDK's own
 * flow (`auth()`): this class is only its storage (`OAuthClientProvider`) and the two
 * owner steps around it, starting a sign-in and finishing it from the redirect. Every
 * request the flow makes (metadata, registration, token) goes through the server's
 * guarded fetch; the endpoints discovery returns are checked against the same rules
 * before any is used, so a token never goes to a host the owner did not allow.
 */
@Injectable()
export class McpOAuth {
  /** One document per server, kept in memory: views are synchronous. */
  private readonly records = new Map<string, McpOAuthRecord>();
  /** Discovery as the SDK saved it, per server (not stored: found again after a restart). */
  private readonly discovery = new Map<string, OAuthDiscoveryState>();
  /** States being exchanged now: a second redirect with the same state waits for none. */
  private readonly finishing = new Set<string>();
  private loaded: Promise<void> | null = null;

  constructor(
    @InjectModel(McpOAuthRecord.name)
    private readonly store: Model<McpOAuthRecord>,
    private readonly clock: Clock,
  ) {}

  load(): Promise<void> {
    this.loaded ??= this.store
      .find()
      .lean()
      .exec()
      .then((records) => {
        for (const record of records) this.records.set(record.serverId, record);
      });
    return this.loaded;
  }

  /** The provider a connection uses: stored tokens, refreshed by the SDK when the server says 401. */
  connectProvider(target: McpOAuthTarget): OAuthClientProvider {
    return this.provider(target, { kind: 'connect' });
  }

  /**
   * Starts a sign-in: discovery and dynamic registration when needed (the SDK's), then
   * the authorization URL with PKCE S256 and a fresh `state`, kept for the redirect.
   * Null when the stored tokens were enough (the SDK refreshed them).
   */
  async startSignIn(
    target: McpOAuthTarget,
    redirectUrl: string,
  ): Promise<string | null> {
    let authorizationUrl: URL | null = null;
    const provider = this.provider(target, {
      kind: 'sign-in',
      redirectUrl,
      started: (url) => (authorizationUrl = url),
    });
    const result = await this.run(provider, target);
    if (result === 'AUTHORIZED') return null;
    if (!authorizationUrl)
      throw new McpOAuthRefused(
        'the authorization server gave no sign-in page',
      );
    return (authorizationUrl as URL).href;
  }

  /** The server a redirect's `state` belongs to, if that sign-in is waiting (not expired). */
  pendingServer(state: string): string | null {
    if (!STATE_PATTERN.test(state)) return null;
    const now = this.clock.now().getTime();
    for (const record of this.records.values())
      if (
        record.pendingState === state &&
        record.pendingExpiresAt !== null &&
        new Date(record.pendingExpiresAt).getTime() > now
      )
        return record.serverId;
    return null;
  }

  /**
   * Finishes the sign-in the redirect names: the state is used once (forgotten before the
   * exchange, whatever its outcome), the code exchanged with the stored PKCE verifier.
   */
  async finishSignIn(
    target: McpOAuthTarget,
    state: string,
    code: string,
  ): Promise<void> {
    const record = this.records.get(target.serverId);
    if (
      !record ||
      record.pendingState !== state ||
      !record.pendingVerifier ||
      !record.pendingRedirectUrl ||
      this.finishing.has(state)
    )
      throw new McpOAuthRefused('this sign-in is not waiting any more');
    this.finishing.add(state);
    try {
      const verifier = record.pendingVerifier;
      const redirectUrl = record.pendingRedirectUrl;
      await this.write(target.serverId, {
        pendingState: null,
        pendingVerifier: null,
        pendingRedirectUrl: null,
        pendingExpiresAt: null,
      });
      const provider = this.provider(target, {
        kind: 'callback',
        redirectUrl,
        verifier,
      });
      const result = await this.run(provider, target, code);
      if (result !== 'AUTHORIZED')
        throw new McpOAuthRefused('the authorization server gave no token');
    } finally {
      this.finishing.delete(state);
    }
  }

  /** Sign out: the tokens and any waiting sign-in are forgotten (the client registration is kept). */
  async signOut(serverId: string): Promise<void> {
    this.discovery.delete(serverId);
    if (!this.records.has(serverId)) return;
    await this.write(serverId, {
      tokensJson: null,
      expiresAt: null,
      pendingState: null,
      pendingVerifier: null,
      pendingRedirectUrl: null,
      pendingExpiresAt: null,
    });
  }

  /** The waiting sign-in is dropped (the authorization server refused it); tokens stay. */
  async cancelSignIn(serverId: string): Promise<void> {
    if (!this.records.has(serverId)) return;
    await this.write(serverId, {
      pendingState: null,
      pendingVerifier: null,
      pendingRedirectUrl: null,
      pendingExpiresAt: null,
    });
  }

  /** Everything about a server (deleted, or moved to another URL). */
  async forget(serverId: string): Promise<void> {
    this.discovery.delete(serverId);
    this.records.delete(serverId);
    await this.store.deleteOne({ serverId }).exec();
  }

  view(serverId: string): McpOAuthView {
    const record = this.records.get(serverId);
    const tokens = parseJson<OAuthTokens>(record?.tokensJson ?? null);
    const pending =
      !!record?.pendingState &&
      !!record.pendingExpiresAt &&
      new Date(record.pendingExpiresAt).getTime() > this.clock.now().getTime();
    return {
      signedIn: !!tokens?.access_token,
      issuer: record?.issuer ?? null,
      accessToken: maskSecret(tokens?.access_token) ?? null,
      refreshable: !!tokens?.refresh_token,
      expiresAt: record?.expiresAt
        ? new Date(record.expiresAt).toISOString()
        : null,
      scope: tokens?.scope ?? null,
      pending,
    };
  }

  /** Every OAuth secret held (tokens, client secrets, waiting verifiers): for KnownSecrets. */
  secretValues(): string[] {
    const values: string[] = [];
    for (const record of this.records.values()) {
      const tokens = parseJson<OAuthTokens>(record.tokensJson);
      const client = parseJson<OAuthClientInformationMixed>(record.clientJson);
      for (const value of [
        tokens?.access_token,
        tokens?.refresh_token,
        tokens?.id_token,
        client?.client_secret,
        record.pendingVerifier,
      ])
        if (typeof value === 'string' && value) values.push(value);
    }
    return values;
  }

  private async run(
    provider: OAuthClientProvider,
    target: McpOAuthTarget,
    authorizationCode?: string,
  ): Promise<'AUTHORIZED' | 'REDIRECT'> {
    const cached = this.discovery.get(target.serverId);
    // The SDK loads with the first sign-in, not at start.
    const { auth } = await import('@modelcontextprotocol/sdk/client/auth.js');
    return auth(provider, {
      serverUrl: target.url,
      authorizationCode,
      resourceMetadataUrl: cached?.resourceMetadataUrl
        ? new URL(cached.resourceMetadataUrl)
        : undefined,
      fetchFn: target.fetch,
    });
  }

  private provider(
    target: McpOAuthTarget,
    mode: ProviderMode,
  ): OAuthClientProvider {
    const id = target.serverId;
    let verifier: string | null =
      mode.kind === 'callback' ? mode.verifier : null;
    let state: string | null = null;
    const redirectUrl = (): string =>
      mode.kind === 'connect'
        ? (redirectUrisOf(this.client(id))?.[0] ??
          `http://localhost${MCP_OAUTH_CALLBACK_PATH}`)
        : mode.redirectUrl;
    const clientMetadata = (): OAuthClientMetadata => ({
      client_name: 'MetatronOS',
      redirect_uris: [redirectUrl()],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    return {
      // Never undefined: the SDK takes an absent redirect URL for a non-interactive grant.
      get redirectUrl() {
        return redirectUrl();
      },
      get clientMetadata() {
        return clientMetadata();
      },
      state: () => {
        state = randomBytes(32).toString('base64url');
        return state;
      },
      clientInformation: () => {
        const client = this.client(id);
        if (mode.kind === 'connect') {
          // Bound to another authorization server (it moved): the SDK would register again, which is the owner's to do.
          const discovered = this.discovery.get(id)?.authorizationServerUrl;
          if (
            !client ||
            (client.issuer &&
              discovered &&
              !sameIssuer(client.issuer, discovered))
          )
            throw new McpSignInNeeded();
          return client;
        }
        // A registration made for another console address cannot receive this redirect.
        const registered = redirectUrisOf(client);
        if (registered && !registered.includes(mode.redirectUrl))
          return undefined;
        return client ?? undefined;
      },
      saveClientInformation: async (client) => {
        await this.write(id, {
          clientJson: JSON.stringify(client),
          issuer: client.issuer ?? null,
        });
      },
      tokens: () =>
        parseJson<OAuthTokens>(this.records.get(id)?.tokensJson ?? null) ??
        undefined,
      saveTokens: async (tokens) => {
        const expiresIn = Number(tokens.expires_in);
        await this.write(id, {
          tokensJson: JSON.stringify(tokens),
          issuer: tokens.issuer ?? this.records.get(id)?.issuer ?? null,
          expiresAt:
            Number.isFinite(expiresIn) && expiresIn > 0
              ? new Date(this.clock.now().getTime() + expiresIn * 1000)
              : null,
        });
      },
      saveCodeVerifier: (value) => {
        verifier = value;
      },
      codeVerifier: () => {
        if (!verifier) throw new McpOAuthRefused('no sign-in is waiting');
        return verifier;
      },
      redirectToAuthorization: async (url) => {
        if (mode.kind !== 'sign-in') throw new McpSignInNeeded();
        if (!state || !verifier)
          throw new McpOAuthRefused('the sign-in could not be prepared');
        await this.write(id, {
          pendingState: state,
          pendingVerifier: verifier,
          pendingRedirectUrl: mode.redirectUrl,
          pendingExpiresAt: new Date(
            this.clock.now().getTime() + MCP_SIGN_IN_TTL_MS,
          ),
        });
        mode.started(url);
      },
      invalidateCredentials: async (scope) => {
        if (scope === 'discovery' || scope === 'all') this.discovery.delete(id);
        if (scope === 'all' || scope === 'client')
          await this.write(id, { clientJson: null });
        if (scope === 'all' || scope === 'tokens')
          await this.write(id, { tokensJson: null, expiresAt: null });
      },
      saveDiscoveryState: (discovered) => {
        const refusal = discoveryRefusal(discovered, target.allowHosts);
        if (refusal) {
          this.discovery.delete(id);
          throw new McpOAuthRefused(refusal);
        }
        this.discovery.set(id, discovered);
      },
      discoveryState: () => this.discovery.get(id),
    };
  }

  private client(serverId: string): OAuthClientInformationMixed | null {
    return parseJson<OAuthClientInformationMixed>(
      this.records.get(serverId)?.clientJson ?? null,
    );
  }

  private async write(
    serverId: string,
    patch: Partial<Omit<McpOAuthRecord, '_id' | 'serverId'>>,
  ): Promise<void> {
    const updatedAt = this.clock.now();
    await this.store
      .updateOne(
        { serverId },
        { $set: { ...patch, updatedAt } },
        { upsert: true, setDefaultsOnInsert: true },
      )
      .exec();
    const before = this.records.get(serverId);
    this.records.set(serverId, {
      ...(before ?? emptyRecord(serverId)),
      ...patch,
      updatedAt,
    } as McpOAuthRecord);
  }
}

function emptyRecord(serverId: string): Omit<McpOAuthRecord, '_id'> {
  return {
    serverId,
    issuer: null,
    clientJson: null,
    tokensJson: null,
    expiresAt: null,
    pendingState: null,
    pendingVerifier: null,
    pendingRedirectUrl: null,
    pendingExpiresAt: null,
    updatedAt: new Date(0),
  };
}

/** The SDK's comparison: parsed URLs, one trailing `/` tolerated. */
function sameIssuer(a: string, b: string): boolean {
  const norm = (value: string) => {
    try {
      return new URL(value).href.replace(/\/$/, '');
    } catch {
      return value.replace(/\/$/, '');
    }
  };
  return norm(a) === norm(b);
}

function redirectUrisOf(
  client: OAuthClientInformationMixed | null,
): string[] | null {
  const uris = (client as { redirect_uris?: unknown } | null)?.redirect_uris;
  return Array.isArray(uris)
    ? uris.filter((u): u is string => typeof u === 'string')
    : null;
}

function parseJson<T>(json: string | null): T | null {
  if (!json) return null;
  try {
    return JSON.parse(json) as T;
  } catch {
    return null;
  }
}

/**
 * Why the endpoints discovery found may not be used, or null. The authorization server,
 * its token and registration endpoints receive requests from here (codes, refresh
 * tokens): each must be a URL url_fetch would fetch for this server, decided now for
 * literal addresses and loopback names (the guarded fetch decides names when it
 * connects). The sign-in page is opened by the owner's browser: it must be http(s).
 */
export function discoveryRefusal(
  discovered: OAuthDiscoveryState,
  allowHosts: readonly string[],
): string | null {
  const metadata = discovered.authorizationServerMetadata;
  const fetched: Array<[string, string | undefined]> = [
    ['the authorization server', discovered.authorizationServerUrl],
    ['the token endpoint', metadata?.token_endpoint],
    ['the registration endpoint', metadata?.registration_endpoint],
  ];
  for (const [what, url] of fetched) {
    if (url === undefined) continue;
    const refusal = oauthUrlRefusal(url, allowHosts);
    if (refusal) return `refused: ${what} ${refusal}`;
  }
  const page = metadata?.authorization_endpoint;
  if (page !== undefined && !/^https?:\/\//i.test(page))
    return 'refused: the sign-in page is not an http(s) address';
  return null;
}

/** Why url_fetch would refuse this URL for a server with these allowHosts (decided without DNS), or null. */
export function oauthUrlRefusal(
  input: string,
  allowHosts: readonly string[],
): string | null {
  const parsed = parseFetchUrl(input);
  if (!parsed.ok) return `(${input.slice(0, 120)}): ${parsed.error}`;
  const { host, port, isIp } = parsed.value;
  const literal = isIp ? host : isLocalhostName(host) ? '127.0.0.1' : null;
  if (!literal) return null;
  const decision = decideAddress(literal, {
    allowHostPorts: allowHosts,
    host,
    port,
  });
  if (decision.allowed) return null;
  const shown = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return `${shown} is ${decision.text}${decision.listable ? ` and not in this server's allowHosts` : ' (never allowed)'}`;
}
