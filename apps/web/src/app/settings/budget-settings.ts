import {
  ChangeDetectionStrategy,
  Component,
  computed,
  effect,
  inject,
  input,
  signal,
  untracked,
} from '@angular/core';
import { MatButton, MatIconButton } from '@angular/material/button';
import { MatCard, MatCardContent } from '@angular/material/card';
import { MatCheckbox } from '@angular/material/checkbox';
import { MatFormField, MatHint, MatLabel } from '@angular/material/form-field';
import { MatInput } from '@angular/material/input';
import {
  BUDGET_MAX_USD,
  OUTPUT_LIMIT_MAX,
  OUTPUT_LIMIT_MIN,
  type AppSettingsView,
  type BudgetCapName,
  type BudgetCaps,
  type ModelPrice,
  type OutputLimits,
  type UpdateAppSettingsRequest,
  type UsageSource,
} from '@metatronos/shared-types';
import { ApiClient } from '../core/api-client';
import { inlineErrorMessage } from '../core/server-problem';
import { Icon } from '../ui/icon';

/** The caps in the order shown, with their words. */
export const CAP_FIELDS: readonly { cap: BudgetCapName; label: string }[] = [
  { cap: 'dailyUsd', label: 'Each day, in total' },
  {
    cap: 'unattendedDailyUsd',
    label: 'Each day, jobs, Pulse and auto-replies',
  },
  { cap: 'monthlyUsd', label: 'Each month, in total' },
];

export const LIMIT_FIELDS: readonly { source: UsageSource; label: string }[] = [
  { source: 'chat', label: 'Chat replies' },
  { source: 'voice', label: 'Voice responses' },
  { source: 'job', label: 'Jobs' },
  { source: 'pulse', label: 'Pulse' },
  { source: 'auto-reply', label: 'Auto-replies' },
  { source: 'memory', label: 'Memory upkeep' },
];

/** The price columns of a row: the required ones, then those that may be left blank. */
export const PRICE_FIELDS: readonly {
  key: Exclude<keyof ModelPrice, 'model'>;
  label: string;
  optional: boolean;
}[] = [
  { key: 'inputPerMTok', label: 'Input', optional: false },
  { key: 'cachedInputPerMTok', label: 'Cached input', optional: true },
  { key: 'outputPerMTok', label: 'Output', optional: false },
  { key: 'audioInputPerMTok', label: 'Audio in', optional: true },
  { key: 'audioOutputPerMTok', label: 'Audio out', optional: true },
];

type PriceKey = (typeof PRICE_FIELDS)[number]['key'];

/** One cap as edited: "no cap" is its own explicit choice. */
export interface CapDraft {
  noCap: boolean;
  amount: string;
}

/** One price row as typed (numbers as text, blank for an optional price). */
export type PriceDraft = { model: string } & Record<PriceKey, string>;

export interface BudgetDraft {
  caps: Record<BudgetCapName, CapDraft>;
  prices: PriceDraft[];
  limits: Record<UsageSource, string>;
  /** The owner's own Telegram chat id, where notices go; blank: none. */
  telegramChat: string;
}

export function budgetDraftFrom(settings: AppSettingsView): BudgetDraft {
  const caps = {} as Record<BudgetCapName, CapDraft>;
  for (const { cap } of CAP_FIELDS) {
    const value = settings.budget[cap];
    caps[cap] =
      value === null
        ? { noCap: true, amount: '' }
        : { noCap: false, amount: String(value) };
  }
  const limits = {} as Record<UsageSource, string>;
  for (const { source } of LIMIT_FIELDS)
    limits[source] = String(settings.outputLimits[source] ?? '');
  return {
    caps,
    prices: settings.modelPrices.map(priceDraft),
    limits,
    telegramChat: settings.telegramOwnerChatId ?? '',
  };
}

export function priceDraft(price: ModelPrice): PriceDraft {
  const draft = { model: price.model } as PriceDraft;
  for (const { key } of PRICE_FIELDS) {
    const value = price[key];
    draft[key] = value === undefined ? '' : String(value);
  }
  return draft;
}

/** A dollar amount as typed ("5", "2.50", "$5", "1,000"); null when it is not one. */
export function dollarsOf(text: string): number | null {
  const cleaned = text.trim().replace(/^\$/, '').replace(/,/g, '').trim();
  if (!/^\d+(?:\.\d+)?$|^\.\d+$/.test(cleaned)) return null;
  const value = Number(cleaned);
  return Number.isFinite(value) ? value : null;
}

const MAX = BUDGET_MAX_USD.toLocaleString('en-US');

export function capError(draft: CapDraft): string | null {
  if (draft.noCap) return null;
  if (!draft.amount.trim())
    return 'Enter an amount in dollars, or choose "No cap".';
  const value = dollarsOf(draft.amount);
  if (value === null) return 'Enter an amount in dollars, e.g. 5 or 2.50.';
  if (value > BUDGET_MAX_USD) return `At most $${MAX}.`;
  return null;
}

/** What is wrong with one price row, in words; null when it can be saved. */
export function priceRowError(
  row: PriceDraft,
  index: number,
  rows: readonly PriceDraft[],
): string | null {
  const model = row.model.trim();
  if (!model) return 'Name the model, e.g. gpt-4.1-mini.';
  if (model.length > 200) return 'The model name is too long.';
  const duplicate = rows.findIndex(
    (other) => other.model.trim().toLowerCase() === model.toLowerCase(),
  );
  if (duplicate !== index) return `${model} is priced twice: keep one row.`;
  for (const { key, label, optional } of PRICE_FIELDS) {
    const text = row[key].trim();
    if (!text) {
      if (optional) continue;
      return `Enter the ${label.toLowerCase()} price (USD per million tokens; 0 if free).`;
    }
    const value = dollarsOf(text);
    if (value === null)
      return `The ${label.toLowerCase()} price must be a number of dollars per million tokens, e.g. 0.40.`;
    if (value > BUDGET_MAX_USD)
      return `The ${label.toLowerCase()} price is at most $${MAX} per million tokens.`;
  }
  return null;
}

export function limitError(text: string): string | null {
  const trimmed = text.trim().replace(/[,_ ]/g, '');
  if (!/^\d+$/.test(trimmed))
    return 'Enter a whole number of tokens, e.g. 4096.';
  const value = Number(trimmed);
  if (value < OUTPUT_LIMIT_MIN || value > OUTPUT_LIMIT_MAX)
    return `From ${OUTPUT_LIMIT_MIN} to ${OUTPUT_LIMIT_MAX.toLocaleString('en-US')} tokens.`;
  return null;
}

export function telegramChatError(text: string): string | null {
  return /^(|-?\d{1,20})$/.test(text.trim())
    ? null
    : 'A Telegram chat id is digits, e.g. 123456789 (leave it blank for none).';
}

/** The settings a valid draft saves: only what differs from what is saved. */
export function budgetChanges(
  saved: AppSettingsView,
  draft: BudgetDraft,
): UpdateAppSettingsRequest {
  const changes: UpdateAppSettingsRequest = {};
  const caps: Partial<BudgetCaps> = {};
  for (const { cap } of CAP_FIELDS) {
    const edited = draft.caps[cap];
    const value = edited.noCap ? null : dollarsOf(edited.amount);
    if (value !== saved.budget[cap]) caps[cap] = value;
  }
  if (Object.keys(caps).length) changes.budget = caps;
  const prices = draft.prices.map(priceOf);
  if (JSON.stringify(prices) !== JSON.stringify(saved.modelPrices.map(norm)))
    changes.modelPrices = prices;
  const limits: Partial<OutputLimits> = {};
  for (const { source } of LIMIT_FIELDS) {
    const value = Number(draft.limits[source].trim().replace(/[,_ ]/g, ''));
    if (value !== saved.outputLimits[source]) limits[source] = value;
  }
  if (Object.keys(limits).length) changes.outputLimits = limits;
  const telegram = draft.telegramChat.trim() || null;
  if (telegram !== (saved.telegramOwnerChatId ?? null))
    changes.telegramOwnerChatId = telegram;
  return changes;
}

function priceOf(row: PriceDraft): ModelPrice {
  const price: ModelPrice = {
    model: row.model.trim(),
    inputPerMTok: dollarsOf(row.inputPerMTok) ?? 0,
    outputPerMTok: dollarsOf(row.outputPerMTok) ?? 0,
  };
  for (const { key, optional } of PRICE_FIELDS) {
    if (!optional || !row[key].trim()) continue;
    price[key] = dollarsOf(row[key]) ?? 0;
  }
  return norm(price);
}

/** One key order, so a saved list and an edited one compare as text. */
function norm(price: ModelPrice): ModelPrice {
  const out: ModelPrice = {
    model: price.model,
    inputPerMTok: price.inputPerMTok,
    outputPerMTok: price.outputPerMTok,
  };
  for (const { key, optional } of PRICE_FIELDS)
    if (optional && price[key] !== undefined) out[key] = price[key];
  return out;
}

/** `$0.40` for a price shown in the shipped list; blank for none. */
export function shownPrice(value: number | undefined): string {
  return value === undefined ? '—' : `$${value}`;
}

/**
 * Settings → Spend: the caps (each with an explicit "No cap"), the model prices
 * (the shipped ones shown, any of them overridden, rows added and removed) and
 * the output limit per source. Saved on its own (`PATCH /api/settings` with
 * only these fields), apart from the page's form.
 */
@Component({
  selector: 'mt-budget-settings',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    MatButton,
    MatIconButton,
    MatCard,
    MatCardContent,
    MatCheckbox,
    MatFormField,
    MatHint,
    MatLabel,
    MatInput,
    Icon,
  ],
  templateUrl: './budget-settings.html',
  styleUrl: './budget-settings.scss',
})
export class BudgetSettings {
  private readonly api = inject(ApiClient);

  /** The settings as the Settings page loaded them (`GET /api/settings`); null until then. */
  readonly settings = input<AppSettingsView | null>(null);

  protected readonly capFields = CAP_FIELDS;
  protected readonly limitFields = LIMIT_FIELDS;
  protected readonly priceFields = PRICE_FIELDS;
  protected readonly shownPrice = shownPrice;

  protected readonly saved = signal<AppSettingsView | null>(null);
  protected readonly draft = signal<BudgetDraft | null>(null);
  protected readonly saving = signal(false);
  protected readonly saveError = signal<string | null>(null);
  protected readonly savedNote = signal(false);

  protected readonly capErrors = computed(() => {
    const draft = this.draft();
    const errors = {} as Record<BudgetCapName, string | null>;
    for (const { cap } of CAP_FIELDS)
      errors[cap] = draft ? capError(draft.caps[cap]) : null;
    return errors;
  });
  protected readonly priceErrors = computed(() => {
    const rows = this.draft()?.prices ?? [];
    return rows.map((row, i) => priceRowError(row, i, rows));
  });
  protected readonly limitErrors = computed(() => {
    const draft = this.draft();
    const errors = {} as Record<UsageSource, string | null>;
    for (const { source } of LIMIT_FIELDS)
      errors[source] = draft ? limitError(draft.limits[source]) : null;
    return errors;
  });
  protected readonly telegramError = computed(() =>
    telegramChatError(this.draft()?.telegramChat ?? ''),
  );
  protected readonly valid = computed(
    () =>
      !this.telegramError() &&
      Object.values(this.capErrors()).every((e) => e === null) &&
      this.priceErrors().every((e) => e === null) &&
      Object.values(this.limitErrors()).every((e) => e === null),
  );
  protected readonly changes = computed(() => {
    const saved = this.saved();
    const draft = this.draft();
    return saved && draft && this.valid() ? budgetChanges(saved, draft) : {};
  });
  protected readonly dirty = computed(() => {
    const saved = this.saved();
    const draft = this.draft();
    if (!saved || !draft) return false;
    return (
      !this.valid() ||
      JSON.stringify(draft) !== JSON.stringify(budgetDraftFrom(saved))
    );
  });
  protected readonly canSave = computed(
    () =>
      !this.saving() && this.valid() && Object.keys(this.changes()).length > 0,
  );
  /** The shipped prices, each marked when the owner's list overrides it. */
  protected readonly shipped = computed(() => {
    const own = new Set(
      (this.draft()?.prices ?? []).map((p) => p.model.trim().toLowerCase()),
    );
    return (this.saved()?.defaultModelPrices ?? []).map((price) => ({
      price,
      overridden: own.has(price.model.toLowerCase()),
    }));
  });

  constructor() {
    // The page's settings (loaded once by the page): taken while nothing is being edited here.
    effect(() => {
      const settings = this.settings();
      untracked(() => {
        if (settings && !this.dirty()) this.apply(settings);
      });
    });
  }

  protected setNoCap(cap: BudgetCapName, noCap: boolean): void {
    this.edit((d) => {
      const current = d.caps[cap];
      const saved = this.saved()?.budget[cap];
      d.caps[cap] = {
        noCap,
        // Back from "No cap": start from the saved amount, if there was one.
        amount:
          !noCap && !current.amount && typeof saved === 'number'
            ? String(saved)
            : current.amount,
      };
    });
  }

  protected setAmount(cap: BudgetCapName, amount: string): void {
    this.edit((d) => (d.caps[cap] = { ...d.caps[cap], amount }));
  }

  protected setPrice(index: number, key: keyof PriceDraft, value: string) {
    this.edit((d) => (d.prices[index] = { ...d.prices[index], [key]: value }));
  }

  protected addRow(from?: ModelPrice): void {
    this.edit((d) =>
      d.prices.push(
        from
          ? priceDraft(from)
          : priceDraft({ model: '', inputPerMTok: 0, outputPerMTok: 0 }),
      ),
    );
  }

  protected removeRow(index: number): void {
    this.edit((d) => d.prices.splice(index, 1));
  }

  protected setLimit(source: UsageSource, value: string): void {
    this.edit((d) => (d.limits[source] = value));
  }

  protected setTelegramChat(value: string): void {
    this.edit((d) => (d.telegramChat = value));
  }

  protected discard(): void {
    const saved = this.saved();
    if (saved) this.draft.set(budgetDraftFrom(saved));
    this.saveError.set(null);
  }

  protected save(): void {
    if (!this.canSave()) return;
    this.saving.set(true);
    this.saveError.set(null);
    this.api.updateSettings(this.changes()).subscribe({
      next: (settings) => {
        this.saving.set(false);
        this.apply(settings);
        this.savedNote.set(true);
      },
      error: (error: unknown) => {
        this.saving.set(false);
        this.saveError.set(
          inlineErrorMessage(error, 'Saving failed. Try again.'),
        );
      },
    });
  }

  private apply(settings: AppSettingsView): void {
    this.saved.set(settings);
    this.draft.set(budgetDraftFrom(settings));
  }

  private edit(change: (draft: BudgetDraft) => void): void {
    const draft = this.draft();
    if (!draft) return;
    const next: BudgetDraft = {
      ...draft,
      caps: { ...draft.caps },
      prices: [...draft.prices],
      limits: { ...draft.limits },
    };
    change(next);
    this.draft.set(next);
    this.saveError.set(null);
    this.savedNote.set(false);
  }
}
