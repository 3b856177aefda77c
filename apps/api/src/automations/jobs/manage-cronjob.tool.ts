import { Injectable } from '@nestjs/common';
import {
  CRON_EXPRESSION_MAX_LENGTH,
  CRONJOB_INSTRUCTION_MAX_LENGTH,
  CRONJOB_NAME_MAX_LENGTH,
  DEFAULT_JOB_MAX_ROUNDS,
  DEFAULT_JOB_MAX_TOKENS_PER_RUN,
  JOB_MAX_ROUNDS_MAX,
  JOB_MAX_ROUNDS_MIN,
  MAIL_TRIGGER_DEFAULT_FOLDER,
  MAIL_TRIGGER_FOLDER_MAX_LENGTH,
  type CreateCronJobRequest,
  type CronJobView,
  type MailTriggerInput,
} from '@metatronos/shared-types';
import { AccountCredentials } from '../../accounts/account-records';
import { z } from 'zod';
import {
  AiToolProvider,
  toolError,
  type AiTool,
  type AiToolContext,
} from '../../ai-tools/ai-tool';
import { CronJobsService } from './cron-jobs.service';

const ACTIONS = ['create', 'list', 'update', 'delete', 'toggle'] as const;

/** Which fields each action needs is checked below (job_id) and by the service ("instruction is required"). */
const MANAGE_CRONJOB_ARGS = z.object({
  action: z.enum(ACTIONS),
  job_id: z.string().optional().describe('From list'),
  name: z
    .string()
    .max(CRONJOB_NAME_MAX_LENGTH)
    .optional()
    .describe('Short name'),
  instruction: z
    .string()
    .max(CRONJOB_INSTRUCTION_MAX_LENGTH)
    .optional()
    .describe('What to do at each run, as a message to yourself'),
  cron_expression: z
    .string()
    .max(CRON_EXPRESSION_MAX_LENGTH)
    .optional()
    .describe('e.g. "30 7 * * *"'),
  mail_trigger: z
    .object({
      account: z
        .string()
        .max(320)
        .describe('The email account: its address, name or id'),
      folder: z
        .string()
        .max(MAIL_TRIGGER_FOLDER_MAX_LENGTH)
        .optional()
        .describe(`Default "${MAIL_TRIGGER_DEFAULT_FOLDER}"`),
    })
    .optional()
    .describe(
      'Instead of cron_expression: run once for each new message in this folder',
    ),
  enabled: z.boolean().optional().describe('false pauses the job'),
  mode: z
    .string()
    .max(32)
    .optional()
    .describe('Mode each run starts in (default "default")'),
  act_on_own_tools: z
    .array(z.string().max(64))
    .max(50)
    .optional()
    .describe(
      'Only when the owner asks: tools the job may use without the owner approving each send/delete/move',
    ),
  // A number, or a numeric string as models also send ("30"); the range is the service's check.
  max_rounds: z.coerce
    .number()
    .optional()
    .describe(
      `Tool rounds per run, ${JOB_MAX_ROUNDS_MIN}-${JOB_MAX_ROUNDS_MAX} (default ${DEFAULT_JOB_MAX_ROUNDS}); only when the owner asks`,
    ),
  max_tokens_per_run: z.coerce
    .number()
    .optional()
    .describe(
      `Tokens per run over all model calls (default ${DEFAULT_JOB_MAX_TOKENS_PER_RUN}); only when the owner asks`,
    ),
});
type ManageCronjobArgs = z.output<typeof MANAGE_CRONJOB_ARGS>;

/** The seed's manage_cronjob: create, list, update, delete and toggle scheduled jobs. */
@AiToolProvider()
@Injectable()
export class ManageCronjobTool implements AiTool<typeof MANAGE_CRONJOB_ARGS> {
  readonly name = 'manage_cronjob';
  readonly modes = ['automations'];
  readonly description =
    "Recurring jobs: each runs its instruction as a message to you in its own chat, on a cron schedule in the owner's timezone " +
    '(minute hour day-of-month month day-of-week; "0 8 * * 1-5" = weekdays at 08:00; at most once a minute), ' +
    "or instead once for each new email in a folder (mail_trigger: account, folder; the run is told the new message's headers). " +
    'create needs name, instruction and one of cron_expression or mail_trigger; update needs job_id and any of name, instruction, cron_expression, mail_trigger, enabled; ' +
    'delete and toggle need job_id. Deleting a job deletes its chat.';
  readonly schema = MANAGE_CRONJOB_ARGS;
  readonly promptLine =
    'create, list, change or pause recurring jobs (cron schedules or new mail).';

  effect({ action }: ManageCronjobArgs): 'schedule' | null {
    return action === 'list' ? null : 'schedule';
  }

  summarize(args: ManageCronjobArgs): string {
    const parts = [
      args.job_id && `job ${args.job_id}`,
      args.name && `name “${args.name}”`,
      args.cron_expression && `schedule "${args.cron_expression}"`,
      args.mail_trigger &&
        `on new mail in ${args.mail_trigger.account} ${args.mail_trigger.folder ?? MAIL_TRIGGER_DEFAULT_FOLDER}`,
      args.enabled !== undefined && (args.enabled ? 'enabled' : 'paused'),
      args.instruction && `instruction “${args.instruction}”`,
      args.act_on_own_tools &&
        `may act on its own with: ${args.act_on_own_tools.join(', ') || 'nothing'}`,
      args.max_rounds !== undefined &&
        `at most ${args.max_rounds} tool rounds per run`,
      args.max_tokens_per_run !== undefined &&
        `at most ${args.max_tokens_per_run} tokens per run`,
    ].filter(Boolean);
    return `${args.action[0].toUpperCase()}${args.action.slice(1)} a scheduled job: ${parts.join(', ') || 'no details'}`;
  }

  constructor(
    private readonly jobs: CronJobsService,
    private readonly credentials: AccountCredentials,
  ) {}

  async execute(
    args: ManageCronjobArgs,
    context?: AiToolContext,
  ): Promise<string> {
    const { action } = args;
    const jobId = args.job_id?.trim();
    const noId = () =>
      toolError(
        `${action} needs job_id (call manage_cronjob with action "list" to find it)`,
      );
    let mailTrigger: MailTriggerInput | undefined;
    if (args.mail_trigger) {
      const found = await this.emailAccount(args.mail_trigger.account);
      if (typeof found === 'string') return toolError(found);
      mailTrigger = {
        accountId: found.id,
        folder: args.mail_trigger.folder ?? MAIL_TRIGGER_DEFAULT_FOLDER,
      };
    }
    const fields = {
      name: args.name,
      instruction: args.instruction,
      cronExpression: args.cron_expression,
      mailTrigger,
      enabled: args.enabled,
      mode: args.mode,
      actOnOwnTools: args.act_on_own_tools,
      // Checked (whole numbers in range) by the service, as for REST.
      maxRounds: args.max_rounds,
      maxTokensPerRun: args.max_tokens_per_run,
    };
    // What a run may spend is the owner's to raise: never a job's, a Pulse's or a contact's turn.
    if (
      (args.max_rounds !== undefined ||
        args.max_tokens_per_run !== undefined) &&
      context?.source !== 'chat' &&
      context?.source !== 'voice'
    )
      return toolError(
        'max_rounds and max_tokens_per_run are set by the owner only: ask the owner in a chat',
      );
    // The owner's consent, given in the owner's own chat: never by a job, a Pulse or a contact's turn.
    if (args.act_on_own_tools !== undefined && context?.source !== 'chat')
      return toolError(
        'act_on_own_tools is set by the owner only: ask the owner in a chat',
      );
    switch (action) {
      case 'create':
        return JSON.stringify(
          toolJob(
            // A missing field is refused by the service with its own text ("instruction is required").
            await this.jobs.create(
              fields as CreateCronJobRequest,
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
      case 'update':
        if (!jobId) return noId();
        return JSON.stringify(
          toolJob(await this.jobs.update(jobId, fields, 'ai')),
        );
      case 'delete':
        if (!jobId) return noId();
        await this.jobs.remove(jobId, 'ai');
        return JSON.stringify({ success: true });
      case 'toggle':
        if (!jobId) return noId();
        return JSON.stringify(toolJob(await this.jobs.toggle(jobId, 'ai')));
    }
  }

  /** The id of the email account named by address, name or id; else the tool error text. */
  private async emailAccount(named: string): Promise<{ id: string } | string> {
    const wanted = named.trim().toLowerCase();
    const accounts = (await this.credentials.list('email')).flatMap((a) =>
      a.kind === 'email' ? [a] : [],
    );
    const match =
      accounts.find((a) => a.id === named.trim()) ??
      accounts.find((a) => a.address.toLowerCase() === wanted) ??
      accounts.find((a) => a.name.toLowerCase() === wanted);
    if (match) return { id: match.id };
    return accounts.length
      ? `No email account '${named.slice(0, 80)}'. The email accounts are: ${accounts.map((a) => a.address).join(', ')}.`
      : 'No email account is connected: the owner adds one on the Accounts page.';
  }
}

/** A job as the model sees it: the tool's own parameter names. */
function mailTriggerOf(job: CronJobView) {
  return job.mailTrigger
    ? {
        account: job.mailTrigger.address ?? job.mailTrigger.accountId,
        folder: job.mailTrigger.folder,
      }
    : null;
}

function toolJob(job: CronJobView) {
  return {
    job_id: job.id,
    name: job.name,
    instruction: job.instruction,
    cron_expression: job.cronExpression,
    mail_trigger: mailTriggerOf(job),
    mail_watch: job.mailWatch,
    schedule: job.description,
    timezone: job.timezone,
    enabled: job.enabled,
    mode: job.mode,
    act_on_own_tools: job.actOnOwnTools ?? [],
    max_rounds: job.maxRounds,
    max_tokens_per_run: job.maxTokensPerRun,
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
