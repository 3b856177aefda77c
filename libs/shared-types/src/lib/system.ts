export const DATABASE_KINDS = ['embedded', 'external'] as const;
export type DatabaseKind = (typeof DATABASE_KINDS)[number];
export const DATABASE_STATUSES = ['up', 'down'] as const;
export type DatabaseStatus = (typeof DATABASE_STATUSES)[number];
export const HEALTH_STATUSES = ['ok', 'error'] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

/** `GET /api/health` */
export interface HealthResponse {
  status: HealthStatus;
  db: DatabaseStatus;
}

export interface SystemDatabaseInfo {
  kind: DatabaseKind;
  status: DatabaseStatus;
}

/** `GET /api/system` */
export interface SystemInfo {
  version: string;
  uptimeSeconds: number;
  database: SystemDatabaseInfo;
  dataDir: string;
}
