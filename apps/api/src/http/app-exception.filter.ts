import {
  ArgumentsHost,
  Catch,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import type { Response } from 'express';
import { DATABASE_UNAVAILABLE_MESSAGE } from '../database/database-available.guard';

const CONNECTIVITY_ERRORS = new Set([
  'MongoServerSelectionError',
  'MongooseServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
]);

/** Lost database connections become 503 with a clear message; everything else keeps Nest's handling. */
@Catch()
export class AppExceptionFilter extends BaseExceptionFilter {
  private readonly logger = new Logger('Http');

  override catch(exception: unknown, host: ArgumentsHost): void {
    if (
      !(exception instanceof HttpException) &&
      isConnectivityError(exception)
    ) {
      this.logger.error(
        `Database unreachable: ${(exception as Error).message}`,
      );
      const res = host.switchToHttp().getResponse<Response>();
      if (!res.headersSent) {
        res.status(HttpStatus.SERVICE_UNAVAILABLE).json({
          statusCode: HttpStatus.SERVICE_UNAVAILABLE,
          message: DATABASE_UNAVAILABLE_MESSAGE,
          error: 'Service Unavailable',
        });
      }
      return;
    }
    super.catch(exception, host);
  }
}

function isConnectivityError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // mongoose with bufferCommands off says this when the connection is gone.
  return (
    CONNECTIVITY_ERRORS.has(error.name) ||
    /before initial connection is complete|Client must be connected/.test(
      error.message,
    )
  );
}
