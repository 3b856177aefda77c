import { ApiProperty } from '@nestjs/swagger';
import type {
  CollectionAccess,
  CollectionDocumentsPage,
  CollectionInfo,
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
    enum: ['read-only', 'read-write'],
    description:
      "What the AI may do with it: read-write for AI-managed and 'ai_*' collections",
  })
  access!: CollectionAccess;
}

export class CollectionDocumentsPageDto implements CollectionDocumentsPage {
  @ApiProperty({ example: 'contacts' })
  collection!: string;
  @ApiProperty({ enum: ['read-only', 'read-write'] })
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
