import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import {
  AiModeProvider,
  AiToolProvider,
  toolError,
  type AiMode,
  type AiTool,
} from '../ai-tools/ai-tool';
import { idArgument, integerArgument } from '../ai-tools/lenient-arguments';
import {
  DECK_NAME_MAX,
  FLASHCARD_TEXT_MAX,
  FlashcardError,
  FlashcardStore,
  GRADES,
  type GradeName,
} from './flashcard-store';

export const LEARNING_MODE = 'learning';

/** Seed 003's learning mode: the natural "quiz me" of a call. */
@AiModeProvider()
@Injectable()
export class LearningMode implements AiMode {
  readonly name = LEARNING_MODE;
  readonly description =
    'flashcards: make cards, get quizzed on the ones due, and remember them with spaced repetition';
}

const text = (what: string) =>
  z
    .string({ error: `${what} is required` })
    .trim()
    .min(1, `${what} must not be empty`)
    .max(
      FLASHCARD_TEXT_MAX,
      `${what} is longer than ${FLASHCARD_TEXT_MAX} characters`,
    );

const deck = z
  .string()
  .trim()
  .max(DECK_NAME_MAX, `deck is longer than ${DECK_NAME_MAX} characters`)
  .optional()
  .describe('A topic, e.g. "spanish" (optional)');

function deckName(value: string | undefined): string | null {
  return value?.trim().toLowerCase() || null;
}

const ADD_ARGS = z.object({
  front: text('front').describe('The question or prompt side'),
  back: text('back').describe('The answer side'),
  deck,
});

@AiToolProvider()
@Injectable()
export class FlashcardAddTool implements AiTool<typeof ADD_ARGS> {
  readonly name = 'flashcard_add';
  readonly description =
    'Add one flashcard (front: the question, back: the answer, optional deck). It is due for review at once.';
  readonly schema = ADD_ARGS;
  readonly promptLine = 'add a flashcard (front, back, optional deck).';
  readonly modes = [LEARNING_MODE];

  constructor(private readonly store: FlashcardStore) {}

  async execute(args: z.output<typeof ADD_ARGS>): Promise<string> {
    try {
      const { card, total } = await this.store.add(
        args.front,
        args.back,
        deckName(args.deck),
      );
      return JSON.stringify({ added: card, total_cards: total });
    } catch (error) {
      if (error instanceof FlashcardError) return toolError(error.message);
      throw error;
    }
  }
}

const REVIEW_ARGS = z.object({
  deck,
  limit: integerArgument(
    z
      .number()
      .int()
      .min(1, 'limit must be 1 to 20')
      .max(20, 'limit must be 1 to 20')
      .optional(),
  ).describe('How many due cards to return (1-20, default 5)'),
});

@AiToolProvider()
@Injectable()
export class FlashcardReviewTool implements AiTool<typeof REVIEW_ARGS> {
  readonly name = 'flashcard_review';
  readonly description =
    'The flashcards due for review now, most overdue first (front and back). Quiz the owner on one front at a time, ' +
    'never saying the back before they answer, then grade the answer with flashcard_grade.';
  readonly schema = REVIEW_ARGS;
  readonly promptLine = 'list the flashcards due now, to quiz the owner.';
  readonly modes = [LEARNING_MODE];

  constructor(private readonly store: FlashcardStore) {}

  async execute(args: z.output<typeof REVIEW_ARGS>): Promise<string> {
    const due = await this.store.due(deckName(args.deck), args.limit ?? 5);
    return JSON.stringify({
      due: due.cards,
      due_count: due.dueCount,
      total_cards: due.total,
      ...(due.cards.length === 0 ? { next_due: due.nextDue } : {}),
    });
  }
}

const GRADE_ARGS = z.object({
  card_id: idArgument(
    z
      .string({ error: 'card_id is required' })
      .trim()
      .min(1, 'card_id is required'),
  ).describe('The card_id from flashcard_review'),
  grade: z
    .preprocess(
      (value) => {
        if (typeof value === 'number' && Number.isInteger(value))
          return GRADES[value - 1] ?? value;
        if (typeof value !== 'string') return value;
        const word = value.trim().toLowerCase();
        return /^[1-4]$/.test(word) ? GRADES[Number(word) - 1] : word;
      },
      z.enum(GRADES, { error: 'grade must be one of again, hard, good, easy' }),
    )
    .describe(
      'How well the owner answered: "again" (wrong or forgotten), "hard" (right with effort), "good" (right), "easy" (right at once)',
    ),
});

@AiToolProvider()
@Injectable()
export class FlashcardGradeTool implements AiTool<typeof GRADE_ARGS> {
  readonly name = 'flashcard_grade';
  readonly description =
    "Grade the owner's answer to a card (again, hard, good, easy): spaced repetition sets when it is due next.";
  readonly schema = GRADE_ARGS;
  readonly promptLine =
    "grade the owner's answer to a flashcard (again, hard, good, easy).";
  readonly modes = [LEARNING_MODE];

  constructor(private readonly store: FlashcardStore) {}

  async execute(args: z.output<typeof GRADE_ARGS>): Promise<string> {
    try {
      const { card } = await this.store.grade(
        args.card_id,
        args.grade as GradeName,
      );
      return JSON.stringify({
        graded: args.grade,
        card_id: card.card_id,
        next_due: card.due,
        reviews: card.reviews,
      });
    } catch (error) {
      if (error instanceof FlashcardError) return toolError(error.message);
      throw error;
    }
  }
}
