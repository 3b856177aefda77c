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

  it('is a page of tool sections: web search, WhatsApp, then the modes and their tools', async () => {
    const fixture = TestBed.createComponent(ToolsPage);
    await fixture.whenStable();
    http.expectOne('/api/settings').flush({
      geminiApiKey: null,
      openaiApiKey: null,
      openaiCompatible: [],
      primaryModel: null,
      imageModel: null,
      braveApiKey: null,
      timezone: 'UTC',
      updatedAt: null,
    });
    http
      .expectOne('/api/whatsapp/status')
      .flush({ status: 'disconnected', phoneNumber: null });
    http.expectOne('/api/tools').flush({ modes: [], meta: [] });
    await fixture.whenStable();
    const root = fixture.nativeElement as HTMLElement;
    expect(root.querySelector('h1')?.textContent).toBe('Tools');
    const [web, whatsApp, modes] = Array.from(
      root.querySelectorAll('[data-testid="tool-sections"] > section'),
    );
    expect(web?.getAttribute('aria-labelledby')).toBe('web-search-heading');
    expect(web?.querySelector('#web-search-heading')?.textContent?.trim()).toBe(
      'Web search (Brave)',
    );
    expect(whatsApp?.getAttribute('aria-labelledby')).toBe('whatsapp-heading');
    expect(
      whatsApp?.querySelector('#whatsapp-heading')?.textContent?.trim(),
    ).toBe('WhatsApp');
    expect(modes?.getAttribute('aria-labelledby')).toBe('tool-modes-heading');
    fixture.destroy();
  });
});
