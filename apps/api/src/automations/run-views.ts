import type { CronRunView } from '@metatronos/shared-types';
import type { AutomationRunRecord } from './schemas/automation-run.schema';

export function toRunView(run: AutomationRunRecord): CronRunView {
  const finishedAt = run.finishedAt ?? null;
  return {
    id: run._id.toHexString(),
    kind: run.kind,
    jobId: run.jobId?.toHexString() ?? null,
    trigger: run.trigger,
    outcome: run.outcome,
    dueAt: run.dueAt?.toISOString() ?? null,
    startedAt: run.startedAt.toISOString(),
    finishedAt: finishedAt?.toISOString() ?? null,
    durationMs: finishedAt
      ? finishedAt.getTime() - run.startedAt.getTime()
      : null,
    reason: run.reason ?? null,
    error: run.error ?? null,
    chatId: run.chatId?.toHexString() ?? null,
    messageId: run.messageId?.toHexString() ?? null,
    usage: run.usage ?? null,
  };
}
