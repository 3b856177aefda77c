import { ApiProperty } from '@nestjs/swagger';
import {
  DATABASE_KINDS,
  DATABASE_STATUSES,
  type DatabaseKind,
  type DatabaseStatus,
  type SystemDatabaseInfo,
  type SystemInfo,
} from '@metatronos/shared-types';

export class SystemDatabaseDto implements SystemDatabaseInfo {
  @ApiProperty({
    enum: DATABASE_KINDS,
    description: 'embedded FerretDB, or the server named by MONGODB_URI',
  })
  kind!: DatabaseKind;
  @ApiProperty({ enum: DATABASE_STATUSES })
  status!: DatabaseStatus;
}

export class SystemInfoDto implements SystemInfo {
  @ApiProperty({ example: '0.1.0' })
  version!: string;
  @ApiProperty({ description: 'Seconds since this API process started' })
  uptimeSeconds!: number;
  @ApiProperty({ type: SystemDatabaseDto })
  database!: SystemDatabaseDto;
  @ApiProperty({
    description: 'Absolute path of the data directory',
    example: '/home/me/metatronos/data',
  })
  dataDir!: string;
}
