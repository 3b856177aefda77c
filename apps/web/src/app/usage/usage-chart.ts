import {
  ChangeDetectionStrategy,
  Component,
  DestroyRef,
  type ElementRef,
  afterRenderEffect,
  computed,
  inject,
  input,
  viewChild,
} from '@angular/core';
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  Tooltip,
} from 'chart.js';
import type { UsageDay } from '@metatronos/shared-types';

Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  LinearScale,
  Tooltip,
  Legend,
);

/** `2026-03-02` → `Mar 2` (the day is a calendar date: no time zone shift). */
export function shortDay(day: string): string {
  const [year, month, date] = day.split('-').map(Number);
  return new Date(Date.UTC(year, month - 1, date)).toLocaleDateString('en-US', {
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });
}

/** What the chart shows, in words (the canvas's accessible name). */
export function describeDays(days: readonly UsageDay[]): string {
  if (!days.length) return 'No days to show.';
  const busiest = days.reduce((a, b) =>
    b.inputTokens + b.outputTokens > a.inputTokens + a.outputTokens ? b : a,
  );
  const total = (d: UsageDay) => d.inputTokens + d.outputTokens;
  const range = `${shortDay(days[0].day)} to ${shortDay(days[days.length - 1].day)}`;
  if (total(busiest) === 0)
    return `Tokens per day from ${range}: none recorded.`;
  return `Tokens per day from ${range}, input and output stacked. Busiest day: ${shortDay(busiest.day)} with ${total(busiest).toLocaleString('en-US')} tokens.`;
}

/** Stacked bars of input and output tokens per day (Chart.js), in the theme's colours, light or dark. */
@Component({
  selector: 'mt-usage-chart',
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    <div class="frame">
      <canvas
        #canvas
        role="img"
        data-testid="usage-chart"
        [attr.aria-label]="description()"
      ></canvas>
    </div>
    <span #inputSwatch class="swatch input" aria-hidden="true"></span>
    <span #outputSwatch class="swatch output" aria-hidden="true"></span>
    <span #textSwatch class="swatch text" aria-hidden="true"></span>
    <span #gridSwatch class="swatch grid" aria-hidden="true"></span>
  `,
  styles: `
    :host {
      display: block;
    }
    .frame {
      position: relative;
      height: 260px;
    }
    .swatch {
      display: none;
    }
    .input {
      color: var(--mat-sys-primary);
    }
    .output {
      color: var(--mat-sys-tertiary);
    }
    .text {
      color: var(--mat-sys-on-surface-variant);
    }
    .grid {
      color: var(--mat-sys-outline-variant);
    }
  `,
})
export class UsageChart {
  readonly days = input.required<readonly UsageDay[]>();

  protected readonly description = computed(() => describeDays(this.days()));

  private readonly canvas =
    viewChild.required<ElementRef<HTMLCanvasElement>>('canvas');
  private readonly inputSwatch =
    viewChild.required<ElementRef<HTMLElement>>('inputSwatch');
  private readonly outputSwatch =
    viewChild.required<ElementRef<HTMLElement>>('outputSwatch');
  private readonly textSwatch =
    viewChild.required<ElementRef<HTMLElement>>('textSwatch');
  private readonly gridSwatch =
    viewChild.required<ElementRef<HTMLElement>>('gridSwatch');
  private chart: Chart<'bar'> | null = null;

  constructor() {
    afterRenderEffect(() => this.draw(this.days()));
    // The theme follows the OS: draw again in the other scheme's colours.
    const scheme =
      typeof matchMedia === 'function'
        ? matchMedia('(prefers-color-scheme: dark)')
        : null;
    const redraw = () => this.draw(this.days());
    scheme?.addEventListener('change', redraw);
    inject(DestroyRef).onDestroy(() => {
      scheme?.removeEventListener('change', redraw);
      this.chart?.destroy();
    });
  }

  /** A CSS colour as the browser resolved it (the theme's tokens are light-dark() values). */
  private colorOf(swatch: ElementRef<HTMLElement>): string {
    return getComputedStyle(swatch.nativeElement).color || '#888';
  }

  private draw(days: readonly UsageDay[]): void {
    const context = this.canvas().nativeElement.getContext('2d');
    if (!context) return; // no canvas (unit tests)
    const input = this.colorOf(this.inputSwatch());
    const output = this.colorOf(this.outputSwatch());
    const text = this.colorOf(this.textSwatch());
    const grid = this.colorOf(this.gridSwatch());
    this.chart?.destroy();
    this.chart = new Chart(context, {
      type: 'bar',
      data: {
        labels: days.map((d) => shortDay(d.day)),
        datasets: [
          {
            label: 'Input tokens',
            data: days.map((d) => d.inputTokens),
            backgroundColor: input,
            stack: 'tokens',
          },
          {
            label: 'Output tokens',
            data: days.map((d) => d.outputTokens),
            backgroundColor: output,
            stack: 'tokens',
          },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        color: text,
        scales: {
          x: {
            stacked: true,
            ticks: { color: text, maxRotation: 0, autoSkip: true },
            grid: { display: false },
          },
          y: {
            stacked: true,
            beginAtZero: true,
            ticks: { color: text },
            grid: { color: grid },
          },
        },
        plugins: {
          legend: { labels: { color: text } },
          tooltip: {
            callbacks: {
              label: (item) =>
                `${item.dataset.label}: ${Number(item.raw).toLocaleString('en-US')}`,
            },
          },
        },
      },
    });
  }
}
