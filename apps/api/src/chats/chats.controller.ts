import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { SsePacer } from './sse-pacer';
import type {
  ChatMessage,
  ChatPromptPreview,
  ChatSummary,
} from '@metatronos/shared-types';
import { ChatPromptPreviewer } from './chat-prompt-preview';
import {
  ChatReplyService,
  MESSAGE_NOT_STORED,
  type FinishedReply,
  type PreparedReply,
} from './chat-reply.service';
import { ChatsService, DEFAULT_MESSAGES_PAGE } from './chats.service';
import {
  ChatListQueryDto,
  ChatMessageDto,
  ChatPromptPreviewDto,
  ChatSummaryDto,
  CreateChatDto,
  MessagesQueryDto,
  RegenerateReplyDto,
  SendMessageDto,
  StopReplyDto,
  UpdateChatDto,
} from './dto/chat.dto';

@ApiTags('chats')
@Controller('chats')
export class ChatsController {
  constructor(
    private readonly chats: ChatsService,
    private readonly replies: ChatReplyService,
    private readonly previewer: ChatPromptPreviewer,
  ) {}

  @Get()
  @ApiOperation({
    summary:
      'The chats (not archived, or only the archived ones), pinned first, then the most recently active; `q` searches titles and message text',
  })
  @ApiOkResponse({ type: [ChatSummaryDto] })
  @ApiBadRequestResponse({ description: 'q too long, archived not a boolean' })
  list(@Query() query: ChatListQueryDto): Promise<ChatSummary[]> {
    return this.chats.list(query);
  }

  @Post()
  @ApiOperation({ summary: 'Create a chat' })
  @ApiCreatedResponse({ type: ChatSummaryDto })
  create(@Body() body: CreateChatDto): Promise<ChatSummary> {
    return this.chats.create(body.title);
  }

  @Post('messages')
  @ApiOperation({
    summary:
      'Start a chat with its first message; the answer is the reply as Server-Sent Events',
    description:
      'The chat is stored only when the message is accepted: a refused message (400, 409) leaves no chat behind. ' +
      'The events are those of `POST /api/chats/{id}/messages`; the `message` event carries the new `chatId`.',
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: 'text/event-stream of the reply' })
  @ApiBadRequestResponse({
    description:
      'Empty content, no model / API key configured, or an unknown or already sent attachment; nothing is stored',
  })
  async start(
    @Body() body: SendMessageDto,
    @Res() res: Response,
  ): Promise<void> {
    const chat = await this.chats.createQuietly();
    const chatId = chat._id.toHexString();
    let reply: PreparedReply;
    try {
      reply = await this.replies.prepare(chatId, body.content, {
        attachmentIds: body.attachmentIds,
        allowOverBudget: body.allowOverBudget,
      });
    } catch (error) {
      await this.chats.discard(chatId);
      throw error;
    }
    this.chats.announceCreated(chatId);
    const finished = await streamReply(reply, res);
    // The database refused the message itself: the chat would stay empty.
    if (finished.error === MESSAGE_NOT_STORED) await this.chats.remove(chatId);
  }

  @Patch(':id')
  @ApiOperation({
    summary:
      "Rename, pin, archive, pick the chat's model and/or switch its mode (the owner's switch is kept as an event in the chat)",
    description:
      'Send at least one of title, mode, pinned, archived, model; the others stay as they are.',
  })
  @ApiConflictResponse({
    description:
      'A reply is running or another version is being shown (mode switch)',
  })
  @ApiOkResponse({ type: ChatSummaryDto })
  @ApiBadRequestResponse({
    description:
      'Nothing to change, a blank title, a non-boolean pinned/archived, or a model that does not route to a configured provider; nothing is written',
  })
  @ApiNotFoundResponse({ description: 'No such chat' })
  update(
    @Param('id') id: string,
    @Body() body: UpdateChatDto,
  ): Promise<ChatSummary> {
    return this.chats.update(id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary:
      'Delete a chat and all its messages (a running reply is stopped first)',
  })
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ description: 'No such chat' })
  async remove(@Param('id') id: string): Promise<void> {
    await this.chats.remove(id);
  }

  @Get(':id/prompt')
  @ApiOperation({
    summary:
      "The system prompt this chat's next turn sends: its mode, its account, and the third-party mark its newest reply ended with",
  })
  @ApiOkResponse({ type: ChatPromptPreviewDto })
  @ApiBadRequestResponse({
    description: "A job's, Pulse's or a contact's chat (built when it runs)",
  })
  @ApiNotFoundResponse({ description: 'No such chat' })
  prompt(@Param('id') id: string): Promise<ChatPromptPreview> {
    return this.previewer.preview(id);
  }

  @Get(':id/messages')
  @ApiOperation({
    summary:
      'Messages, oldest first: the newest page, or the page before `before`',
  })
  @ApiOkResponse({ type: [ChatMessageDto] })
  @ApiNotFoundResponse({ description: 'No such chat' })
  messages(
    @Param('id') id: string,
    @Query() query: MessagesQueryDto,
  ): Promise<ChatMessage[]> {
    return this.chats.messagesPage(
      id,
      query.limit ?? DEFAULT_MESSAGES_PAGE,
      query.before,
    );
  }

  @Post(':id/messages')
  @ApiOperation({
    summary: 'Send a message; the answer is the reply as Server-Sent Events',
    description:
      'Events: `message` (the user message, stored while the model is called), `delta` {text}, `tool_call` {id,name,arguments}, ' +
      '`tool_result` {id,name,result,durationMs,error}, then `done` {messageId,usage?,stopped?} or `error` {message,messageId?}. ' +
      'A failed reply is kept as an assistant message with `status: "error"`, its error text and whatever text arrived (`error.messageId` names it). ' +
      'The reply keeps running and is stored if the client disconnects. A message the database cannot store ends the stream with `error` {messageId: null}; nothing of the turn is kept.',
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: 'text/event-stream of the reply' })
  @ApiBadRequestResponse({
    description:
      'Empty content, no model / API key configured, or an unknown or already sent attachment; nothing is stored',
  })
  @ApiNotFoundResponse({ description: 'No such chat' })
  @ApiConflictResponse({
    description: 'A reply is already running in this chat',
  })
  async send(
    @Param('id') id: string,
    @Body() body: SendMessageDto,
    @Res() res: Response,
  ): Promise<void> {
    const reply = await this.replies.prepare(id, body.content, {
      attachmentIds: body.attachmentIds,
      fullTools: body.fullTools,
      allowOverBudget: body.allowOverBudget,
    });
    await streamReply(reply, res);
  }

  @Post(':id/messages/:messageId/regenerate')
  @ApiOperation({
    summary:
      'A new version of a message, answered anew (Retry, Regenerate, or Edit with `content`); the answer is the new reply as Server-Sent Events',
    description:
      '`messageId` is any message on the shown path. An assistant reply (a failed one included): a new version of it, answering the same message of yours. ' +
      'With `content`: a new version of your message (`messageId` itself, or the one the reply `messageId` answers) with that text, then a reply to it. ' +
      'The old version stays, with everything that followed it, as a hidden branch: the messages then carry `versions` {index, count}, and ' +
      '`POST /api/chats/{id}/messages/{messageId}/versions/{n}` shows another version. ' +
      'Same events as sending a message: `message` (the message being answered), `delta`, `tool_call`, `tool_result`, then `done` or `error`.',
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: 'text/event-stream of the new reply' })
  @ApiBadRequestResponse({
    description:
      "Your message without `content`, a contact's message or a reply to one, a mode switch, blank or too long `content`, or no model / API key configured; nothing is changed",
  })
  @ApiNotFoundResponse({
    description: 'No such chat, or no such message in it',
  })
  @ApiConflictResponse({
    description:
      'A reply is running in this chat, or the message is on a version that is not shown; nothing is changed',
  })
  @ApiServiceUnavailableResponse({
    description: 'The database did not accept the change; nothing is changed',
  })
  async regenerate(
    @Param('id') id: string,
    @Param('messageId') messageId: string,
    @Body() body: RegenerateReplyDto,
    @Res() res: Response,
  ): Promise<void> {
    const reply = await this.replies.prepareRegenerate(id, messageId, {
      content: body.content,
      fullTools: body.fullTools,
    });
    await streamReply(reply, res);
  }

  @Post(':id/messages/:messageId/versions/:n')
  @HttpCode(200)
  @ApiOperation({
    summary:
      "Show version `n` of a message (1 = the first written) and what followed it; the answer is the chat's newest page of messages as now shown",
    description:
      '`messageId` is any version of the message (its `versions` says how many there are). The version shown until now stays, with what ' +
      'followed it, as a hidden branch. Only the shown path is in the messages, the search, the memory and what the model reads next. ' +
      '`n` already shown: nothing changes. A `chats.changed` event (`change: "versions"`) tells the other consoles.',
  })
  @ApiOkResponse({ type: [ChatMessageDto] })
  @ApiBadRequestResponse({ description: '`n` is not a whole number from 1' })
  @ApiNotFoundResponse({
    description: 'No such chat, message in it, or version of the message',
  })
  @ApiConflictResponse({
    description:
      'A reply is running in this chat, or none of the versions is on the shown path (it is inside another hidden branch); nothing is changed',
  })
  @ApiServiceUnavailableResponse({
    description: 'The database did not accept the change',
  })
  async switchVersion(
    @Param('id') id: string,
    @Param('messageId') messageId: string,
    @Param('n') n: string,
  ): Promise<ChatMessage[]> {
    const version = n.trim();
    if (!/^\d{1,6}$/.test(version) || Number(version) < 1)
      throw new BadRequestException(
        `n must be a version number from 1 (got "${version.slice(0, 16)}")`,
      );
    await this.replies.switchVersion(id, messageId, Number(version));
    return this.chats.messagesPage(id, DEFAULT_MESSAGES_PAGE);
  }

  @Post(':id/stop')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Stop the running reply; the text that arrived is kept',
  })
  @ApiOkResponse({ type: StopReplyDto })
  @ApiNotFoundResponse({ description: 'No such chat' })
  async stop(@Param('id') id: string): Promise<StopReplyDto> {
    await this.chats.get(id);
    return { stopped: this.replies.stop(id) };
  }
}

/** Runs a prepared reply, writing its events to the response as Server-Sent Events (paced by `SsePacer`). */
async function streamReply(
  reply: PreparedReply,
  res: Response,
): Promise<FinishedReply> {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('X-Accel-Buffering', 'no');
  res.socket?.setNoDelay(true);
  // The headers wait for the first event: run() emits `message` at once, in the same tick.
  const pacer = new SsePacer({
    write: (text) => res.write(text),
    flushHeaders: () => res.flushHeaders(),
    get headersSent() {
      return res.headersSent;
    },
    get closed() {
      return res.writableEnded || res.destroyed;
    },
  });
  pacer.start();
  const finished = await reply.run((event, data) => pacer.event(event, data));
  // The last events and the stream's end in one write.
  const rest = pacer.end();
  if (!res.writableEnded && !res.destroyed) res.end(rest);
  else if (!res.writableEnded) res.end();
  return finished;
}
