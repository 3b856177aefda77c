import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

/**
 * The network guard of `url_fetch`: which addresses a fetch may connect to.
 * Pure functions (no DNS, no sockets), so every refusal can be tested with a
 * table of addresses instead of a connection.
 *
 * Only public unicast addresses pass. Everything that reaches this machine, the
 * owner's network or a cloud's metadata service is refused, whatever the spelling:
 * URL hosts are parsed by WHATWG `URL` (which turns `2130706433`, `0177.0.0.1`,
 * `0x7f.1` and `127.1` into `127.0.0.1`) and addresses by ipaddr.js; IPv6 forms
 * that carry an IPv4 address (mapped, translated, NAT64, 6to4) are judged by it.
 */

export type AddressDecision =
  | { allowed: true; address: string; allowedBy?: string }
  | {
      allowed: false;
      address: string;
      /** `10.0.0.1 is a private address` */
      reason: string;
      /** `a private address` */
      text: string;
      /** Whether an exact `urlFetchAllowHosts` entry could let it through. */
      listable: boolean;
    };

export interface AddressContext {
  /** Exact `host:port` entries the owner allows although private (`urlFetchAllowHosts`). */
  allowHostPorts: readonly string[];
  /** The URL's host as `URL` normalised it (lower case, no brackets, no trailing dot). */
  host: string;
  port: number;
}

/** Refused even when listed: these are never a server the owner means. */
const NEVER_ALLOWED = new Set([
  'unspecified',
  'multicast',
  'broadcast',
  'cloud metadata',
  'invalid',
]);

/**
 * Cloud instance metadata services: AWS, GCP, Azure, OpenStack… (169.254.169.254),
 * AWS's IPv6 one, and Alibaba Cloud's, which sits inside the carrier-grade NAT range.
 */
const METADATA_ADDRESSES = new Set([
  '169.254.169.254',
  'fd00:ec2::254',
  '100.100.100.200',
]);

const V4_KINDS: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT (100.64.0.0/10)',
  private: 'private',
  reserved: 'reserved',
  as112: 'special-purpose (AS112)',
  amt: 'special-purpose (AMT)',
};

const V6_KINDS: Record<string, string> = {
  unspecified: 'unspecified',
  linkLocal: 'link-local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'unique-local (fc00::/7)',
  deprecatedSiteLocal: 'site-local',
  discard: 'discard-only',
  teredo: 'Teredo tunnel',
  benchmarking: 'reserved (benchmarking)',
  amt: 'special-purpose (AMT)',
  as112v6: 'special-purpose (AS112)',
  deprecatedOrchid: 'reserved (ORCHID)',
  orchid2: 'reserved (ORCHID)',
  droneRemoteIdProtocolEntityTags: 'reserved',
  segmentRouting: 'reserved (segment routing)',
  reserved: 'reserved',
};

/** Why an address is not public: its kind (`loopback`, `private`…) and how to say it. */
export interface AddressClass {
  kind: string;
  /** e.g. `a loopback address`, `an IPv4-mapped IPv6 address of 127.0.0.1 (a loopback address)`. */
  text: string;
}

/** What kind of non-public address `address` is; `null` for a public unicast address. */
export function classifyAddress(address: string): AddressClass | null {
  if (!ipaddr.isValid(address))
    return { kind: 'invalid', text: 'not an IP address' };
  const parsed = ipaddr.parse(address);
  if (METADATA_ADDRESSES.has(parsed.toString()))
    return named('cloud metadata', 'cloud metadata');
  if (parsed.kind() === 'ipv4') {
    const range = (parsed as ipaddr.IPv4).range();
    return range === 'unicast' ? null : named(range, V4_KINDS[range] ?? range);
  }
  const v6 = parsed as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) {
    const inner = classifyAddress(embedded.address);
    return inner === null
      ? null
      : {
          kind: inner.kind,
          text: `${articleFor(embedded.form)} ${embedded.form} address of ${embedded.address} (${inner.text})`,
        };
  }
  const range = v6.range();
  if (range === 'rfc6052')
    return named('reserved', 'local-use NAT64 (64:ff9b:1::/48)');
  if (range !== 'unicast') return named(range, V6_KINDS[range] ?? range);
  // Global unicast is 2000::/3; the rest (::/8 with IPv4-compatible ::a.b.c.d, 4000::/2…) is unassigned.
  if ((v6.parts[0] & 0xe000) !== 0x2000)
    return v6.parts.slice(0, 6).every((p) => p === 0)
      ? named('reserved', 'IPv4-compatible IPv6 (deprecated)')
      : named('reserved', 'reserved (not global unicast)');
  return null;
}

function named(kind: string, label: string): AddressClass {
  return { kind, text: `${articleFor(label)} ${label} address` };
}

function articleFor(label: string): string {
  return /^([aeio]|un[^i]|IPv)/i.test(label) ? 'an' : 'a';
}

/** The IPv4 address carried by a mapped, translated, NAT64 (64:ff9b::/96) or 6to4 address. */
function embeddedIPv4(
  v6: ipaddr.IPv6,
): { address: string; form: string } | null {
  const p = v6.parts;
  const v4 = (hi: number, lo: number) =>
    `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const range = v6.range();
  if (range === 'ipv4Mapped')
    return { address: v4(p[6], p[7]), form: 'IPv4-mapped IPv6' };
  if (range === 'rfc6145')
    return { address: v4(p[6], p[7]), form: 'IPv4-translated IPv6' };
  if (
    range === 'rfc6052' &&
    p[2] === 0 &&
    p[3] === 0 &&
    p[4] === 0 &&
    p[5] === 0
  )
    return { address: v4(p[6], p[7]), form: 'NAT64 IPv6' };
  if (range === '6to4') return { address: v4(p[1], p[2]), form: '6to4 IPv6' };
  return null;
}

/**
 * May a fetch connect to `address` for the URL host `host:port`? Public addresses
 * may; a private one only when the owner listed the exact `host:port` (or
 * `address:port`) in `urlFetchAllowHosts`; unspecified, multicast, broadcast and
 * cloud metadata addresses never.
 */
export function decideAddress(
  address: string,
  { allowHostPorts, host, port }: AddressContext,
): AddressDecision {
  const found = classifyAddress(address);
  if (found === null) return { allowed: true, address };
  const listable = !NEVER_ALLOWED.has(found.kind);
  if (listable) {
    const candidates = [hostPort(host, port), hostPort(address, port)];
    const entry = candidates.find((c) => allowHostPorts.includes(c));
    if (entry) return { allowed: true, address, allowedBy: entry };
  }
  return {
    allowed: false,
    address,
    reason: `${address} is ${found.text}`,
    text: found.text,
    listable,
  };
}

/**
 * Kinds of address an account's mail or CalDAV server may have besides a public
 * one: a local mail bridge, a home server or a server on the owner's VPN (Tailscale
 * hands out carrier-grade NAT addresses) is normal. Link-local, cloud metadata,
 * multicast, broadcast, unspecified and reserved addresses never are.
 */
const ACCOUNT_SERVER_KINDS = new Set([
  'loopback',
  'private',
  'uniqueLocal',
  'carrierGradeNat',
]);

/**
 * May an account's IMAP, SMTP or CalDAV connection go to `address`? The same
 * classification as url_fetch, under the accounts' policy: public, loopback and
 * private addresses may; the rest never (no allow-list reaches them).
 */
export function decideAccountServerAddress(address: string): AddressDecision {
  const found = classifyAddress(address);
  if (found === null || ACCOUNT_SERVER_KINDS.has(found.kind))
    return { allowed: true, address };
  return {
    allowed: false,
    address,
    reason: `${address} is ${found.text}`,
    text: found.text,
    listable: false,
  };
}

/**
 * A server host as the owner typed it (`imap.example.com`, `192.168.1.5`, `[::1]`,
 * `2130706433`), normalised the way WHATWG `URL` does, so every spelling of an
 * IPv4 address is judged as the address the socket would reach.
 */
export function parseServerHost(
  input: string,
): { ok: true; host: string; isIp: boolean } | { ok: false; error: string } {
  const trimmed = input.trim().replace(/^\[|\]$/g, '');
  if (!trimmed) return { ok: false, error: 'The server host is empty' };
  let hostname: string;
  try {
    hostname = new URL(
      `http://${isIP(trimmed) === 6 ? `[${trimmed}]` : trimmed}/`,
    ).hostname;
  } catch {
    return { ok: false, error: `'${clip(input)}' is not a valid host name` };
  }
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  const stray = isIP(trimmed) === 6 ? /[/?#@\s]/ : /[/?#@\s:]/;
  if (!host || stray.test(trimmed))
    return { ok: false, error: `'${clip(input)}' is not a valid host name` };
  return { ok: true, host, isIp: isIP(host) !== 0 };
}

/** A host name the guard refuses before any DNS lookup (`localhost` and its subdomains, RFC 6761). */
export function isLocalhostName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** `host:port` as `urlFetchAllowHosts` holds it: lower case, IPv6 in brackets, no trailing dot. */
export function hostPort(host: string, port: number): string {
  const bare = host.replace(/^\[|\]$/g, '');
  return isIP(bare) === 6 ? `[${bare}]:${port}` : `${bare}:${port}`;
}

export interface ParsedFetchUrl {
  url: URL;
  /** Lower case, IPv6 without brackets, no trailing dot; what DNS is asked about. */
  host: string;
  port: number;
  /** The host is an IP address literal (no DNS lookup). */
  isIp: boolean;
}

/** Parses and checks a URL the model gave: http(s) only, no credentials; the host normalised. */
export function parseFetchUrl(
  input: string,
): { ok: true; value: ParsedFetchUrl } | { ok: false; error: string } {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    return { ok: false, error: `'${clip(input)}' is not a valid URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return {
      ok: false,
      error: `Only http and https URLs can be fetched (got ${url.protocol.replace(/:$/, '')})`,
    };
  if (url.username || url.password)
    return {
      ok: false,
      error:
        'URLs with credentials (user:password@) are refused: the owner sets up credentials as an auth profile',
    };
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (!host) return { ok: false, error: 'The URL has no host' };
  url.hash = '';
  const port = url.port
    ? Number(url.port)
    : url.protocol === 'https:'
      ? 443
      : 80;
  return { ok: true, value: { url, host, port, isIp: isIP(host) !== 0 } };
}

/** Normalises an allow-list entry (`nas.local:8123`, `[fd00::1]:80`, `192.168.1.5:443`); `null` when it is not `host:port`. */
export function normaliseHostPort(entry: string): string | null {
  const trimmed = entry.trim();
  if (!/^(\[[0-9a-f:.]+\]|[^\s/:@?#[\]]+):\d{1,5}$/i.test(trimmed)) return null;
  let url: URL;
  try {
    url = new URL(`http://${trimmed}/`);
  } catch {
    return null;
  }
  const port = Number(trimmed.slice(trimmed.lastIndexOf(':') + 1));
  if (!Number.isInteger(port) || port < 1 || port > 65535) return null;
  const host = url.hostname.replace(/\.$/, '').toLowerCase();
  return host ? hostPort(host, port) : null;
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
