import { TextCheck, decideType, sanitizeFileName } from './attachment-type';

const bytes = (...values: number[]) => Buffer.from(values);

describe('decideType', () => {
  it.each([
    [
      'a.png',
      bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0),
      'image/png',
    ],
    ['a.jpeg', bytes(0xff, 0xd8, 0xff, 0xe0), 'image/jpeg'],
    ['a.gif', Buffer.from('GIF89a...'), 'image/gif'],
    [
      'a.webp',
      Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 ', 'latin1'),
      'image/webp',
    ],
    ['a.pdf', Buffer.from('%PDF-1.7'), 'application/pdf'],
    [
      'photo.jpg',
      bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
      'image/png',
    ],
    ['no-extension', Buffer.from('%PDF-1.7'), 'application/pdf'],
    ['notes.TXT', Buffer.from('hello'), 'text/plain'],
    ['data.json', Buffer.from('{}'), 'application/json'],
  ])('accepts %s as %s', (name, head, mime) => {
    expect(decideType(head, name)).toMatchObject({ mime });
  });

  it.each([
    ['tool.exe', bytes(0x4d, 0x5a, 0x90, 0)],
    ['page.html', Buffer.from('<html>')],
    ['fake.png', Buffer.from('hello')],
    ['scan.txt', Buffer.from('%PDF-1.7')],
    ['noext', Buffer.from('hello')],
  ])('refuses %s', (name, head) => {
    expect(typeof decideType(head, name)).toBe('string');
  });
});

describe('TextCheck', () => {
  it('accepts UTF-8 split across chunks and refuses NUL bytes or invalid sequences', () => {
    const euro = Buffer.from('€');
    const ok = new TextCheck();
    expect(ok.push(euro.subarray(0, 1))).toBe(true);
    expect(ok.push(euro.subarray(1))).toBe(true);
    expect(ok.end()).toBe(true);
    expect(new TextCheck().push(bytes(0x61, 0))).toBe(false);
    expect(new TextCheck().push(bytes(0xff, 0xfe, 0x41))).toBe(false);
    const cut = new TextCheck();
    cut.push(euro.subarray(0, 2));
    expect(cut.end()).toBe(false);
  });
});

describe('sanitizeFileName', () => {
  it('keeps the last path segment without control, bidi or reserved characters', () => {
    expect(sanitizeFileName('../../etc/passwd.txt')).toBe('passwd.txt');
    expect(sanitizeFileName('C:\\Users\\me\\report.pdf')).toBe('report.pdf');
    expect(sanitizeFileName('a\u0000b\u202ec<d>.txt')).toBe('abcd.txt');
    expect(sanitizeFileName(' .. ')).toBe('file');
    expect(sanitizeFileName(undefined)).toBe('file');
    const long = sanitizeFileName(`${'x'.repeat(300)}.md`);
    expect(long).toHaveLength(200);
    expect(long.endsWith('.md')).toBe(true);
  });
});
