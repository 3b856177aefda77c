import { deflateSync } from 'node:zlib';
import { expect, ownerSession, test } from './support/fake-llm';

test.use({ appName: 'attachments' });

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A solid-colour RGB PNG of `size`×`size` pixels. */
function solidPng(size: number, [r, g, b]: [number, number, number]): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([
    Buffer.from([0]),
    Buffer.from(Array.from({ length: size }, () => [r, g, b]).flat()),
  ]);
  const pixels = Buffer.concat(Array.from({ length: size }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(pixels)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

test('attachments: an image goes with a message to the model and stays on the message after a reload', async ({
  page,
  fake,
}) => {
  await ownerSession(page);
  const settings = await page.request.patch('/api/settings', {
    data: {
      openaiApiKey: 'sk-e2e-openai-key-7890',
      primaryModel: 'gpt-4.1-mini',
    },
  });
  expect(settings.status()).toBe(200);
  fake.openai.enqueue({ text: ['A green square.'] });
  const png = solidPng(48, [20, 160, 60]);

  await page.goto('/chat');
  await page.getByTestId('new-chat').click();
  // A draft: the chat is stored with its first message.
  await expect(page).toHaveURL(/\/chat\/new$/);
  await page
    .getByTestId('attachment-input')
    .setInputFiles({ name: 'square.png', mimeType: 'image/png', buffer: png });
  await expect(page.getByTestId('pending-attachment')).toHaveAttribute(
    'data-status',
    'done',
  );
  await expect(page.getByTestId('pending-attachment')).toContainText(
    'square.png',
  );
  // A refused type is explained and can be removed.
  await page.getByTestId('attachment-input').setInputFiles({
    name: 'tool.exe',
    mimeType: 'application/octet-stream',
    buffer: Buffer.from([
      0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ]),
  });
  await expect(page.getByTestId('attachment-error')).toContainText(
    'This file type is not accepted (.exe)',
  );
  await page.getByTestId('remove-attachment').last().click();
  await expect(page.getByTestId('pending-attachment')).toHaveCount(1);

  await page.getByTestId('composer-input').fill('What colour is this?');
  await page.getByTestId('send-button').click();
  await expect(page.getByTestId('assistant-message').last()).toContainText(
    'A green square.',
  );
  await expect(page.getByTestId('pending-attachment')).toHaveCount(0);

  const image = page
    .getByTestId('user-message')
    .getByTestId('attachment-image')
    .locator('img');
  await expect(image).toHaveAttribute('alt', 'square.png');
  await expect
    .poll(() => image.evaluate((img: HTMLImageElement) => img.naturalWidth))
    .toBe(48);
  const content = fake.openai.requests[0].body.messages.at(-1).content;
  expect(content[1]).toEqual({
    type: 'image_url',
    image_url: { url: `data:image/png;base64,${png.toString('base64')}` },
  });

  await page.reload();
  const reloaded = page
    .getByTestId('user-message')
    .getByTestId('attachment-image')
    .locator('img');
  await expect(reloaded).toHaveAttribute('alt', 'square.png');
  await expect
    .poll(() => reloaded.evaluate((img: HTMLImageElement) => img.naturalWidth))
    .toBe(48);
  const src = await reloaded.getAttribute('src');
  const file = await page.request.get(src as string);
  expect(file.headers()['content-type']).toBe('image/png');
  expect(Buffer.from(await file.body())).toEqual(png);
});
