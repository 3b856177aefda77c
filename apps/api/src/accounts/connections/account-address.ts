import { Injectable, type OnModuleInit } from '@nestjs/common';
import { isIP, type LookupFunction } from 'node:net';
import {
  decideAccountServerAddress,
  parseServerHost,
} from '../../url-fetch/address-guard';
import { HostResolver } from '../../url-fetch/url-fetcher';

/** An account's server address the guard refused, in words for the owner. */
export class AccountAddressRefused extends Error {}

/** Where a connection to an account's server goes: the checked address, and the name TLS verifies. */
export interface CheckedServerHost {
  /** The host as the owner gave it, normalised (what the messages name). */
  host: string;
  /** The IP address that was checked; the socket connects to this one only. */
  address: string;
  /** The name for SNI and the certificate check; absent for an IP literal. */
  servername: string | undefined;
}

/**
 * DNS for the accounts' connections. The connection code is reached from
 * static and free functions (openImap, sendEmail), so the app's instance is
 * registered at start; tests replace its `lookup` as url_fetch's tests do.
 */
@Injectable()
export class AccountHostResolver extends HostResolver implements OnModuleInit {
  onModuleInit(): void {
    useResolver(this);
  }
}

let activeResolver: HostResolver = new HostResolver();

function useResolver(resolver: HostResolver): void {
  activeResolver = resolver;
}

/**
 * Resolves an account server's host once and checks every address with the
 * accounts' policy of the url_fetch guard (loopback and private allowed;
 * link-local, cloud metadata, multicast, broadcast, unspecified never); throws
 * AccountAddressRefused before any connection (a DNS error is thrown as it
 * came). `what` names the server (`IMAP server`, `CalDAV server`).
 */
export async function checkServerHost(
  input: string,
  what: string,
): Promise<CheckedServerHost> {
  const parsed = parseServerHost(input);
  if (!parsed.ok)
    throw new AccountAddressRefused(`The ${what} is refused: ${parsed.error}.`);
  const { host, isIp } = parsed;
  let addresses: string[];
  if (isIp) addresses = [host];
  else {
    // A DNS failure keeps its code (ENOTFOUND…): each protocol already words it.
    addresses = await activeResolver.lookup(host);
    if (addresses.length === 0)
      throw Object.assign(new Error(`No addresses for ${host}`), {
        code: 'ENOTFOUND',
      });
  }
  for (const address of addresses) {
    const decision = decideAccountServerAddress(address);
    if (!decision.allowed)
      throw new AccountAddressRefused(
        `The ${what} ${isIp ? decision.address : `${host} (which resolves to ${decision.address})`} is refused: ${decision.text} is never an account's server (loopback and private network addresses are allowed).`,
      );
  }
  return {
    host,
    // One checked address: IPv4 first, as it is reachable from more networks.
    address: addresses.find((a) => isIP(a) === 4) ?? addresses[0],
    servername: isIp ? undefined : host,
  };
}

/** A socket `lookup` that answers only the checked address: no second DNS answer can swap it. */
export function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address);
  return ((_host, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(
        null,
        [{ address, family }],
      );
    else
      (callback as (e: null, a: string, f: number) => void)(
        null,
        address,
        family,
      );
  }) as LookupFunction;
}
