import { createHash } from 'node:crypto';
import type { McpToolDefinition } from '@metatronos/shared-types';

/** One tool as the server lists it. */
export interface ListedTool {
  name: string;
  definition: McpToolDefinition;
}

/** One tool as the app keeps it: what the server lists now, what the owner approved, the owner's switches. */
export interface StoredMcpTool {
  name: string;
  current: McpToolDefinition | null;
  currentHash: string | null;
  approved: McpToolDefinition | null;
  approvedHash: string | null;
  enabled: boolean;
  unattended: boolean;
}

/**
 * The hash of what the model would read and send for a tool: its name, description,
 * input schema and hints, in a canonical JSON (key order does not matter).
 */
export function definitionHash(
  name: string,
  definition: McpToolDefinition,
): string {
  return createHash('sha256')
    .update(canonicalJson({ name, ...definition }))
    .digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map(
        (key) =>
          `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`,
      )
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}

/** Offered only when the server lists exactly what the owner approved. */
export function isApproved(tool: StoredMcpTool): boolean {
  return tool.currentHash !== null && tool.currentHash === tool.approvedHash;
}

/** A listed tool the owner has not approved in this form: new, or changed after approval. */
export function changeOf(tool: StoredMcpTool): 'new' | 'changed' | null {
  if (tool.current === null || isApproved(tool)) return null;
  return tool.approvedHash === null ? 'new' : 'changed';
}

/**
 * The stored tools after the server listed `listed`. On the very first listing
 * (the owner just added the server and sees every definition) the tools are approved
 * as listed; afterwards a new tool, or one whose definition differs from the approved
 * one (a rug pull), is not offered until the owner approves it again. A tool the
 * server stopped listing keeps its approval, should it come back unchanged.
 */
export function reconcileTools(
  stored: readonly StoredMcpTool[],
  listed: readonly ListedTool[],
  firstListing: boolean,
): StoredMcpTool[] {
  const byName = new Map(stored.map((t) => [t.name, t]));
  const seen = new Set<string>();
  const next: StoredMcpTool[] = [];
  for (const { name, definition } of listed) {
    if (seen.has(name)) continue;
    seen.add(name);
    const hash = definitionHash(name, definition);
    const before = byName.get(name);
    next.push({
      name,
      current: definition,
      currentHash: hash,
      approved: firstListing ? definition : (before?.approved ?? null),
      approvedHash: firstListing ? hash : (before?.approvedHash ?? null),
      enabled: before?.enabled ?? true,
      unattended: before?.unattended ?? false,
    });
  }
  for (const tool of stored)
    if (!seen.has(tool.name))
      next.push({ ...tool, current: null, currentHash: null });
  return next;
}

/** Approves the current definitions of `names` (every tool waiting when omitted); answers the names approved. */
export function approveTools(
  tools: StoredMcpTool[],
  names: ReadonlySet<string> | null,
): string[] {
  const done: string[] = [];
  for (const tool of tools) {
    if (names && !names.has(tool.name)) continue;
    if (tool.current === null || isApproved(tool)) continue;
    tool.approved = tool.current;
    tool.approvedHash = tool.currentHash;
    done.push(tool.name);
  }
  return done;
}
