// A stand-in for a Baileys socket, loaded by the built server through
// WHATSAPP_SOCKET_MODULE (see whatsapp.spec.ts). Plain CommonJS: the server
// `require`s it as is.
//
// - On creation it shows a QR code at once (`connection.update` with `qr`).
// - "Scanning" it: the test writes a phone number (digits) to the file named by
//   FAKE_WHATSAPP_SCAN_FILE; the fake sees it within ~50 ms, deletes it, saves a
//   `creds.json` in the auth dir (as Baileys would) and opens as that number.
// - A socket made while `creds.json` exists (a saved session) opens without a QR.
// - Dropping it: while open, the test writes a Baileys close code (e.g. 408, 401)
//   to the file named by FAKE_WHATSAPP_CLOSE_FILE; the fake closes with it.
// - Receiving: while open, the test writes a JSON list of `{ id, from, name, text }`
//   (`from`: the sender's digits) to the file named by FAKE_WHATSAPP_INBOX_FILE; the
//   fake delivers them as one `messages.upsert` (`notify`), sent now.
// - Sending: each sendMessage appends `{ jid, text }` as a JSON line to the file
//   named by FAKE_WHATSAPP_SENT_FILE.
'use strict';

const { EventEmitter } = require('node:events');
const {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} = require('node:fs');
const { join } = require('node:path');

const SCAN_POLL_MS = 50;

function boom(statusCode) {
  return Object.assign(new Error(`Connection Failure (${statusCode})`), {
    isBoom: true,
    output: { statusCode },
  });
}

class FakeWhatsAppSocket extends EventEmitter {
  constructor(options) {
    super();
    this.ev = this;
    this.user = null;
    this.authDir = options.authDir;
    this.ended = false;
    this.timer = null;
    // The service subscribes right after createSocket resolves: announce once it listens.
    const onListener = (event) => {
      if (event !== 'connection.update') return;
      this.off('newListener', onListener);
      process.nextTick(() => this.start());
    };
    this.on('newListener', onListener);
  }

  start() {
    if (this.ended) return;
    const creds = join(this.authDir, 'creds.json');
    if (existsSync(creds)) {
      this.open(JSON.parse(readFileSync(creds, 'utf8')).phone);
      return;
    }
    this.emit('connection.update', {
      connection: 'connecting',
      qr: `2@fake-${Date.now().toString(36)},fake-key,fake-secret`,
    });
    const scanFile = process.env.FAKE_WHATSAPP_SCAN_FILE;
    if (!scanFile) return;
    this.timer = setInterval(() => {
      if (this.ended || !existsSync(scanFile)) return;
      const phone = readFileSync(scanFile, 'utf8').trim();
      rmSync(scanFile, { force: true });
      clearInterval(this.timer);
      this.timer = null;
      mkdirSync(this.authDir, { recursive: true });
      writeFileSync(
        join(this.authDir, 'creds.json'),
        JSON.stringify({ phone }),
      );
      this.open(phone);
    }, SCAN_POLL_MS);
  }

  open(phone) {
    this.user = { id: `${phone}:12@s.whatsapp.net`, lid: null };
    this.emit('connection.update', { connection: 'open' });
    const inboxFile = process.env.FAKE_WHATSAPP_INBOX_FILE;
    if (inboxFile) {
      this.inboxTimer = setInterval(() => {
        if (this.ended || !existsSync(inboxFile)) return;
        const list = JSON.parse(readFileSync(inboxFile, 'utf8'));
        rmSync(inboxFile, { force: true });
        this.emit('messages.upsert', {
          type: 'notify',
          messages: list.map((m) => ({
            key: {
              remoteJid: `${m.from}@s.whatsapp.net`,
              fromMe: false,
              id: m.id,
            },
            messageTimestamp: Math.floor(Date.now() / 1000),
            pushName: m.name,
            message: { conversation: m.text },
          })),
        });
      }, SCAN_POLL_MS);
    }
    const closeFile = process.env.FAKE_WHATSAPP_CLOSE_FILE;
    if (!closeFile) return;
    this.timer = setInterval(() => {
      if (this.ended || !existsSync(closeFile)) return;
      const code = Number(readFileSync(closeFile, 'utf8').trim());
      rmSync(closeFile, { force: true });
      this.end();
      this.emit('connection.update', {
        connection: 'close',
        lastDisconnect: { error: boom(code), date: new Date() },
      });
    }, SCAN_POLL_MS);
  }

  async sendMessage(jid, content) {
    const sentFile = process.env.FAKE_WHATSAPP_SENT_FILE;
    if (sentFile)
      appendFileSync(
        sentFile,
        `${JSON.stringify({ jid, text: content && content.text })}\n`,
      );
    return {
      key: {
        id: `3EB0${require('node:crypto').randomBytes(8).toString('hex').toUpperCase()}`,
      },
    };
  }

  async logout() {
    this.end();
    this.emit('connection.update', {
      connection: 'close',
      lastDisconnect: { error: boom(401), date: new Date() },
    });
  }

  end() {
    this.ended = true;
    if (this.timer) clearInterval(this.timer);
    if (this.inboxTimer) clearInterval(this.inboxTimer);
    this.timer = null;
    this.inboxTimer = null;
  }
}

exports.createSocket = (options) => new FakeWhatsAppSocket(options);
