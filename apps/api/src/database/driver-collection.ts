import type { Collection as DriverCollection, Document } from 'mongodb';

/**
 * The MongoDB driver's own collection behind a mongoose model's `collection`, for the writes every
 * chat turn makes. Mongoose's wrapper (`NativeCollection`) costs each call a new ObjectId, a copy of
 * the arguments, `operation-start`/`operation-end` events with their objects and a second promise:
 * about a tenth of a command's CPU. None of it does anything here: commands are not buffered
 * (`bufferCommands: false`), mongoose's debug log is off and nothing listens to those events.
 * Before the connection's first open it is the wrapper, which throws its usual error.
 */
export function driverCollection<T extends Document>(
  collection: DriverCollection<T>,
): DriverCollection<T> {
  return (
    (collection as unknown as { collection?: DriverCollection<T> | null })
      .collection ?? collection
  );
}
