import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import {
  DATA_DOCUMENTS_DEFAULT_LIMIT,
  DATA_DOCUMENTS_MAX_LIMIT,
} from '@metatronos/shared-types';

export const DATA_DOCUMENTS_MAX_SKIP = 1_000_000;

export class CollectionDocumentsQueryDto {
  @ApiPropertyOptional({
    minimum: 1,
    maximum: DATA_DOCUMENTS_MAX_LIMIT,
    default: DATA_DOCUMENTS_DEFAULT_LIMIT,
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(DATA_DOCUMENTS_MAX_LIMIT)
  limit: number = DATA_DOCUMENTS_DEFAULT_LIMIT;

  @ApiPropertyOptional({
    minimum: 0,
    maximum: DATA_DOCUMENTS_MAX_SKIP,
    default: 0,
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(DATA_DOCUMENTS_MAX_SKIP)
  skip = 0;
}
