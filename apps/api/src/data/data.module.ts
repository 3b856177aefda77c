import { Module } from '@nestjs/common';
import { MongoSandboxModule } from '../mongo-sandbox/mongo-sandbox.module';
import { DataController } from './data.controller';
import { DataService } from './data.service';

/** `GET /api/data/collections…`: the owner's read-only data browser, through the sandbox (secrets scrubbed). */
@Module({
  imports: [MongoSandboxModule],
  controllers: [DataController],
  providers: [DataService],
})
export class DataModule {}
