import { HttpErrorResponse } from '@angular/common/http';
import { describeApiError } from '@metatronos/shared-types';

/** What kind of trouble the console has talking to the server. */
export type ServerProblemKind = 'unreachable' | 'database' | 'server';

export interface ServerProblem {
  kind: ServerProblemKind;
  /** HTTP status, 0 when the request never got an answer. */
  status: number;
  title: string;
  message: string;
}

export const UNREACHABLE_TITLE = "Can't reach the MetatronOS server";
export const DATABASE_TITLE = 'The database is unavailable';
export const SERVER_ERROR_TITLE = 'The server ran into an error';

const UNREACHABLE_STATUSES = new Set([0, 502, 504]);

/** True for the statuses that mean "the server (or its database) is not there": 0, 502, 503, 504. */
export function isConnectivityStatus(status: number): boolean {
  return UNREACHABLE_STATUSES.has(status) || status === 503;
}

/**
 * A 502 or 504 the API itself answered with its JSON error (`{ statusCode, message }`): a mail server or other
 * upstream it talked to failed, while the API is up. A proxy in front of a stopped server sends no such body.
 */
function upstreamFailure(error: HttpErrorResponse): boolean {
  const body: unknown = error.error;
  return (
    (error.status === 502 || error.status === 504) &&
    !!body &&
    typeof body === 'object' &&
    'statusCode' in body &&
    body.statusCode === error.status &&
    'message' in body &&
    typeof body.message === 'string'
  );
}

/**
 * Classifies a failed request as a connectivity problem (network, gateway, database down),
 * or returns null for ordinary API errors (400, 401, 404, ...) that the caller shows itself.
 */
export function connectivityProblemFrom(error: unknown): ServerProblem | null {
  if (
    !(error instanceof HttpErrorResponse) ||
    !isConnectivityStatus(error.status) ||
    upstreamFailure(error)
  )
    return null;
  if (error.status === 503) {
    const said = describeApiError(
      error.error,
      'The server answered 503 Service Unavailable.',
    );
    // The API's message opens with the same sentence as our title; show only what it adds.
    const rest = said.startsWith(`${DATABASE_TITLE}.`)
      ? said.slice(DATABASE_TITLE.length + 1).trim()
      : said;
    return {
      kind: 'database',
      status: 503,
      title: DATABASE_TITLE,
      message: rest || said,
    };
  }
  return {
    kind: 'unreachable',
    status: error.status,
    title: UNREACHABLE_TITLE,
    message:
      error.status === 0
        ? 'Check that MetatronOS is running and that this device can reach it, then try again.'
        : `A proxy in front of MetatronOS answered ${error.status}: the server may be stopped or restarting.`,
  };
}

/** Like {@link connectivityProblemFrom}, but any other failure becomes a generic server error. */
export function serverProblemFrom(error: unknown): ServerProblem {
  const problem = connectivityProblemFrom(error);
  if (problem) return problem;
  const status = error instanceof HttpErrorResponse ? error.status : 0;
  const body: unknown = error instanceof HttpErrorResponse ? error.error : null;
  return {
    kind: 'server',
    status,
    title: SERVER_ERROR_TITLE,
    message: describeApiError(
      body,
      status
        ? `The server answered ${status}.`
        : 'Something unexpected went wrong.',
    ),
  };
}

/** One readable sentence for an inline form error. */
export function inlineErrorMessage(error: unknown, fallback: string): string {
  const problem = connectivityProblemFrom(error);
  if (problem?.kind === 'database') {
    return problem.message.startsWith(problem.title)
      ? problem.message
      : `${problem.title}. ${problem.message}`;
  }
  if (problem) return `${problem.title}.`;
  return describeApiError(
    error instanceof HttpErrorResponse ? error.error : null,
    fallback,
  );
}

/**
 * The error panel a page shows when loading its data failed, titled for the page ("Couldn't load your chats"),
 * or null for connectivity problems: the app-wide banner explains those, and pages reload once it recovers.
 */
export function pageProblem(
  error: unknown,
  title: string,
): ServerProblem | null {
  if (connectivityProblemFrom(error)) return null;
  return { ...serverProblemFrom(error), title };
}

/** The HTTP status of a failed request, 0 when there was no answer (or it was not an HTTP error). */
export function errorStatus(error: unknown): number {
  return error instanceof HttpErrorResponse ? error.status : 0;
}
