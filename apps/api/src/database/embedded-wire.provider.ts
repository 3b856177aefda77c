import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import type { MongoClient } from 'mongodb';
import type { Connection } from 'mongoose';
import { DATABASE_RUNTIME, type DatabaseRuntime } from './database-runtime';
import { stopUsingEmbeddedWire, useEmbeddedWire } from './driver-collection';
import {
  EmbeddedWire,
  embeddedWireAddress,
  type WireCommandEvents,
} from './embedded-wire';

/**
 * Opens the embedded database's own wire (`EmbeddedWire`) for the hot writes of `driverCollection`
 * and the reads of `findAll`, `aggregateAll` and `countAll`,
 * on the embedded database only (an external MongoDB keeps the driver for everything: credentials,
 * TLS, replica sets). With `monitorCommands` its commands are announced on the driver client as
 * the driver's own are (`commandStarted`, `commandSucceeded`, `commandFailed`).
 */
@Injectable()
export class EmbeddedWireProvider implements OnModuleInit {
  private wire: EmbeddedWire | undefined;
  private client: MongoClient | undefined;

  constructor(
    @Inject(DATABASE_RUNTIME) private readonly runtime: DatabaseRuntime,
    @InjectConnection() private readonly connection: Connection,
  ) {}

  onModuleInit(): void {
    if (this.runtime.kind !== 'embedded') return;
    const address = embeddedWireAddress(this.runtime.uri);
    if (!address) return;
    const client = this.connection.getClient() as unknown as MongoClient;
    this.client = client;
    this.wire = new EmbeddedWire(
      address,
      this.runtime.monitorCommands ? announcedOn(client) : undefined,
    );
    useEmbeddedWire(client, this.wire);
    // Closed with the driver's own connections: a shutdown hook may still write until then.
    this.connection.once('close', () => this.stop());
  }

  private stop(): void {
    if (this.client) stopUsingEmbeddedWire(this.client);
    this.wire?.close();
  }
}

/** The driver's command events, emitted on `client` for the wire's commands. */
function announcedOn(client: MongoClient): WireCommandEvents {
  const started = new Map<number, { commandName: string; at: number }>();
  return {
    started: ({ requestId, databaseName, command }) => {
      const commandName = Object.keys(command)[0];
      started.set(requestId, { commandName, at: performance.now() });
      client.emit('commandStarted', {
        commandName,
        command,
        databaseName,
        requestId,
        connectionId: 'embedded-wire',
      } as never);
    },
    ended: ({ requestId, reply, error }) => {
      const start = started.get(requestId);
      started.delete(requestId);
      const common = {
        commandName: start?.commandName ?? '',
        requestId,
        duration: start ? performance.now() - start.at : 0,
        connectionId: 'embedded-wire',
      };
      if (error)
        client.emit('commandFailed', { ...common, failure: error } as never);
      else client.emit('commandSucceeded', { ...common, reply } as never);
    },
  };
}
