import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { FlashcardStore } from './flashcard-store';
import { FlashcardRecord, FlashcardSchema } from './flashcard.schema';
import {
  FlashcardAddTool,
  FlashcardGradeTool,
  FlashcardReviewTool,
  LearningMode,
} from './learning-tools';

/** Seed 003's learning mode: flashcards with spaced repetition (ts-fsrs). */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: FlashcardRecord.name, schema: FlashcardSchema },
    ]),
  ],
  providers: [
    FlashcardStore,
    LearningMode,
    FlashcardAddTool,
    FlashcardReviewTool,
    FlashcardGradeTool,
  ],
})
export class LearningModule {}
