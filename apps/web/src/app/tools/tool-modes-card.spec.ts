import type { HttpTestingController } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import type { ToolsResponse } from '@metatronos/shared-types';
import { setUpApiTest, tearDownApiTest } from '../testing/api-test';
import { ToolModesCard } from './tool-modes-card';

const TOOLS: ToolsResponse = {
  modes: [
    {
      name: 'default',
      description: 'memory and everyday help',
      accountKind: null,
      tools: [
        {
          name: 'save_memory',
          description: 'Replace your memory',
          available: true,
          reason: null,
          enabled: true,
        },
      ],
    },
    {
      name: 'web',
      description: 'search and read the web',
      accountKind: null,
      tools: [
        {
          name: 'web_search',
          description: 'Search',
          available: false,
          reason: 'No Brave Search API key is set (Settings).',
          enabled: true,
        },
      ],
    },
  ],
  meta: [],
};

describe('ToolModesCard', () => {
  let http: HttpTestingController;

  beforeEach(() => {
    ({ http } = setUpApiTest(ToolModesCard));
  });

  afterEach(() => {
    tearDownApiTest(http);
  });

  it('lists each mode with its description and tools, says why a tool is unavailable, and switches a tool off', async () => {
    const fixture = TestBed.createComponent(ToolModesCard);
    await fixture.whenStable();
    http.expectOne('/api/tools').flush(TOOLS);
    await fixture.whenStable();
    const root = fixture.nativeElement as HTMLElement;
    const web = root.querySelector('[data-testid="mode-web"]') as HTMLElement;
    expect(web.querySelector('h3')?.textContent).toContain('Web mode');
    // Described for the owner, not in the words the model's prompt uses.
    expect(web.querySelector('h3')?.textContent).toContain(
      'Searches the web and reads pages for you.',
    );
    expect(web.querySelector('h3')?.textContent).not.toContain(
      'search and read the web',
    );
    // A tool is named in words first; its id stays beside it, smaller.
    const search = root.querySelector(
      '[data-testid="tool-web_search"]',
    ) as HTMLElement;
    expect(
      search.querySelector('[data-testid="tool-title"]')?.textContent?.trim(),
    ).toBe('Search the web');
    expect(search.querySelector('code')?.textContent).toBe('web_search');
    expect(
      root
        .querySelector('[data-testid="tool-switch-save_memory"] button')
        ?.getAttribute('aria-label'),
    ).toBe('Offer Save to memory');
    expect(
      web.querySelector('[data-testid="tool-reason"]')?.textContent?.trim(),
    ).toBe('No Brave Search API key is set (Settings).');

    const toggle = root.querySelector(
      '[data-testid="tool-switch-save_memory"] button',
    ) as HTMLButtonElement;
    toggle.click();
    await fixture.whenStable();
    const patch = http.expectOne('/api/settings');
    expect(patch.request.method).toBe('PATCH');
    expect(patch.request.body).toEqual({ disabledTools: ['save_memory'] });
    patch.flush({});
    http.expectOne('/api/tools').flush(TOOLS);
    fixture.destroy();
  });
});
