import { ApiProperty } from '@nestjs/swagger';
import type { DatabaseStatus, HealthResponse } from '@metatronos/shared-types';

export class HealthResponseDto implements HealthResponse {
  @ApiProperty({ enum: ['ok', 'error'] })
  status!: 'ok' | 'error';
  @ApiProperty({ enum: ['up', 'down'] })
  db!: DatabaseStatus;
}
