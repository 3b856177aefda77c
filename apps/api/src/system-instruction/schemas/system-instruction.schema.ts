import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

export const SYSTEM_INSTRUCTION_ID = 'system_instruction';

/** The seed's SystemInstruction: one document in `settings` with `_id: "system_instruction"`. */
@Schema({ collection: 'settings', versionKey: false })
export class SystemInstructionRecord {
  @Prop({ type: String, required: true })
  _id!: string;
  @Prop({ type: String })
  coreInstruction?: string;
  @Prop({ type: String })
  memory?: string;
  @Prop({ type: Boolean })
  memoryEnabled?: boolean;
  @Prop({ type: String })
  dbSchema?: string;
  @Prop({ type: String })
  updatedAt?: string;
}

export const SystemInstructionSchema = SchemaFactory.createForClass(
  SystemInstructionRecord,
);
