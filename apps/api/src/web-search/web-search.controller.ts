import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import {
  WEB_SEARCH_TEST_DEFAULT_QUERY,
  type WebSearchTestResponse,
} from '@metatronos/shared-types';
import { SettingsService } from '../settings/settings.service';
import { WebSearchError } from './brave-search-client';
import { WebSearchService, webSearchEngine } from './web-search.service';
import {
  WebSearchTestDto,
  WebSearchTestResultDto,
} from './dto/web-search-test.dto';

@ApiTags('tools')
@Controller('web-search')
export class WebSearchController {
  constructor(
    private readonly settings: SettingsService,
    private readonly search: WebSearchService,
  ) {}

  @Post('test')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Run one search with the engine in use (Brave with the stored key, else DuckDuckGo), to check that web search works',
  })
  @ApiOkResponse({
    type: WebSearchTestResultDto,
    description:
      'The outcome, also when the search failed (`ok: false` with `error`)',
  })
  @ApiBadRequestResponse({
    description: 'The query is not a string of at most 400 characters',
  })
  async test(@Body() body: WebSearchTestDto): Promise<WebSearchTestResponse> {
    const settings = await this.settings.get();
    const engine = webSearchEngine(settings);
    const query = body.query?.trim() || WEB_SEARCH_TEST_DEFAULT_QUERY;
    const started = performance.now();
    const durationMs = () => Math.round(performance.now() - started);
    try {
      const { results } = await this.search.search(settings, { query });
      const [first] = results;
      return {
        ok: true,
        engine,
        results: results.length,
        durationMs: durationMs(),
        sample: first ? { title: first.title, url: first.url } : null,
      };
    } catch (error) {
      if (error instanceof WebSearchError)
        return {
          ok: false,
          engine,
          error: error.message,
          durationMs: durationMs(),
        };
      throw error;
    }
  }
}
