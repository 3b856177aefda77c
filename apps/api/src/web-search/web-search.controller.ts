import {
  BadRequestException,
  Body,
  Controller,
  HttpCode,
  Post,
} from '@nestjs/common';
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
import { BraveSearchClient, WebSearchError } from './brave-search-client';
import {
  WebSearchTestDto,
  WebSearchTestResultDto,
} from './dto/web-search-test.dto';

@ApiTags('tools')
@Controller('web-search')
export class WebSearchController {
  constructor(
    private readonly settings: SettingsService,
    private readonly brave: BraveSearchClient,
  ) {}

  @Post('test')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Run one Brave search with the stored key, to check that web search works',
  })
  @ApiOkResponse({
    type: WebSearchTestResultDto,
    description:
      'The outcome, also when the search failed (`ok: false` with `error`)',
  })
  @ApiBadRequestResponse({
    description:
      'No Brave Search key is configured, or the query is not a string of at most 400 characters',
  })
  async test(@Body() body: WebSearchTestDto): Promise<WebSearchTestResponse> {
    const { braveApiKey } = await this.settings.get();
    if (!braveApiKey)
      throw new BadRequestException(
        'No Brave Search API key is configured: save one first.',
      );
    const query = body.query?.trim() || WEB_SEARCH_TEST_DEFAULT_QUERY;
    const started = performance.now();
    const durationMs = () => Math.round(performance.now() - started);
    try {
      const results = await this.brave.search({ apiKey: braveApiKey, query });
      const [first] = results;
      return {
        ok: true,
        results: results.length,
        durationMs: durationMs(),
        sample: first ? { title: first.title, url: first.url } : null,
      };
    } catch (error) {
      if (error instanceof WebSearchError)
        return { ok: false, error: error.message, durationMs: durationMs() };
      throw error;
    }
  }
}
