/** Every REST and SSE route lives under /api; everything else is the console. */
export const API_PREFIX = 'api';
