import { ApiProperty } from '@nestjs/swagger';
import {
  COLLECTION_ACCESS_LEVELS,
  type CollectionAccess,
  type CollectionDocumentsPage,
  type CollectionInfo,
} from '@metatronos/shared-types';

export class CollectionInfoDto implements CollectionInfo {
  @ApiProperty({ example: 'contacts' })
  name!: string;
  @ApiProperty({
    description:
      'Number of documents (0 for an AI-managed collection not created yet)',
  })
  count!: number;
  @ApiProperty({
    enum: COLLECTION_ACCESS_LEVELS,
    description:
      "What the AI may do with it: read-write for AI-managed and 'ai_*' collections",
  })
  access!: CollectionAccess;
}

export class CollectionDocumentsPageDto implements CollectionDocumentsPage {
  @ApiProperty({ example: 'contacts' })
  collection!: string;
  @ApiProperty({ enum: COLLECTION_ACCESS_LEVELS })
  access!: CollectionAccess;
  @ApiProperty({ description: 'Documents in the collection' })
  total!: number;
  @ApiProperty()
  limit!: number;
  @ApiProperty()
  skip!: number;
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description:
      'Newest first (by _id). Plain JSON: ObjectIds as hex strings, dates as ISO strings; secrets masked as ••••abcd.',
  })
  documents!: Array<Record<string, unknown>>;
}
