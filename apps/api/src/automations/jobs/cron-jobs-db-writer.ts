import { Injectable } from '@nestjs/common';
import type {
  CreateCronJobRequest,
  MailTriggerInput,
} from '@metatronos/shared-types';
import type {
  MongoDocument,
  MongoOperation,
} from '../../mongo-sandbox/mongo-operation';
import {
  SandboxCollectionWriter,
  type SandboxCaller,
  type SandboxResult,
} from '../../mongo-sandbox/sandbox-collection-owners';
import { isPlainObject } from '../../mongo-sandbox/validate-mongo-operation';
import { CronJobsService, type JobTurn } from './cron-jobs.service';

/** What db_query may write in a `cronjobs` document (the manage_cronjob fields; both spellings of the expression). */
const WRITABLE_FIELDS = [
  'name',
  'instruction',
  'cronExpression',
  'cron_expression',
  'mailTrigger',
  'enabled',
] as const;
type WritableField = (typeof WRITABLE_FIELDS)[number];
/** Fields the app keeps: who made the job, its chat, its run state (the mail cursor too) and its times. */
const OWNED_FIELDS = new Set([
  '_id',
  'chatId',
  'lastRun',
  'lastDueAt',
  'mailCursor',
  'consecutiveFailures',
  'createdBy',
  'createdAt',
  'updatedAt',
]);

/**
 * The AI's db_query writes to `cronjobs`, done by CronJobsService instead of
 * raw: the same checks and limits as manage_cronjob, a new chat for each job
 * inserted, the fields the app owns untouchable, and deletes that remove only
 * the job's own chat. Answers in db_query's shapes.
 */
@Injectable()
export class CronJobsDbWriter extends SandboxCollectionWriter {
  readonly collection = 'cronjobs';

  constructor(private readonly jobs: CronJobsService) {
    super();
  }

  async write(
    op: MongoOperation,
    caller: SandboxCaller | undefined,
  ): Promise<SandboxResult> {
    const turn: JobTurn | undefined = caller && {
      source: caller.source,
      turnId: caller.messageId ?? caller.chatId,
    };
    switch (op.operation) {
      case 'insertOne': {
        const [view] = await this.jobs.createMany(
          [jobRequest(op.data as MongoDocument, 'data')],
          'ai',
          turn,
        );
        return { insertedId: view.id };
      }
      case 'insertMany': {
        const docs = op.data as MongoDocument[];
        const views = await this.jobs.createMany(
          docs.map((doc, i) => jobRequest(doc, `data[${i}]`)),
          'ai',
          turn,
        );
        return { insertedCount: views.length };
      }
      case 'updateOne':
      case 'updateMany': {
        if (op.options?.upsert)
          throw new Error(
            "upsert is not available on 'cronjobs': create a job with insertOne (or manage_cronjob) instead.",
          );
        const change = jobChange(op.update);
        const ids = await this.jobs.idsMatching(
          op.filter ?? {},
          op.operation === 'updateOne' ? 1 : 0,
        );
        let modifiedCount = 0;
        for (const id of ids) {
          const before = await this.jobs.get(id);
          const after = await this.jobs.update(id, change, 'ai');
          if (
            before.name !== after.name ||
            before.instruction !== after.instruction ||
            before.cronExpression !== after.cronExpression ||
            JSON.stringify(before.mailTrigger) !==
              JSON.stringify(after.mailTrigger) ||
            before.enabled !== after.enabled
          )
            modifiedCount++;
        }
        return { matchedCount: ids.length, modifiedCount };
      }
      case 'deleteOne':
      case 'deleteMany': {
        const ids = await this.jobs.idsMatching(
          op.filter ?? {},
          op.operation === 'deleteOne' ? 1 : 0,
        );
        for (const id of ids) await this.jobs.remove(id, 'ai');
        return { deletedCount: ids.length };
      }
      default:
        throw new Error(
          `${op.operation} cannot write 'cronjobs' through the sandbox.`,
        );
    }
  }
}

/** A document to insert, as a manage_cronjob create: only the writable fields. */
function jobRequest(doc: MongoDocument, where: string): CreateCronJobRequest {
  const fields = writableFields(doc, where);
  return {
    name: fields.name as string,
    instruction: fields.instruction as string,
    cronExpression: (fields.cronExpression ?? fields.cron_expression) as
      | string
      | undefined,
    // Checked by checkCronJobInput (shape) and the service (the account).
    ...(fields.mailTrigger !== undefined && {
      mailTrigger: fields.mailTrigger as MailTriggerInput | null,
    }),
    ...(fields.enabled !== undefined && {
      enabled: fields.enabled as boolean,
    }),
  };
}

/** An update of `cronjobs`: `{ $set: { …writable fields } }` only. */
function jobChange(
  update: MongoOperation['update'],
): Partial<CreateCronJobRequest> {
  if (!isPlainObject(update))
    throw new Error(
      'Update pipelines are not available on \'cronjobs\': use { "$set": { … } } with name, instruction, cronExpression, mailTrigger or enabled.',
    );
  const operators = Object.keys(update);
  const other = operators.find((key) => key !== '$set');
  if (other !== undefined)
    throw new Error(
      `'${other}' is not available on 'cronjobs': only $set of name, instruction, cronExpression, mailTrigger or enabled is.`,
    );
  const set = update['$set'];
  if (!isPlainObject(set) || Object.keys(set).length === 0)
    throw new Error(
      "'update.$set' must name at least one of name, instruction, cronExpression, mailTrigger, enabled.",
    );
  const fields = writableFields(set, 'update.$set');
  return {
    ...(fields.name !== undefined && { name: fields.name as string }),
    ...(fields.instruction !== undefined && {
      instruction: fields.instruction as string,
    }),
    ...((fields.cronExpression ?? fields.cron_expression) !== undefined && {
      cronExpression: (fields.cronExpression ??
        fields.cron_expression) as string,
    }),
    ...(fields.mailTrigger !== undefined && {
      mailTrigger: fields.mailTrigger as MailTriggerInput | null,
    }),
    ...(fields.enabled !== undefined && { enabled: fields.enabled as boolean }),
  };
}

/** The document's fields, refusing the app's own and unknown ones (the values are checked by checkCronJobInput). */
function writableFields(
  doc: MongoDocument,
  where: string,
): Partial<Record<WritableField, unknown>> {
  const out: Partial<Record<WritableField, unknown>> = {};
  for (const [key, value] of Object.entries(doc)) {
    if (OWNED_FIELDS.has(key))
      throw new Error(
        `'${where}.${key}' is set by the app and cannot be written: a job gets its own id, chat, run state and times.`,
      );
    if (!(WRITABLE_FIELDS as readonly string[]).includes(key))
      throw new Error(
        `'${where}.${key.slice(0, 80)}' is not a field of a scheduled job. Write only ${WRITABLE_FIELDS.filter((f) => f !== 'cron_expression').join(', ')}.`,
      );
    out[key as WritableField] = value;
  }
  if (out.cronExpression !== undefined && out.cron_expression !== undefined)
    throw new Error(
      `'${where}' gives both cronExpression and cron_expression: give one.`,
    );
  return out;
}
