import { fromPcm16, toPcm16 } from './pcm-audio';

describe('PCM16 for the Gemini relay', () => {
  it('takes 48 kHz floats down to a third as many 16-bit samples', () => {
    const input = new Float32Array(480).fill(0.5);
    const out = toPcm16(input, 48_000);
    expect(out).toHaveLength(160);
    expect(out[0]).toBe(Math.floor(0.5 * 0x7fff));
  });

  it('clips what is out of range and keeps the sign', () => {
    const out = toPcm16(new Float32Array([2, -2, -0.5]), 16_000);
    expect(Array.from(out)).toEqual([0x7fff, -0x8000, -0x4000]);
  });

  it('averages a span (a 1 kHz tone keeps its shape at 16 kHz)', () => {
    const input = Float32Array.from({ length: 4800 }, (_, i) =>
      Math.sin((2 * Math.PI * 1000 * i) / 48_000),
    );
    const out = toPcm16(input, 48_000);
    const peak = Math.max(...Array.from(out));
    expect(peak).toBeGreaterThan(0.9 * 0x7fff);
  });

  it('reads little-endian PCM16 back to floats, dropping an odd byte', () => {
    const bytes = new Uint8Array([0x00, 0x40, 0x00, 0xc0, 0x7f]).buffer;
    expect(Array.from(fromPcm16(bytes))).toEqual([0.5, -0.5]);
  });
});
