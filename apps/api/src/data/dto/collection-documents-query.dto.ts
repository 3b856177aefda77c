import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import {
  DATA_DOCUMENTS_DEFAULT_LIMIT,
  DATA_DOCUMENTS_MAX_LIMIT,
  DATA_DOCUMENTS_MAX_SKIP,
  type CollectionDocumentsQuery,
} from '@metatronos/shared-types';
import { OptionalField } from '../../http/optional-field';

export class CollectionDocumentsQueryDto implements CollectionDocumentsQuery {
  @ApiPropertyOptional({
    minimum: 1,
    maximum: DATA_DOCUMENTS_MAX_LIMIT,
    default: DATA_DOCUMENTS_DEFAULT_LIMIT,
  })
  @OptionalField()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(DATA_DOCUMENTS_MAX_LIMIT)
  limit: number = DATA_DOCUMENTS_DEFAULT_LIMIT;

  @ApiPropertyOptional({
    type: Number,
    minimum: 0,
    maximum: DATA_DOCUMENTS_MAX_SKIP,
    default: 0,
  })
  @OptionalField()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(DATA_DOCUMENTS_MAX_SKIP)
  skip = 0;
}
