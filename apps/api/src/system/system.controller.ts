import { Controller, Get, Inject } from '@nestjs/common';
import {
  ApiCookieAuth,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { APP_CONFIG } from '../config/app-config.provider';
import type { AppConfig } from '../config/app-config';
import { Clock } from '../clock/clock';
import { DatabaseHealthService } from '../database/database-health.service';
import {
  DATABASE_RUNTIME,
  type DatabaseRuntime,
} from '../database/database-runtime';
import { APP_VERSION } from '../version';
import { SystemInfoDto } from './system.dto';

@ApiTags('system')
@ApiCookieAuth()
@Controller('system')
export class SystemController {
  private readonly startedAt: Date;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATABASE_RUNTIME) private readonly runtime: DatabaseRuntime,
    private readonly health: DatabaseHealthService,
    private readonly clock: Clock,
  ) {
    this.startedAt = new Date(clock.now().getTime() - process.uptime() * 1000);
  }

  @Get()
  @ApiOperation({ summary: 'Version, uptime, database and data directory' })
  @ApiOkResponse({ type: SystemInfoDto })
  @ApiUnauthorizedResponse({ description: 'No owner session' })
  async info(): Promise<SystemInfoDto> {
    return {
      version: APP_VERSION,
      uptimeSeconds: Math.floor(
        (this.clock.now().getTime() - this.startedAt.getTime()) / 1000,
      ),
      database: { kind: this.runtime.kind, status: await this.health.check() },
      dataDir: this.config.dataDir,
    };
  }
}
