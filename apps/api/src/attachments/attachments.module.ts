import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AttachmentRecord, AttachmentSchema } from './attachment.schema';
import { AttachmentsController } from './attachments.controller';
import { AttachmentsService } from './attachments.service';

/**
 * Files uploaded to go with a message (`POST/GET /api/attachments`), stored under `<DATA_DIR>/attachments/`.
 * A deleted chat's attachments go with it, and uploads never sent are removed after a day (AttachmentsService).
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: AttachmentRecord.name, schema: AttachmentSchema },
    ]),
  ],
  controllers: [AttachmentsController],
  providers: [AttachmentsService],
  exports: [AttachmentsService],
})
export class AttachmentsModule {}
