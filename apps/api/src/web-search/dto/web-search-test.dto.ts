import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import {
  WEB_SEARCH_QUERY_MAX_LENGTH,
  WEB_SEARCH_TEST_DEFAULT_QUERY,
  type WebSearchEngine,
  type WebSearchResult,
  type WebSearchTestRequest,
} from '@metatronos/shared-types';
import { OptionalField } from '../../http/optional-field';

export class WebSearchTestDto implements WebSearchTestRequest {
  @ApiPropertyOptional({
    maxLength: WEB_SEARCH_QUERY_MAX_LENGTH,
    default: WEB_SEARCH_TEST_DEFAULT_QUERY,
    example: 'MetatronOS',
  })
  @OptionalField()
  @IsString()
  @MaxLength(WEB_SEARCH_QUERY_MAX_LENGTH)
  query?: string;
}

export class WebSearchSampleDto
  implements Pick<WebSearchResult, 'title' | 'url'>
{
  @ApiProperty({ example: 'MetatronOS on GitHub' })
  title!: string;

  @ApiProperty({ example: 'https://github.com/example/metatronos' })
  url!: string;
}

/** One shape for both outcomes: `ok` says which fields are set. */
export class WebSearchTestResultDto {
  @ApiProperty({
    description: 'true when the engine answered with results (possibly none)',
  })
  ok!: boolean;

  @ApiProperty({
    enum: ['brave', 'duckduckgo'],
    description: 'Brave when a key is saved, DuckDuckGo otherwise',
  })
  engine!: WebSearchEngine;

  @ApiPropertyOptional({
    description: 'How many results came back (when ok)',
    example: 5,
  })
  results?: number;

  @ApiProperty({
    description: 'How long the search took, in milliseconds',
    example: 240,
  })
  durationMs!: number;

  @ApiPropertyOptional({
    type: WebSearchSampleDto,
    nullable: true,
    description: 'The first result (when ok; null when there were none)',
  })
  sample?: WebSearchSampleDto | null;

  @ApiPropertyOptional({
    description:
      'Why the search failed (when not ok): key refused, rate limit, timeout, unreachable…',
    example:
      'The Brave Search key was refused (HTTP 401). Check the key on the Tools page.',
  })
  error?: string;
}
