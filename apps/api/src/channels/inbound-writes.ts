import type { Collection, MatchKeysAndValues } from 'mongodb';
import { GroupedUpdates } from '../database/grouped-updates';
import type { InboundMessage } from './contact-auto-reply';

/** The fields one write sets on a stored message. */
export type InboundFields = MatchKeysAndValues<InboundMessage>;

/**
 * Group commit for the state of stored inbound messages (see GroupedUpdates): each caller
 * still waits until its own write is stored, so what is durable before a send (the answer,
 * `sendingAt`) is exactly as before; the writes different contacts' queues make while one
 * is in flight go out together as the next command.
 */
export class InboundWrites {
  private readonly updates: GroupedUpdates<InboundMessage>;

  constructor(collection: () => Collection<InboundMessage>) {
    this.updates = new GroupedUpdates(collection);
  }

  /** Sets fields of one stored message; resolves once stored, rejects with the database's reason. */
  set(id: string, fields: InboundFields): Promise<void> {
    return this.updates.set(id, { _id: id }, fields);
  }
}
