export const COLLECTION_ACCESS_LEVELS = ['read-only', 'read-write'] as const;
export type CollectionAccess = (typeof COLLECTION_ACCESS_LEVELS)[number];

/** `GET /api/data/collections` items. */
export interface CollectionInfo {
  name: string;
  count: number;
  access: CollectionAccess;
}

/** Core collections: the AI may read them, never write. */
export const PROTECTED_COLLECTIONS: readonly string[] = [
  'chats',
  'messages',
  'settings',
  'media',
  'attachments',
];
/** Collections with a predefined schema the AI reads and writes without the `ai_` prefix. */
export const AI_MANAGED_COLLECTIONS: readonly string[] = [
  'master',
  'contacts',
  'schedule',
  'cronjobs',
];
/** Collections the AI creates itself start with this. */
export const AI_COLLECTION_PREFIX = 'ai_';

/** Default and maximum page size of `GET /api/data/collections/:name/documents`. */
export const DATA_DOCUMENTS_DEFAULT_LIMIT = 20;
export const DATA_DOCUMENTS_MAX_LIMIT = 100;

/** Largest `skip` of that page. */
export const DATA_DOCUMENTS_MAX_SKIP = 1_000_000;

/** `GET /api/data/collections/:name/documents` query. */
export interface CollectionDocumentsQuery {
  limit?: number;
  skip?: number;
}

/** `GET /api/data/collections/:name/documents?limit&skip` */
export interface CollectionDocumentsPage {
  collection: string;
  access: CollectionAccess;
  total: number;
  limit: number;
  skip: number;
  /** Documents as relaxed Extended JSON-like plain objects (ids and dates as strings); secrets redacted. */
  documents: Array<Record<string, unknown>>;
}
