import type { HttpTestingController } from '@angular/common/http/testing';
import { TestBed } from '@angular/core/testing';
import { setUpApiTest, tearDownApiTest } from '../testing/api-test';
import { ToolsPage } from './tools-page';

describe('ToolsPage', () => {
  let http: HttpTestingController;

  beforeEach(() => {
    ({ http } = setUpApiTest(ToolsPage));
  });

  afterEach(() => {
    tearDownApiTest(http);
  });

  it('is a page of tool sections: web search, fetch, then the modes and their tools, then MCP servers (the channels have their own page)', async () => {
    const fixture = TestBed.createComponent(ToolsPage);
    await fixture.whenStable();
    const settings = {
      geminiApiKey: null,
      openaiApiKey: null,
      openaiCompatible: [],
      primaryModel: null,
      imageModel: null,
      braveApiKey: null,
      timezone: 'UTC',
      urlFetchAllowHosts: [],
      authProfiles: [],
      updatedAt: null,
    };
    // The web search and fetch cards each load the settings.
    for (const req of http.match('/api/settings')) req.flush(settings);
    http.expectOne('/api/tools').flush({ modes: [], meta: [] });
    http.expectOne('/api/mcp/servers').flush([]);
    await fixture.whenStable();
    const root = fixture.nativeElement as HTMLElement;
    expect(root.querySelector('h1')?.textContent).toBe('Tools');
    const [web, fetch, modes, mcp] = Array.from(
      root.querySelectorAll('[data-testid="tool-sections"] > section'),
    );
    expect(web?.getAttribute('aria-labelledby')).toBe('web-search-heading');
    expect(web?.querySelector('#web-search-heading')?.textContent?.trim()).toBe(
      'Web search',
    );
    expect(fetch?.getAttribute('aria-labelledby')).toBe('url-fetch-heading');
    expect(
      fetch?.querySelector('#url-fetch-heading')?.textContent?.trim(),
    ).toBe('Fetch');
    expect(modes?.getAttribute('aria-labelledby')).toBe('tool-modes-heading');
    expect(mcp?.querySelector('#mcp-heading')?.textContent?.trim()).toBe(
      'MCP servers',
    );
    expect(root.querySelector('mt-whatsapp-card')).toBeNull();
    fixture.destroy();
  });
});
