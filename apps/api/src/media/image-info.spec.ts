import { makePng } from '../../../../tools/fake-llm/fake-llm-server';
import { readImageInfo } from './image-info';
import { downloadName } from './media.controller';
import { markdownAlt } from './image-tools';

function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([
    0xff,
    0xe0,
    0x00,
    0x10,
    ...Buffer.from('JFIF\0'),
    1,
    1,
    0,
    0,
    1,
    0,
    1,
    0,
    0,
  ]);
  const sof = Buffer.alloc(19);
  sof.writeUInt16BE(0xffc2, 0); // progressive frame
  sof.writeUInt16BE(17, 2);
  sof[4] = 8;
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    app0,
    Buffer.from([0xff, 0xc4, 0x00, 0x02]),
    sof,
    Buffer.from([0xff, 0xd9]),
  ]);
}

function webp(chunk: string, payload: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeUInt32LE(payload.length);
  const body = Buffer.concat([
    Buffer.from('WEBP'),
    Buffer.from(chunk),
    size,
    payload,
  ]);
  const riff = Buffer.alloc(4);
  riff.writeUInt32LE(body.length);
  return Buffer.concat([Buffer.from('RIFF'), riff, body]);
}

describe('readImageInfo', () => {
  it('reads PNG dimensions from IHDR', () => {
    expect(readImageInfo(makePng(4, 3))).toEqual({
      mime: 'image/png',
      width: 4,
      height: 3,
    });
    expect(readImageInfo(makePng(1, 17))).toEqual({
      mime: 'image/png',
      width: 1,
      height: 17,
    });
  });

  it('walks JPEG segments to the frame header', () => {
    expect(readImageInfo(jpeg(1024, 768))).toEqual({
      mime: 'image/jpeg',
      width: 1024,
      height: 768,
    });
  });

  it('reads the three WebP flavours', () => {
    const lossy = Buffer.from([
      0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x00, 0x04, 0x00, 0x03,
    ]);
    expect(readImageInfo(webp('VP8 ', lossy))).toEqual({
      mime: 'image/webp',
      width: 1024,
      height: 768,
    });
    const bits = Buffer.alloc(10);
    bits[0] = 0x2f;
    bits.writeUInt32LE((640 - 1) | ((480 - 1) << 14), 1);
    expect(readImageInfo(webp('VP8L', bits))).toEqual({
      mime: 'image/webp',
      width: 640,
      height: 480,
    });
    const extended = Buffer.alloc(10);
    extended.writeUIntLE(1536 - 1, 4, 3);
    extended.writeUIntLE(1024 - 1, 7, 3);
    expect(readImageInfo(webp('VP8X', extended))).toEqual({
      mime: 'image/webp',
      width: 1536,
      height: 1024,
    });
  });

  it('refuses anything else, or a cut header', () => {
    expect(
      readImageInfo(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')),
    ).toBeNull();
    expect(readImageInfo(Buffer.from('GIF89a\x01\x00\x01\x00'))).toBeNull();
    expect(readImageInfo(makePng(4, 3).subarray(0, 20))).toBeNull();
    expect(readImageInfo(jpeg(10, 10).subarray(0, 30))).toBeNull();
    expect(readImageInfo(Buffer.alloc(0))).toBeNull();
  });
});

describe('names and alt text', () => {
  it('makes a safe ASCII download name', () => {
    expect(
      downloadName({ shortDescription: 'Red fox in snow', mime: 'image/png' }),
    ).toBe('Red-fox-in-snow.png');
    expect(
      downloadName({
        shortDescription: '../"évil"\r\nname',
        mime: 'image/jpeg',
      }),
    ).toBe('evil-name.jpg');
    expect(downloadName({ shortDescription: '', mime: 'image/webp' })).toBe(
      'image.webp',
    );
  });

  it('keeps alt text inside the image syntax', () => {
    expect(markdownAlt('a [b]\nc')).toBe('a \\[b\\] c');
  });
});
