// Prompt budget (issue 13): the system prompt + the tool schemas of one model request, exactly as the OpenAI
// adapter sends them (captured at the fake LLM upstream, not re-derived), counted with gpt-tokenizer (o200k_base).
// Every feature on: a Brave key, an image model, WhatsApp connected (fake socket), Pulse enabled, two email
// accounts (GreenMail) and a calendar account (Radicale) on loopback; a fresh
// install otherwise (default core instruction and database documentation, no memory, no Pulse notes).
// Rows: an owner chat's first request (the default mode), one row per mode (the chat switched there by the owner),
// a cron job run, a pulse, an auto-reply to an untrusted and a trusted contact, each with issue 13's budget; then
// the size of each tool's schema, largest first. Any row over its budget fails the bench (exit 1).
// Alone: TS_NODE_PROJECT=apps/api/tsconfig.app.json TS_NODE_TRANSPILE_ONLY=true
//   node -r ts-node/register -r ./tools/bench/register-paths.cjs tools/bench/prompt-budget.bench.ts
import 'reflect-metadata';
import { encode } from 'gpt-tokenizer';
import { incoming } from '../../apps/api/test/support/fake-whatsapp-socket';
import {
  startFakeLlmServer,
  type FakeLlmServer,
  type FakeRecordedRequest,
} from '../fake-llm/fake-llm-server';
import { startGreenMail, startRadicale } from '../mail-servers/mail-servers';
import { startBenchAppWithWhatsApp } from './in-process-app';

/** Issue 13's budgets (system prompt + tool schemas, o200k_base); `enforced` rows fail the bench when over. */
const BUDGETS = {
  chat: 2_500,
  anyMode: 3_000,
  pulse: 3_500,
  autoReply: 1_500,
};

const WAIT_MS = 30_000;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

interface Measured {
  system: number;
  tools: number;
  toolNames: string[];
  request: FakeRecordedRequest;
}

/** The system prompt and tools of one captured chat-completions request, in tokens. */
function measure(request: FakeRecordedRequest): Measured {
  const messages = (request.body?.messages ?? []) as Array<{
    role: string;
    content: unknown;
  }>;
  const system = messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) =>
      typeof m.content === 'string' ? m.content : JSON.stringify(m.content),
    )
    .join('\n');
  const tools = (request.body?.tools ?? []) as Array<{
    function: { name: string };
  }>;
  return {
    system: system ? encode(system).length : 0,
    tools: tools.length ? encode(JSON.stringify(tools)).length : 0,
    toolNames: tools.map((t) => t.function.name),
    request,
  };
}

/** Runs `action`, then waits for the first model request it caused that carries a system prompt. */
async function capture(
  fake: FakeLlmServer,
  action: () => Promise<unknown>,
  label: string,
): Promise<Measured> {
  const before = fake.openai.requests.length;
  await action();
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const found = fake.openai.requests
      .slice(before)
      .find((r) =>
        ((r.body?.messages ?? []) as Array<{ role: string }>).some(
          (m) => m.role === 'system' || m.role === 'developer',
        ),
      );
    if (found) return measure(found);
    if (Date.now() > deadline)
      throw new Error(`${label}: no model request within ${WAIT_MS} ms`);
    await sleep(20);
  }
}

async function main(): Promise<void> {
  const fake = await startFakeLlmServer();
  fake.openai.fallback = { text: ['Done.'] };
  const api = await startBenchAppWithWhatsApp(fake);
  const mail = await startGreenMail([
    { login: 'work', password: 'bench-work-pw' },
    { login: 'home', password: 'bench-home-pw' },
  ]);
  const dav = await startRadicale([{ login: 'cal', password: 'bench-cal-pw' }]);
  try {
    // Two email accounts (so select_account is offered and the prompt lists both) and a calendar.
    for (const user of mail.users) {
      const server = (port: number) => ({
        host: mail.host,
        port,
        secure: false,
        user: user.login,
        password: user.password,
      });
      await api.call('POST', '/api/accounts', {
        kind: 'email',
        name: user.login,
        address: user.address,
        imap: server(mail.imapPort),
        smtp: server(mail.smtpPort),
      });
    }
    await api.call('POST', '/api/accounts', {
      kind: 'calendar',
      name: 'Calendar',
      url: dav.url,
      user: 'cal',
      password: 'bench-cal-pw',
      secure: false,
    });
    // Every feature on.
    await api.call('PATCH', '/api/settings', {
      braveApiKey: 'BSA-bench-0000000000000000',
      imageModel: 'gpt-image-1',
    });
    await api.call('PATCH', '/api/pulse', {
      enabled: true,
      activeDays: [1, 2, 3, 4, 5, 6, 0],
      pulsesPerDay: 12,
    });
    const contacts = [
      { phone: '14155550101', name: 'Untrusted Contact', trusted: false },
      { phone: '14155550102', name: 'Trusted Contact', trusted: true },
    ];
    for (const c of contacts)
      await api.call('POST', '/api/whatsapp/permissions', {
        phoneNumber: c.phone,
        displayName: c.name,
        canRead: true,
        canReply: true,
        trusted: c.trusted,
      });

    const rows: Array<{
      mode: string;
      m: Measured;
      budget: number;
      enforced: boolean;
    }> = [];

    const chat = await capture(
      fake,
      async () => {
        const { id } = await api.call<{ id: string }>('POST', '/api/chats', {});
        const res = await fetch(`${api.url}/api/chats/${id}/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', cookie: api.cookie },
          body: JSON.stringify({ content: 'Hello, what can you do?' }),
        });
        await res.text();
      },
      'chat',
    );
    rows.push({
      mode: 'owner chat, first request (default mode)',
      m: chat,
      budget: BUDGETS.chat,
      enforced: true,
    });
    // Every mode, as an owner chat in it sends its next request.
    const { modes } = await api.call<{ modes: { name: string }[] }>(
      'GET',
      '/api/tools',
    );
    const toolsSeen = new Map<string, number>();
    for (const { name } of modes) {
      const { id } = await api.call<{ id: string }>('POST', '/api/chats', {});
      await api.call('PATCH', `/api/chats/${id}`, { mode: name });
      const row = await capture(
        fake,
        async () => {
          const res = await fetch(`${api.url}/api/chats/${id}/messages`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', cookie: api.cookie },
            body: JSON.stringify({ content: 'Hello, what can you do?' }),
          });
          await res.text();
        },
        `mode ${name}`,
      );
      for (const t of (row.request.body?.tools ?? []) as Array<{
        function: { name: string };
      }>)
        toolsSeen.set(t.function.name, encode(JSON.stringify(t)).length);
      rows.push({
        mode: `mode ${name}`,
        m: row,
        budget: BUDGETS.anyMode,
        enforced: true,
      });
    }

    const job = await api.call<{ id: string }>('POST', '/api/cronjobs', {
      name: 'Budget job',
      instruction: 'Summarise the schedule for today.',
      cronExpression: '0 3 * * *',
    });
    const cron = await capture(
      fake,
      () => api.call('POST', `/api/cronjobs/${job.id}/run`),
      'cron job run',
    );
    rows.push({
      mode: 'cron job run',
      m: cron,
      budget: BUDGETS.anyMode,
      enforced: true,
    });

    const pulse = await capture(
      fake,
      () => api.call('POST', '/api/pulse/run'),
      'pulse',
    );
    rows.push({
      mode: 'pulse',
      m: pulse,
      budget: BUDGETS.pulse,
      enforced: true,
    });

    for (const [i, c] of contacts.entries()) {
      const reply = await capture(
        fake,
        async () =>
          api.socket.upsert([
            incoming({
              id: `budget-${i}`,
              from: `${c.phone}@s.whatsapp.net`,
              text: 'Hi, are you free tomorrow?',
              at: Date.now(),
            }),
          ]),
        `auto-reply (${c.name})`,
      );
      rows.push({
        mode: `auto-reply, ${c.trusted ? 'trusted' : 'untrusted'} contact`,
        m: reply,
        budget: BUDGETS.autoReply,
        enforced: true,
      });
    }

    console.log(
      'Prompt budget: system prompt + tool schemas per request, o200k_base tokens, every feature on ' +
        '(Brave key, image model, WhatsApp connected, Pulse enabled; default instruction, no memory). ' +
        "Each request offers the meta tools and one mode's tools. Any row over its budget fails the bench.",
    );
    const width = Math.max(...rows.map((r) => r.mode.length));
    let failed = false;
    for (const r of rows) {
      const total = r.m.system + r.m.tools;
      const over = total > r.budget;
      if (over && r.enforced) failed = true;
      console.log(
        `  ${r.mode.padEnd(width)}  system ${String(r.m.system).padStart(5)}  tools ${String(r.m.tools).padStart(5)} (${String(r.m.toolNames.length).padStart(2)})  total ${String(total).padStart(5)}  budget ${String(r.budget).padStart(5)}  ${over ? (r.enforced ? 'OVER BUDGET (fails)' : 'over budget') : 'ok'}`,
      );
    }

    // Per tool, as sent in the requests of the modes.
    const sizes = [...toolsSeen]
      .map(([name, tokens]) => ({ name, tokens }))
      .sort((a, b) => b.tokens - a.tokens);
    console.log(`Tool schemas across the modes (${sizes.length} tools):`);
    const nameWidth = Math.max(...sizes.map((s) => s.name.length));
    for (const s of sizes)
      console.log(
        `  ${s.name.padEnd(nameWidth)}  ${String(s.tokens).padStart(5)} tokens`,
      );
    if (failed) {
      console.log('A request is over its budget.');
      process.exitCode = 1;
    }
  } finally {
    await api.close();
    await fake.close();
    await Promise.all([mail.stop(), dav.stop()]);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
