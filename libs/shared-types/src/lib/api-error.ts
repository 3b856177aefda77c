/** The error body Nest produces for every HTTP error. */
export interface ApiError {
  statusCode: number;
  message: string | string[];
  error?: string;
}

/** Turns an error body into one readable sentence for the console. */
export function describeApiError(body: unknown, fallback: string): string {
  if (body && typeof body === 'object' && 'message' in body) {
    const message = (body as ApiError).message;
    if (Array.isArray(message)) return message.join('; ');
    if (typeof message === 'string' && message.trim()) return message;
  }
  return fallback;
}
