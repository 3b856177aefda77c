import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { isValidObjectId, type Model } from 'mongoose';
import {
  createEmptyCard,
  fsrs,
  generatorParameters,
  Rating,
  type Card,
  type Grade,
} from 'ts-fsrs';
import { Clock } from '../clock/clock';
import { FlashcardRecord } from './flashcard.schema';

/** Enough for years of study; a model stuck in a loop of adds stops here. */
export const MAX_FLASHCARDS = 10_000;
export const FLASHCARD_TEXT_MAX = 1_000;
export const DECK_NAME_MAX = 60;

export const GRADES = ['again', 'hard', 'good', 'easy'] as const;
export type GradeName = (typeof GRADES)[number];

const RATING_OF: Record<GradeName, Grade> = {
  again: Rating.Again,
  hard: Rating.Hard,
  good: Rating.Good,
  easy: Rating.Easy,
};

export interface FlashcardView {
  card_id: string;
  front: string;
  back: string;
  deck: string | null;
  due: string;
  reviews: number;
}

export class FlashcardError extends Error {}

/**
 * The owner's flashcards with spaced repetition: each card carries its FSRS
 * schedule (ts-fsrs, fixed parameters, no fuzz so a grade's next date is the
 * same every time), and a grade moves it.
 */
@Injectable()
export class FlashcardStore {
  private readonly scheduler = fsrs(
    generatorParameters({ enable_fuzz: false }),
  );

  constructor(
    @InjectModel(FlashcardRecord.name)
    private readonly cards: Model<FlashcardRecord>,
    private readonly clock: Clock,
  ) {}

  async add(
    front: string,
    back: string,
    deck: string | null,
  ): Promise<{ card: FlashcardView; total: number }> {
    const total = await this.cards.countDocuments().exec();
    if (total >= MAX_FLASHCARDS)
      throw new FlashcardError(
        `There are already ${MAX_FLASHCARDS} flashcards, the most kept: remove some first.`,
      );
    const now = this.clock.now();
    const fresh = createEmptyCard(now);
    const created = await this.cards.create({
      front,
      back,
      deck,
      ...fresh,
      last_review: null,
      createdAt: now,
    });
    return { card: view(created.toObject()), total: total + 1 };
  }

  /** The cards due now, the most overdue first, and how many are due in all. */
  async due(
    deck: string | null,
    limit: number,
  ): Promise<{
    cards: FlashcardView[];
    dueCount: number;
    nextDue: string | null;
    total: number;
  }> {
    const now = this.clock.now();
    const inDeck = deck ? { deck } : {};
    const filter = { ...inDeck, due: { $lte: now } };
    const [cards, dueCount, total, next] = await Promise.all([
      this.cards
        .find(filter)
        .sort({ due: 1, _id: 1 })
        .limit(limit)
        .lean<FlashcardRecord[]>()
        .exec(),
      this.cards.countDocuments(filter).exec(),
      this.cards.countDocuments(inDeck).exec(),
      this.cards
        .findOne({ ...inDeck, due: { $gt: now } })
        .sort({ due: 1 })
        .lean<FlashcardRecord>()
        .exec(),
    ]);
    return {
      cards: cards.map(view),
      dueCount,
      nextDue: next ? next.due.toISOString() : null,
      total,
    };
  }

  /** Records one answer: the card's next review follows from the grade. */
  async grade(
    id: string,
    grade: GradeName,
  ): Promise<{ card: FlashcardView; previousDue: string }> {
    const record = isValidObjectId(id)
      ? await this.cards.findById(id).lean<FlashcardRecord>().exec()
      : null;
    if (!record)
      throw new FlashcardError(`No flashcard has the id ${JSON.stringify(id)}`);
    const now = this.clock.now();
    const { card } = this.scheduler.next(cardOf(record), now, RATING_OF[grade]);
    const next = { ...card, last_review: card.last_review ?? now };
    await this.cards.updateOne({ _id: record._id }, { $set: next }).exec();
    return {
      card: view({ ...record, ...next }),
      previousDue: record.due.toISOString(),
    };
  }
}

function cardOf(record: FlashcardRecord): Card {
  return {
    due: record.due,
    stability: record.stability,
    difficulty: record.difficulty,
    elapsed_days: record.elapsed_days,
    scheduled_days: record.scheduled_days,
    learning_steps: record.learning_steps,
    reps: record.reps,
    lapses: record.lapses,
    state: record.state,
    last_review: record.last_review ?? undefined,
  };
}

function view(record: FlashcardRecord): FlashcardView {
  return {
    card_id: record._id.toHexString(),
    front: record.front,
    back: record.back,
    deck: record.deck ?? null,
    due: record.due.toISOString(),
    reviews: record.reps,
  };
}
