/**
 * PCM16 for the Gemini relay: the microphone's float samples (at the audio
 * context's rate, often 48 kHz) down to 16 kHz little-endian 16-bit, and the
 * model's 24 kHz PCM16 back to floats for an AudioBuffer.
 */

/** Averages each output sample's span of input (a box filter: enough against aliasing for speech). */
export function toPcm16(
  input: Float32Array,
  fromRate: number,
  toRate = 16_000,
): Int16Array {
  const ratio = fromRate / toRate;
  const length = Math.floor(input.length / ratio);
  const out = new Int16Array(length);
  for (let i = 0; i < length; i++) {
    const start = Math.floor(i * ratio);
    const end = Math.max(start + 1, Math.floor((i + 1) * ratio));
    let sum = 0;
    for (let j = start; j < end && j < input.length; j++) sum += input[j];
    const sample = Math.max(-1, Math.min(1, sum / (end - start)));
    out[i] = sample < 0 ? sample * 0x8000 : sample * 0x7fff;
  }
  return out;
}

/** PCM16 little-endian bytes → floats in [-1, 1]; a trailing odd byte is dropped. */
export function fromPcm16(bytes: ArrayBuffer): Float32Array<ArrayBuffer> {
  const view = new DataView(bytes);
  const out = new Float32Array(Math.floor(bytes.byteLength / 2));
  for (let i = 0; i < out.length; i++)
    out[i] = view.getInt16(i * 2, true) / 0x8000;
  return out;
}
