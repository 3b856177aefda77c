import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';

export const APP_SETTINGS_ID = 'app_settings';

@Schema({ _id: false, versionKey: false })
export class StoredEndpoint {
  @Prop({ required: true })
  name!: string;
  @Prop({ required: true })
  baseUrl!: string;
  @Prop({ type: String, default: null })
  apiKey!: string | null;
}

/** A `url_fetch` auth profile; the value is stored as `secret` so it is masked by name wherever the AI reads `settings`. */
@Schema({ _id: false, versionKey: false })
export class StoredAuthProfileRecord {
  @Prop({ required: true })
  id!: string;
  @Prop({ required: true })
  urlPrefix!: string;
  @Prop({ required: true })
  header!: string;
  @Prop({ required: true })
  secret!: string;
}

/**
 * The owner's settings: one document in `settings` (which also holds the system
 * instruction). The AI may read `settings`; the sandbox masks every key field.
 */
@Schema({ collection: 'settings', versionKey: false })
export class AppSettingsRecord {
  @Prop({ type: String, required: true })
  _id!: string;
  @Prop({ type: String, default: null })
  geminiApiKey!: string | null;
  @Prop({ type: String, default: null })
  openaiApiKey!: string | null;
  @Prop({ type: [SchemaFactory.createForClass(StoredEndpoint)], default: [] })
  openaiCompatible!: StoredEndpoint[];
  @Prop({ type: String, default: null })
  primaryModel!: string | null;
  @Prop({ type: String, default: null })
  imageModel!: string | null;
  @Prop({ type: String, default: null })
  realtimeModel!: string | null;
  @Prop({ type: String, default: null })
  realtimeVoice!: string | null;
  /** The owner's own Telegram chat with the bot: spend notices go there. */
  @Prop({ type: String, default: null })
  telegramOwnerChatId!: string | null;
  @Prop({ type: String, default: null })
  braveApiKey!: string | null;
  @Prop({ type: String, default: null })
  telegramBotToken!: string | null;
  @Prop({ type: String, default: null })
  telegramApiRoot!: string | null;
  @Prop({ type: String, default: null })
  timezone!: string | null;
  @Prop({ type: [String], default: [] })
  urlFetchAllowHosts!: string[];
  @Prop({
    type: [SchemaFactory.createForClass(StoredAuthProfileRecord)],
    default: [],
  })
  authProfiles!: StoredAuthProfileRecord[];
  @Prop({ type: [String], default: [] })
  disabledTools!: string[];
  /** Absent in documents from before the setting: read as off there (new installs write true). */
  @Prop({ type: Boolean, default: undefined })
  alwaysConfirm?: boolean;
  /** The owner's model prices (USD per MTok). */
  @Prop({ type: [Object], default: undefined })
  modelPrices?: unknown[];
  /** Spend caps; absent: the default caps (null inside: no cap, the owner's choice). */
  @Prop({ type: Object, default: undefined })
  budget?: Record<string, unknown>;
  /** Output limits per source. */
  @Prop({ type: Object, default: undefined })
  outputLimits?: Record<string, unknown>;
  @Prop({ type: Date, default: null })
  updatedAt!: Date | null;
}

export const AppSettingsSchema =
  SchemaFactory.createForClass(AppSettingsRecord);
