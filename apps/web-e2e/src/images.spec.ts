import type { Locator } from '@playwright/test';
import {
  makePng,
  type FakeRecordedRequest,
} from '../../../tools/fake-llm/fake-llm-server';
import { expect, ownerSession, test } from './support/fake-llm';

test.use({ appName: 'images' });

/** The model's follow-up after an image tool: repeats the tool result's markdown, as the prompt asks it to. */
const echoMarkdown = (request: FakeRecordedRequest) => {
  const last = request.body.messages.at(-1) as { content: string };
  const parsed = JSON.parse(last.content) as {
    markdown?: string;
    error?: string;
  };
  return {
    text: [
      parsed.markdown
        ? `Here it is:\n\n${parsed.markdown}\n\nEnjoy!`
        : `Sorry: ${parsed.error}`,
    ],
  };
};

/** The `naturalWidth` of an `<img>` once the browser decoded it (0 while loading or when broken). */
const naturalWidth = (img: Locator) =>
  img.evaluate((el: HTMLImageElement) => (el.complete ? el.naturalWidth : 0));

test('images: a generated image shows inline and on its tool chip, opens in a viewer, and survives a reload; an edit adds a second one', async ({
  page,
  fake,
}) => {
  await ownerSession(page);
  const settings = await page.request.patch('/api/settings', {
    data: {
      openaiApiKey: 'sk-e2e-openai-key-7890',
      primaryModel: 'gpt-4.1-mini',
      imageModel: 'gpt-image-1',
    },
  });
  expect(settings.status()).toBe(200);

  const lighthouse = makePng(320, 200, [230, 120, 40]);
  fake.openaiImages.enqueue({ image: lighthouse });
  fake.openai.enqueue(
    {
      toolCalls: [
        {
          id: 'call_draw',
          name: 'generate_image',
          arguments: {
            prompt: 'A lighthouse at dusk, oil painting',
            shortDescription: 'Lighthouse at dusk',
          },
        },
      ],
    },
    echoMarkdown,
  );

  await page.goto('/chat');
  await page.getByTestId('new-chat').click();
  // A draft: the chat is stored with its first message.
  await expect(page).toHaveURL(/\/chat\/new$/);
  await page.getByTestId('composer-input').fill('draw a lighthouse at dusk');
  await page.getByTestId('send-button').click();

  const reply = page.getByTestId('assistant-message').last();
  await expect(reply).toContainText('Enjoy!');
  await expect(page.getByTestId('stop-button')).toBeHidden();

  // Inline in the reply: the console's own media URL, actually loaded.
  const inline = reply.locator('mt-markdown img');
  await expect(inline).toHaveCount(1);
  await expect(inline).toHaveAttribute('src', /^\/api\/media\/[0-9a-f]{24}$/);
  await expect(inline).toHaveAttribute('alt', 'Lighthouse at dusk');
  await expect.poll(() => naturalWidth(inline)).toBe(320);
  const src = (await inline.getAttribute('src')) as string;
  const mediaId = src.split('/').pop() as string;

  // The image request reached the fake image model.
  expect(fake.openaiImages.requests).toHaveLength(1);
  expect(fake.openaiImages.requests[0]).toMatchObject({
    path: '/v1/images/generations',
    model: 'gpt-image-1',
  });
  expect(fake.openaiImages.requests[0].body).toMatchObject({
    prompt: 'A lighthouse at dusk, oil painting',
  });

  // The tool chip shows its thumbnail.
  const chip = reply.getByTestId('tool-chip');
  await expect(chip).toHaveAttribute('data-tool', 'generate_image');
  await expect(chip).toHaveAttribute('data-status', 'ok');
  const thumb = chip.getByTestId('tool-chip-image').getByTestId('media-thumb');
  const thumbImg = thumb.locator('img');
  await expect(thumbImg).toHaveAttribute('src', src);
  await expect.poll(() => naturalWidth(thumbImg)).toBe(320);

  // The thumbnail opens the viewer with a download link; the close button shuts it.
  await thumb.click();
  const viewer = page.getByTestId('media-viewer');
  await expect(viewer).toBeVisible();
  await expect.poll(() => naturalWidth(viewer.locator('img.full'))).toBe(320);
  const download = viewer.getByTestId('media-download');
  await expect(download).toHaveAttribute('href', src);
  await expect(download).toHaveAttribute('download', 'Lighthouse-at-dusk.png');
  const [file] = await Promise.all([
    page.waitForEvent('download'),
    download.click(),
  ]);
  expect(file.suggestedFilename()).toBe('Lighthouse-at-dusk.png');
  await viewer.getByTestId('media-close').click();
  await expect(viewer).toBeHidden();

  // After a reload the reply still shows the image inline, loaded.
  await page.reload();
  const reloaded = page
    .getByTestId('assistant-message')
    .last()
    .locator('mt-markdown img');
  await expect(reloaded).toHaveAttribute('src', src);
  await expect.poll(() => naturalWidth(reloaded)).toBe(320);
  await expect(
    page.getByTestId('assistant-message').last().getByTestId('tool-chip-image'),
  ).toBeVisible();

  // A second turn edits the first image by id.
  const snowy = makePng(320, 200, [200, 220, 245]);
  fake.openaiImages.enqueue({ image: snowy });
  fake.openai.enqueue(
    {
      toolCalls: [
        {
          id: 'call_edit',
          name: 'edit_image',
          arguments: {
            imageId: mediaId,
            prompt: 'Same lighthouse, now in falling snow',
            shortDescription: 'Snowy lighthouse',
          },
        },
      ],
    },
    echoMarkdown,
  );
  await page.getByTestId('composer-input').fill('make it snowy');
  await page.getByTestId('send-button').click();
  await expect(page.getByTestId('assistant-message')).toHaveCount(2);
  const second = page.getByTestId('assistant-message').last();
  await expect(second).toContainText('Enjoy!');
  await expect(page.getByTestId('stop-button')).toBeHidden();
  const secondInline = second.locator('mt-markdown img');
  await expect(secondInline).toHaveAttribute('alt', 'Snowy lighthouse');
  await expect(secondInline).toHaveAttribute(
    'src',
    /^\/api\/media\/[0-9a-f]{24}$/,
  );
  await expect(secondInline).not.toHaveAttribute('src', src);
  await expect.poll(() => naturalWidth(secondInline)).toBe(320);
  await expect(second.getByTestId('tool-chip')).toHaveAttribute(
    'data-tool',
    'edit_image',
  );
  await expect(second.getByTestId('tool-chip')).toHaveAttribute(
    'data-status',
    'ok',
  );
  await expect
    .poll(() =>
      naturalWidth(second.getByTestId('tool-chip-image').locator('img')),
    )
    .toBe(320);
  expect(fake.openaiImages.requests[1]).toMatchObject({
    path: '/v1/images/edits',
    model: 'gpt-image-1',
  });
  expect(fake.openaiImages.requests[1].files?.[0].data.equals(lighthouse)).toBe(
    true,
  );

  await page.screenshot({ path: '/tmp/chat-images.png', fullPage: true });

  // An image attached in the composer, before sending.
  await page.getByTestId('attachment-input').setInputFiles({
    name: 'sketch.png',
    mimeType: 'image/png',
    buffer: makePng(64, 64, [40, 140, 200]),
  });
  await expect(page.getByTestId('pending-attachment')).toHaveAttribute(
    'data-status',
    'done',
  );
  await expect(page.getByTestId('pending-attachment')).toContainText(
    'sketch.png',
  );
  await page.screenshot({ path: '/tmp/chat-attach.png' });
});
