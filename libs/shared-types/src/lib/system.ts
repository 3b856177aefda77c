export type DatabaseKind = 'embedded' | 'external';
export type DatabaseStatus = 'up' | 'down';

/** `GET /api/health` */
export interface HealthResponse {
  status: 'ok' | 'error';
  db: DatabaseStatus;
}

/** `GET /api/system` */
export interface SystemInfo {
  version: string;
  uptimeSeconds: number;
  database: {
    kind: DatabaseKind;
    status: DatabaseStatus;
  };
  dataDir: string;
}
