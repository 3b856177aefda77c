import {
  isOwnOrigin,
  isTrustedOrigin,
  type RequestOriginPolicy,
} from '../http/request-origin.middleware';

export interface McpRequestFacts {
  origin: string | undefined;
  secFetchSite: string | undefined;
  /** `http` or `https`: the scheme this server was reached with. */
  protocol: string;
  host: string | undefined;
}

export type McpOriginDecision =
  | { allowed: true }
  | { allowed: false; message: string };

/**
 * The MCP spec's DNS-rebinding rule for every method on `/mcp` (GET included):
 * a request that carries an Origin must come from the console's own origin or
 * a TRUSTED_ORIGINS entry, and a browser must not call it cross-site. Agents
 * that are not browsers send neither header and pass. The Host itself is
 * checked for the whole app by the host allow-list (ALLOWED_HOSTS).
 */
export function decideMcpOrigin(
  req: McpRequestFacts,
  policy: RequestOriginPolicy,
): McpOriginDecision {
  const origin = req.origin?.trim();
  const own =
    origin !== undefined &&
    isOwnOrigin(
      origin,
      {
        method: 'POST',
        path: '/mcp',
        protocol: req.protocol,
        host: req.host,
        origin,
        secFetchSite: req.secFetchSite,
        contentType: undefined,
        hasBody: false,
      },
      policy,
    );
  const trusted = origin !== undefined && isTrustedOrigin(origin, policy);
  if (origin !== undefined && !own && !trusted)
    return {
      allowed: false,
      message: `Origin "${shown(origin)}" may not use /mcp: only this server's own origin or a TRUSTED_ORIGINS entry.`,
    };
  const site = req.secFetchSite?.trim().toLowerCase();
  if (
    site !== undefined &&
    site !== 'same-origin' &&
    site !== 'none' &&
    !(trusted && !own)
  )
    return {
      allowed: false,
      message: `Cross-site request to /mcp refused (Sec-Fetch-Site: ${shown(site)}).`,
    };
  return { allowed: true };
}

function shown(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 100 ? `${printable.slice(0, 100)}…` : printable;
}
