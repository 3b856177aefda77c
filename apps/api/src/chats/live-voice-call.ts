import { Injectable } from '@nestjs/common';

/**
 * The chat a voice call is live in (one call at a time), set by the voice service as a call
 * starts and ends. The call writes its words after the version it started on, so the chat's
 * versions stay as they are until it ends: edits, regenerates and switches wait for the hang-up.
 */
@Injectable()
export class LiveVoiceCall {
  private chatId: string | null = null;

  set(chatId: string | null): void {
    this.chatId = chatId;
  }

  isIn(chatId: string): boolean {
    return this.chatId === chatId;
  }
}
