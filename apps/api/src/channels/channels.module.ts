import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ChatsModule } from '../chats/chats.module';
import { SandboxReadScope } from '../mongo-sandbox/sandbox-collection-owners';
import { ContactChatsReadScope } from './contact-chats-read-scope';

/** What every messaging channel shares beyond the auto-reply pipeline: db_query's view of contact chats. */
@Module({
  imports: [DiscoveryModule, ChatsModule],
  providers: [{ provide: SandboxReadScope, useClass: ContactChatsReadScope }],
})
export class ChannelsModule {}
