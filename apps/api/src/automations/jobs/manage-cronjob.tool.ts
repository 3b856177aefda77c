import { Injectable } from '@nestjs/common';
import {
  CRON_EXPRESSION_MAX_LENGTH,
  CRONJOB_INSTRUCTION_MAX_LENGTH,
  CRONJOB_NAME_MAX_LENGTH,
  type CronJobView,
} from '@metatronos/shared-types';
import {
  AiToolProvider,
  toolError,
  type AiTool,
  type AiToolContext,
} from '../../ai-tools/ai-tool';
import { CronJobsService } from './cron-jobs.service';

const ACTIONS = ['create', 'list', 'update', 'delete', 'toggle'] as const;
type Action = (typeof ACTIONS)[number];

/** The seed's manage_cronjob: create, list, update, delete and toggle scheduled jobs. */
@AiToolProvider()
@Injectable()
export class ManageCronjobTool implements AiTool {
  readonly definition = {
    name: 'manage_cronjob',
    description:
      'Create, list, update, delete or toggle recurring scheduled jobs. Each job runs its instruction as a message to you in its own chat ' +
      'on a cron schedule read in the owner\'s timezone (five fields: minute hour day-of-month month day-of-week; e.g. "0 8 * * 1-5" = weekdays at 08:00). ' +
      'At most once a minute. create needs name, instruction and cron_expression; update needs job_id and any of name, instruction, cron_expression, enabled; ' +
      'delete and toggle need job_id (from list). Deleting a job deletes its chat.',
    parameters: {
      type: 'object' as const,
      properties: {
        action: {
          type: 'string',
          enum: [...ACTIONS],
          description: 'What to do',
        },
        job_id: {
          type: 'string',
          description: 'The job id (update, delete, toggle)',
        },
        name: {
          type: 'string',
          maxLength: CRONJOB_NAME_MAX_LENGTH,
          description: 'Short name of the job',
        },
        instruction: {
          type: 'string',
          maxLength: CRONJOB_INSTRUCTION_MAX_LENGTH,
          description:
            'What you should do at each run, written as a message to yourself',
        },
        cron_expression: {
          type: 'string',
          maxLength: CRON_EXPRESSION_MAX_LENGTH,
          description: 'Cron schedule, e.g. "30 7 * * *"',
        },
        enabled: {
          type: 'boolean',
          description: 'false pauses the job (update)',
        },
      },
      required: ['action'],
    },
  };
  readonly promptLine =
    "create, list, update, delete or pause recurring jobs; each runs an instruction on a cron schedule (owner's timezone) in its own chat.";

  constructor(private readonly jobs: CronJobsService) {}

  async execute(
    args: Record<string, unknown>,
    context?: AiToolContext,
  ): Promise<string> {
    const action = args['action'] as Action;
    const jobId = args['job_id'] as string | undefined;
    const needsId = (): string | null =>
      jobId?.trim()
        ? null
        : `${action} needs job_id (call manage_cronjob with action "list" to find it)`;
    switch (action) {
      case 'create':
        return JSON.stringify(
          toolJob(
            await this.jobs.create(
              {
                name: args['name'] as string,
                instruction: args['instruction'] as string,
                cronExpression: args['cron_expression'] as string,
                enabled: args['enabled'] as boolean | undefined,
              },
              'ai',
              context && {
                source: context.source,
                turnId: context.messageId ?? context.chatId,
              },
            ),
          ),
        );
      case 'list':
        return JSON.stringify({ jobs: (await this.jobs.list()).map(toolJob) });
      case 'update': {
        const problem = needsId();
        if (problem) return toolError(problem);
        const view = await this.jobs.update(
          (jobId as string).trim(),
          {
            name: args['name'] as string | undefined,
            instruction: args['instruction'] as string | undefined,
            cronExpression: args['cron_expression'] as string | undefined,
            enabled: args['enabled'] as boolean | undefined,
          },
          'ai',
        );
        return JSON.stringify(toolJob(view));
      }
      case 'delete': {
        const problem = needsId();
        if (problem) return toolError(problem);
        await this.jobs.remove((jobId as string).trim(), 'ai');
        return JSON.stringify({ success: true });
      }
      case 'toggle': {
        const problem = needsId();
        if (problem) return toolError(problem);
        return JSON.stringify(
          toolJob(await this.jobs.toggle((jobId as string).trim(), 'ai')),
        );
      }
      default:
        return toolError(
          `Unknown action "${String(action)}": use one of ${ACTIONS.join(', ')}`,
        );
    }
  }
}

/** A job as the model sees it: the tool's own parameter names. */
function toolJob(job: CronJobView) {
  return {
    job_id: job.id,
    name: job.name,
    instruction: job.instruction,
    cron_expression: job.cronExpression,
    schedule: job.description,
    timezone: job.timezone,
    enabled: job.enabled,
    chat_id: job.chatId,
    next_runs: job.nextRuns,
    schedule_error: job.scheduleError,
    created_by: job.createdBy,
    last_run: job.lastRun
      ? {
          outcome: job.lastRun.outcome,
          started_at: job.lastRun.startedAt,
          error: job.lastRun.error,
        }
      : null,
    consecutive_failures: job.consecutiveFailures,
  };
}
