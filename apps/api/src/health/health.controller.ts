import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/public.decorator';
import { SkipDatabaseCheck } from '../database/database-available.guard';
import { DatabaseHealthService } from '../database/database-health.service';
import { HealthResponseDto } from './health.dto';

@ApiTags('system')
@Controller('health')
export class HealthController {
  constructor(private readonly health: DatabaseHealthService) {}

  @Get()
  @Public()
  @SkipDatabaseCheck()
  @ApiOperation({ summary: 'Liveness and database ping (no session needed)' })
  @ApiOkResponse({ type: HealthResponseDto })
  @ApiServiceUnavailableResponse({
    type: HealthResponseDto,
    description: 'The database does not answer',
  })
  async check(
    @Res({ passthrough: true }) res: Response,
  ): Promise<HealthResponseDto> {
    const db = await this.health.check();
    if (db === 'down') {
      res.status(HttpStatus.SERVICE_UNAVAILABLE);
      return { status: 'error', db };
    }
    return { status: 'ok', db };
  }
}
