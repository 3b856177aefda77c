import { ApiProperty } from '@nestjs/swagger';
import {
  DATABASE_STATUSES,
  HEALTH_STATUSES,
  type DatabaseStatus,
  type HealthResponse,
  type HealthStatus,
} from '@metatronos/shared-types';

export class HealthResponseDto implements HealthResponse {
  @ApiProperty({ enum: HEALTH_STATUSES })
  status!: HealthStatus;
  @ApiProperty({ enum: DATABASE_STATUSES })
  db!: DatabaseStatus;
}
