import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
} from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Connection } from 'mongoose';
import type {
  TelegramInboundMessage,
  TelegramPermission,
  TelegramStatusView,
} from '@metatronos/shared-types';
import {
  CreateTelegramPermissionDto,
  TelegramInboundMessageDto,
  TelegramMessagesQueryDto,
  TelegramPermissionDto,
  TelegramStatusDto,
  TelegramSuccessDto,
  UpdateTelegramPermissionDto,
} from './dto/telegram.dto';
import { TELEGRAM_MESSAGES_COLLECTION } from './schemas/telegram-message.schema';
import {
  TelegramBotService,
  type StoredTelegramMessage,
} from './telegram-bot.service';
import { TelegramPermissionsService } from './telegram-permissions.service';

@ApiTags('telegram')
@Controller('telegram')
export class TelegramController {
  constructor(
    private readonly bot: TelegramBotService,
    private readonly permissions: TelegramPermissionsService,
    @InjectConnection() private readonly connection: Connection,
  ) {}

  @Get('status')
  @ApiOperation({
    summary:
      'The bot: disconnected (no token), connecting, connected (@username) or error (reason in plain words)',
  })
  @ApiOkResponse({ type: TelegramStatusDto })
  status(): TelegramStatusView {
    return this.bot.view();
  }

  @Get('messages')
  @ApiOperation({
    summary:
      'The latest messages the bot received, newest first, strangers included (they get no reply until allowed)',
  })
  @ApiOkResponse({ type: [TelegramInboundMessageDto] })
  async messages(
    @Query() query: TelegramMessagesQueryDto,
  ): Promise<TelegramInboundMessage[]> {
    const docs = await this.connection
      .collection<StoredTelegramMessage>(TELEGRAM_MESSAGES_COLLECTION)
      .find({})
      .sort({ timestamp: -1 })
      .limit(query.limit ?? 50)
      .toArray();
    const readable = new Set(await this.permissions.readableChatIds());
    return docs.map((doc) => ({
      id: doc._id,
      chatId: doc.telegramChatId,
      chatType: doc.chatType,
      chatTitle: doc.chatTitle,
      fromName: doc.fromName,
      fromUsername: doc.fromUsername,
      text: doc.body,
      at: new Date(doc.timestamp).toISOString(),
      processing: doc.processing,
      reason: doc.reason ?? null,
      permitted: readable.has(doc.telegramChatId),
      reply: doc.replyText ?? null,
    }));
  }

  @Get('permissions')
  @ApiOperation({ summary: 'Every Telegram chat permission, by displayName' })
  @ApiOkResponse({ type: [TelegramPermissionDto] })
  list(): Promise<TelegramPermission[]> {
    return this.permissions.list();
  }

  @Post('permissions')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'Allow a Telegram chat (canRead, canReply and trusted default to false); pending messages from it are answered',
  })
  @ApiOkResponse({ type: TelegramPermissionDto })
  @ApiBadRequestResponse({ description: 'Invalid chatId or displayName' })
  @ApiConflictResponse({
    description: '"Permission already exists for this Telegram chat"',
  })
  create(
    @Body() body: CreateTelegramPermissionDto,
  ): Promise<TelegramPermission> {
    return this.permissions.create(body, 'owner');
  }

  @Patch('permissions/:id')
  @ApiOperation({ summary: 'Change a Telegram chat permission' })
  @ApiOkResponse({ type: TelegramPermissionDto })
  @ApiNotFoundResponse({ description: '"Permission not found"' })
  update(
    @Param('id') id: string,
    @Body() body: UpdateTelegramPermissionDto,
  ): Promise<TelegramPermission> {
    return this.permissions.update(id, body, 'owner');
  }

  @Delete('permissions/:id')
  @ApiOperation({ summary: 'Remove a Telegram chat permission' })
  @ApiOkResponse({ type: TelegramSuccessDto })
  @ApiNotFoundResponse({ description: '"Permission not found"' })
  async remove(@Param('id') id: string): Promise<{ success: true }> {
    await this.permissions.remove(id, 'owner');
    return { success: true };
  }
}
