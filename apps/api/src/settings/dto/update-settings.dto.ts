import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsBoolean,
  IsArray,
  IsIn,
  IsObject,
  IsString,
  IsUrl,
  Matches,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import {
  BUDGET_MAX_USD,
  MODEL_PROVIDERS,
  type BudgetCaps,
  type ModelPrice,
  type OutputLimits,
  type AppSettingsView,
  type AuthProfile,
  type AuthProfileInput,
  type ConnectionTestRequest,
  type ModelListResponse,
  type ModelOption,
  type ModelProvider,
  type OpenAiCompatibleEndpoint,
  type OpenAiCompatibleEndpointInput,
  type UpdateAppSettingsRequest,
} from '@metatronos/shared-types';
import { OptionalField, OptionalOrNull } from '../../http/optional-field';

const SECRET_HELP =
  'A new value sets it; null or "" clears it; the masked value from GET leaves it unchanged.';

export class EndpointDto implements OpenAiCompatibleEndpointInput {
  @ApiProperty({
    example: 'ollama',
    description:
      'Letters, digits, - and _; the prefix of model ids `<name>/<model>`',
  })
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,40}$/, {
    message: 'name must be 1-40 letters, digits, - or _',
  })
  name!: string;

  @ApiProperty({ example: 'http://127.0.0.1:11434/v1' })
  @IsString()
  @IsUrl(
    {
      protocols: ['http', 'https'],
      require_protocol: true,
      require_tld: false,
      allow_underscores: true,
    },
    { message: 'baseUrl must be an http(s) URL' },
  )
  @MaxLength(500)
  baseUrl!: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: SECRET_HELP,
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(500)
  apiKey?: string | null;
}

export class AuthProfileDto implements AuthProfileInput {
  @ApiProperty({
    example: 'github',
    description: 'What the model passes as auth_profile',
  })
  @IsString()
  @Matches(/^[A-Za-z0-9_-]{1,40}$/, {
    message: 'id must be 1-40 letters, digits, - or _',
  })
  id!: string;

  @ApiProperty({
    example: 'https://api.github.com/',
    description:
      'The header goes only to URLs under this prefix (same origin, path starting with it)',
  })
  @IsString()
  @MaxLength(500)
  urlPrefix!: string;

  @ApiProperty({ example: 'Authorization' })
  @IsString()
  @MaxLength(100)
  header!: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description:
      'The header value. Required for a new profile; omitted or the masked value from GET keeps the stored one (same id and urlPrefix).',
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(4000)
  value?: string | null;
}

export class UpdateSettingsDto implements UpdateAppSettingsRequest {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: SECRET_HELP,
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(500)
  geminiApiKey?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: SECRET_HELP,
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(500)
  openaiApiKey?: string | null;

  @ApiPropertyOptional({
    type: [EndpointDto],
    description:
      'Replaces the whole list. A masked apiKey keeps the key stored under the same name.',
  })
  @OptionalField()
  @IsArray()
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => EndpointDto)
  openaiCompatible?: EndpointDto[];

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'gemini-2.5-flash',
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(240)
  primaryModel?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'gemini-2.5-flash-image',
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(240)
  imageModel?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'gpt-realtime',
    description: 'The speaking model of voice calls; null: gpt-realtime.',
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(240)
  realtimeModel?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'marin',
    description: 'The voice of voice calls; null: marin.',
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(40)
  realtimeVoice?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: '123456789',
    description:
      "The owner's own Telegram chat with the bot (its chat id; a number is taken too): the 80%/100% spend notices go there. null or empty: none.",
  })
  @OptionalOrNull()
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'number' && Number.isSafeInteger(value)
      ? String(value)
      : value,
  )
  @IsString()
  @Matches(/^(|\s*-?\d{1,20}\s*)$/, {
    message:
      'telegramOwnerChatId must be a Telegram chat id: digits, e.g. 123456789',
  })
  telegramOwnerChatId?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: SECRET_HELP,
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(500)
  braveApiKey?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: `Telegram bot token from BotFather. ${SECRET_HELP}`,
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(200)
  telegramBotToken?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'https://api.telegram.org',
    description:
      'The Bot API server (a self-hosted one may be set); null resets it. Changing it needs the token again.',
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(500)
  telegramApiRoot?: string | null;

  @ApiPropertyOptional({
    example: 'Europe/Paris',
    description: 'IANA time zone',
  })
  @OptionalField()
  @IsString()
  @MaxLength(64)
  timezone?: string;

  @ApiPropertyOptional({
    type: [String],
    example: ['nas.local:8123'],
    description:
      'Replaces the list: exact host:port entries url_fetch may reach although private (never metadata, multicast or unspecified addresses)',
  })
  @OptionalField()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(260, { each: true })
  urlFetchAllowHosts?: string[];

  @ApiPropertyOptional({
    type: [AuthProfileDto],
    description: 'Replaces the list of url_fetch auth profiles',
  })
  @OptionalField()
  @IsArray()
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => AuthProfileDto)
  authProfiles?: AuthProfileDto[];

  @ApiPropertyOptional({
    type: [String],
    example: ['generate_image'],
    description:
      'Tools switched off: never offered to the model nor run. Names of registered tools, except the meta tools (set_mode, select_account). Replaces the list.',
  })
  @OptionalField()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  disabledTools?: string[];

  @ApiPropertyOptional({
    description:
      'Attended turns too wait for the owner before they send or delete (on for new installs).',
  })
  @OptionalField()
  @IsBoolean()
  alwaysConfirm?: boolean;
  // The three spend fields are checked field by field by the settings service (clear messages, numbers sent as strings accepted).
  @ApiPropertyOptional({
    type: () => [ModelPriceDto],
    description: `Replaces the owner's price list (USD per million tokens, each from 0 to ${BUDGET_MAX_USD}); an entry wins over the shipped price of the same model and matches its dated versions.`,
  })
  @OptionalField()
  @IsArray()
  modelPrices?: ModelPriceDto[];

  @ApiPropertyOptional({
    type: () => BudgetCapsDto,
    description: `Caps to change (omitted ones kept); null: no cap. Each from 0 to ${BUDGET_MAX_USD} USD.`,
  })
  @OptionalField()
  @IsObject()
  budget?: Partial<BudgetCapsDto>;

  @ApiPropertyOptional({
    type: () => OutputLimitsDto,
    description:
      'The output limit (max_tokens / maxOutputTokens) of every model call, per source (16 to 200,000); omitted sources kept.',
  })
  @OptionalField()
  @IsObject()
  outputLimits?: Partial<OutputLimitsDto>;
}

export class ModelPriceDto implements ModelPrice {
  @ApiProperty({ example: 'gpt-4.1-mini' })
  model!: string;
  @ApiProperty({ example: 0.4 })
  inputPerMTok!: number;
  @ApiPropertyOptional({ example: 0.1 })
  cachedInputPerMTok?: number;
  @ApiProperty({ example: 1.6 })
  outputPerMTok!: number;
  @ApiPropertyOptional()
  audioInputPerMTok?: number;
  @ApiPropertyOptional()
  audioOutputPerMTok?: number;
}

export class BudgetCapsDto implements BudgetCaps {
  @ApiProperty({ type: Number, nullable: true, example: 5 })
  dailyUsd!: number | null;
  @ApiProperty({ type: Number, nullable: true, example: null })
  monthlyUsd!: number | null;
  @ApiProperty({ type: Number, nullable: true, example: 1 })
  unattendedDailyUsd!: number | null;
}

export class OutputLimitsDto implements OutputLimits {
  @ApiProperty({ example: 16384 })
  chat!: number;
  @ApiProperty({ example: 8192 })
  job!: number;
  @ApiProperty({ example: 4096 })
  pulse!: number;
  @ApiProperty({ name: 'auto-reply', example: 2048 })
  'auto-reply'!: number;
  @ApiProperty({ example: 4096 })
  voice!: number;
  @ApiProperty({ example: 4096 })
  memory!: number;
}

export class AuthProfileViewDto implements AuthProfile {
  @ApiProperty()
  id!: string;
  @ApiProperty()
  urlPrefix!: string;
  @ApiProperty()
  header!: string;
  @ApiProperty({ type: String, nullable: true, example: '••••abcd' })
  value!: string | null;
}

export class EndpointViewDto implements OpenAiCompatibleEndpoint {
  @ApiProperty()
  name!: string;
  @ApiProperty()
  baseUrl!: string;
  @ApiProperty({ type: String, nullable: true, example: '••••abcd' })
  apiKey!: string | null;
}

export class SettingsViewDto implements AppSettingsView {
  @ApiProperty({ type: String, nullable: true, example: '••••abcd' })
  geminiApiKey!: string | null;
  @ApiProperty({ type: String, nullable: true, example: '••••abcd' })
  openaiApiKey!: string | null;
  @ApiProperty({ type: [EndpointViewDto] })
  openaiCompatible!: EndpointViewDto[];
  @ApiProperty({ type: String, nullable: true })
  primaryModel!: string | null;
  @ApiProperty({ type: String, nullable: true })
  imageModel!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'gpt-realtime' })
  realtimeModel!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'marin' })
  realtimeVoice!: string | null;
  @ApiProperty({ type: String, nullable: true, example: '123456789' })
  telegramOwnerChatId!: string | null;
  @ApiProperty({ type: String, nullable: true, example: '••••abcd' })
  braveApiKey!: string | null;
  @ApiProperty({ type: String, nullable: true, example: '••••abcd' })
  telegramBotToken!: string | null;
  @ApiProperty({ example: 'https://api.telegram.org' })
  telegramApiRoot!: string;
  @ApiProperty({ example: 'Europe/Paris' })
  timezone!: string;
  @ApiProperty({ type: [String], example: ['nas.local:8123'] })
  urlFetchAllowHosts!: string[];
  @ApiProperty({ type: [AuthProfileViewDto] })
  authProfiles!: AuthProfileViewDto[];
  @ApiProperty({ type: [String], example: [] })
  disabledTools!: string[];
  @ApiProperty({
    description:
      'Attended turns too wait for the owner before they send or delete (GET /api/actions)',
  })
  alwaysConfirm!: boolean;
  @ApiProperty({ type: [ModelPriceDto] })
  modelPrices!: ModelPriceDto[];
  @ApiProperty({ type: [ModelPriceDto] })
  defaultModelPrices!: ModelPriceDto[];
  @ApiProperty({ type: BudgetCapsDto })
  budget!: BudgetCapsDto;
  @ApiProperty({ type: OutputLimitsDto })
  outputLimits!: OutputLimitsDto;
  @ApiProperty({ type: String, nullable: true })
  updatedAt!: string | null;
}

export class ModelOptionDto implements ModelOption {
  @ApiProperty({ example: 'gemini-2.5-flash' })
  id!: string;
  @ApiProperty({ enum: MODEL_PROVIDERS })
  provider!: ModelProvider;
}

export class ModelListProblemDto {
  @ApiProperty({ enum: MODEL_PROVIDERS })
  provider!: ModelProvider;
  @ApiProperty({ description: '"Gemini", "OpenAI" or the endpoint name' })
  name!: string;
  @ApiProperty({ description: 'Why its models are missing, in plain words' })
  error!: string;
}

export class ModelListDto implements ModelListResponse {
  @ApiProperty({ type: [ModelOptionDto] })
  models!: ModelOptionDto[];
  @ApiProperty({ type: [ModelListProblemDto] })
  problems!: ModelListProblemDto[];
}

export class ConnectionTestDto implements ConnectionTestRequest {
  @ApiPropertyOptional({
    enum: ['gemini', 'openai'],
    description: 'Test this provider (send either provider or endpoint)',
  })
  @OptionalField()
  @IsIn(['gemini', 'openai'], {
    message: 'provider must be gemini or openai',
  })
  provider?: 'gemini' | 'openai';

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description:
      'With provider: the key to try; omitted, empty or masked: the stored one. Never sent back.',
  })
  @OptionalOrNull()
  @IsString()
  @MaxLength(500)
  apiKey?: string | null;

  @ApiPropertyOptional({
    type: EndpointDto,
    description:
      'Test this OpenAI-compatible endpoint; a masked apiKey uses the key stored for the same name and base URL',
  })
  @OptionalField()
  @ValidateNested()
  @Type(() => EndpointDto)
  endpoint?: EndpointDto;
}

export class ConnectionTestResultDto {
  @ApiProperty()
  ok!: boolean;
  @ApiPropertyOptional({
    type: [ModelOptionDto],
    description: 'ok: the models offered',
  })
  models?: ModelOptionDto[];
  @ApiPropertyOptional({
    description:
      'not ok: why, in plain words (wrong key, unreachable, not an OpenAI-compatible server)',
  })
  error?: string;
}
