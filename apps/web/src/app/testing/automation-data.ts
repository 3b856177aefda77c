import type {
  CronJobView,
  CronRunView,
  PulseView,
} from '@metatronos/shared-types';

/** Test data for the automations specs. Times are in Europe/Paris (UTC+1 in winter). */
export const TZ = 'Europe/Paris';

export function cronJob(
  id: string,
  name: string,
  extra: Partial<CronJobView> = {},
): CronJobView {
  return {
    id,
    name,
    instruction: `Do ${name}`,
    cronExpression: '0 8 * * 1-5',
    mailTrigger: null,
    mailWatch: null,
    enabled: true,
    mode: 'default',
    maxRounds: 20,
    maxTokensPerRun: 200_000,
    chatId: `chat-${id}`,
    description: 'At 08:00, Monday through Friday',
    nextRuns: [
      '2026-11-23T07:00:00.000Z',
      '2026-11-24T07:00:00.000Z',
      '2026-11-25T07:00:00.000Z',
    ],
    timezone: TZ,
    scheduleError: null,
    createdBy: 'owner',
    lastRun: null,
    consecutiveFailures: 0,
    failing: false,
    running: false,
    createdAt: '2026-11-01T10:00:00.000Z',
    updatedAt: '2026-11-01T10:00:00.000Z',
    ...extra,
  };
}

export function cronRun(
  id: string,
  extra: Partial<CronRunView> = {},
): CronRunView {
  return {
    id,
    kind: 'cron',
    jobId: 'j1',
    trigger: 'schedule',
    outcome: 'success',
    dueAt: '2026-11-20T07:00:00.000Z',
    startedAt: '2026-11-20T07:00:01.000Z',
    finishedAt: '2026-11-20T07:00:13.000Z',
    durationMs: 12_000,
    reason: null,
    error: null,
    chatId: 'chat-j1',
    messageId: 'm1',
    usage: null,
    ...extra,
  };
}

export function pulseView(extra: Partial<PulseView> = {}): PulseView {
  return {
    enabled: true,
    activeDays: [1, 2, 3, 4, 5],
    pulsesPerDay: 12,
    quietHours: [{ start: '22:00', end: '07:00' }],
    notes: 'Check the garden.',
    mode: 'automations',
    remaining: 5,
    nextPulseAt: '2026-11-23T09:00:00.000Z',
    intervalMinutes: 120,
    pulsesToday: 3,
    lastPulseAt: '2026-11-23T07:00:00.000Z',
    chatId: 'pulse-chat',
    running: false,
    timezone: TZ,
    notesUpdatedAt: '2026-11-23T07:00:00.000Z',
    ...extra,
  };
}
