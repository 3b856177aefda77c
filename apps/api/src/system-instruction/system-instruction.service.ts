import { BadRequestException, Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import {
  MEMORY_MAX_LENGTH,
  type SystemInstruction,
  type UpdateSystemInstructionRequest,
} from '@metatronos/shared-types';
import { Clock } from '../clock/clock';
import { AppEventBus } from '../events/app-event-bus';
import { DEFAULT_DB_SCHEMA_DOC } from '../data/personal/default-db-schema';
import { DEFAULT_CORE_INSTRUCTION } from './default-instruction';
import {
  SYSTEM_INSTRUCTION_ID,
  SystemInstructionRecord,
} from './schemas/system-instruction.schema';

/** Who changed the instruction: the owner in the console, or the AI through a tool. */
export type InstructionAuthor = 'owner' | 'ai';

export class MemoryTooLongError extends BadRequestException {
  constructor(length: number) {
    super(
      `Memory is ${length} characters; the limit is ${MEMORY_MAX_LENGTH}. Shorten it and save again.`,
    );
  }
}

/**
 * The seed's system instruction: core instruction, AI memory, the AI's database
 * documentation and the memory (tools) toggle. Read on every turn, so the last
 * read is kept in memory; this service is the only writer.
 */
@Injectable()
export class SystemInstructionService {
  private cached: Promise<SystemInstruction> | null = null;

  constructor(
    @InjectModel(SystemInstructionRecord.name)
    private readonly model: Model<SystemInstructionRecord>,
    private readonly clock: Clock,
    private readonly events: AppEventBus,
  ) {}

  /** A restored backup replaced the instruction document: read it again. */
  @OnEvent('backup.restored')
  forgetAfterRestore(): void {
    this.cached = null;
  }

  getSystemInstruction(): Promise<SystemInstruction> {
    if (!this.cached) {
      this.cached = this.load();
      this.cached.catch(() => (this.cached = null));
    }
    return this.cached;
  }

  /** Shallow-merges, stamps `updatedAt`, persists. A memory over the limit is refused and nothing is written. */
  async updateSystemInstruction(
    partial: UpdateSystemInstructionRequest,
    by: InstructionAuthor = 'owner',
  ): Promise<SystemInstruction> {
    if (
      partial.memory !== undefined &&
      partial.memory.length > MEMORY_MAX_LENGTH
    )
      throw new MemoryTooLongError(partial.memory.length);
    const current = await this.getSystemInstruction();
    const defined = Object.fromEntries(
      Object.entries(partial).filter(([, v]) => v !== undefined),
    ) as UpdateSystemInstructionRequest;
    const next: SystemInstruction = {
      ...current,
      ...defined,
      updatedAt: this.clock.now().toISOString(),
    };
    const { coreInstruction, memory, memoryEnabled, dbSchema, updatedAt } =
      next;
    await this.model.updateOne(
      { _id: SYSTEM_INSTRUCTION_ID },
      { $set: { coreInstruction, memory, memoryEnabled, dbSchema, updatedAt } },
      { upsert: true },
    );
    this.cached = Promise.resolve(next);
    this.events.emit('system-instruction.updated', { updatedAt, by });
    return next;
  }

  updateMemory(
    memory: string,
    by: InstructionAuthor = 'ai',
  ): Promise<SystemInstruction> {
    return this.updateSystemInstruction({ memory }, by);
  }

  updateDbSchema(
    schema: string,
    by: InstructionAuthor = 'ai',
  ): Promise<SystemInstruction> {
    return this.updateSystemInstruction({ dbSchema: schema }, by);
  }

  async getDbSchema(): Promise<string> {
    return (await this.getSystemInstruction()).dbSchema;
  }

  private async load(): Promise<SystemInstruction> {
    const stored = await this.model
      .findById(SYSTEM_INSTRUCTION_ID)
      .lean()
      .exec();
    return {
      coreInstruction: stored?.coreInstruction ?? DEFAULT_CORE_INSTRUCTION,
      memory: stored?.memory ?? '',
      memoryEnabled: stored?.memoryEnabled ?? true,
      // An empty stored schema is backfilled with the documentation of the built-in collections.
      dbSchema: stored?.dbSchema?.trim()
        ? stored.dbSchema
        : DEFAULT_DB_SCHEMA_DOC,
      updatedAt: stored?.updatedAt ?? new Date(0).toISOString(),
    };
  }
}
