/**
 * Response bodies cut into pieces, for the specs that hold a stream reader of ours to the SDK's own
 * (`sse-json-events.spec.ts`, `gemini-stream.spec.ts`): the same text whole, one byte at a time and
 * at seeded random points, so a reader that only works on whole events fails.
 */

/** A body that hands over `bytes` in the pieces `cuts` makes (offsets), then ends or fails. */
export function body(
  bytes: Uint8Array,
  cuts: number[],
  failWith?: unknown,
): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut > from) pieces.push(bytes.slice(from, cut));
    from = Math.max(from, cut);
  }
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = pieces.shift();
      if (piece) controller.enqueue(piece);
      else if (failWith) controller.error(failWith);
      else controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled };
}

/** Cut points at random steps of 1–9 bytes from a small seeded generator, so a failing split can be run again. */
export function cutsFor(length: number, seed: number): number[] {
  let state = seed;
  const cuts: number[] = [];
  for (let at = 0; at < length; ) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    at += 1 + (state % 9);
    cuts.push(at);
  }
  return cuts;
}

/** The ways a body of `length` bytes is cut: whole, at every byte, at three seeded random series of points. */
export function splitsOf(length: number): number[][] {
  return [
    [],
    Array.from({ length }, (_, i) => i + 1),
    cutsFor(length, 1),
    cutsFor(length, 2),
    cutsFor(length, 3),
  ];
}

/** Every byte its own piece: a body that has not ended when a reader stops early. */
export const everyByte = (bytes: Uint8Array): number[] =>
  Array.from({ length: bytes.length }, (_, i) => i + 1);
