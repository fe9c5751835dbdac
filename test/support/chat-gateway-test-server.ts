import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A sendMessage call the fake Bot API accepted. */
export interface TelegramMessage {
  chat_id: string | number;
  text: string;
  disable_web_page_preview?: boolean;
}

/** One request the fake SMS gateway got, as it came. */
export interface SmsRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string | undefined;
  authorization: string | undefined;
  body: string;
}

export interface ChatGatewayTestServer {
  /** The base URL: TELEGRAM_API_URL as it is; the SMS gateway answers every path under /sms. */
  url: string;
  telegram: {
    /** The bot's token: requests with another are answered 401 Unauthorized, as the Bot API does. */
    token: string;
    messages: TelegramMessage[];
    /** Chats the bot is in: another chat id is answered 400 "chat not found". */
    chats: Set<string>;
    /** Chats whose user blocked the bot: answered 403. */
    blocked: Set<string>;
    /** The next `count` sendMessage calls are answered 429 with parameters.retry_after. */
    throttleNext(retryAfterS: number, count?: number): void;
    /** The next `count` calls are answered with this HTTP status and a Bot API error (500, 502, ...). */
    failNext(status: number, count?: number): void;
  };
  sms: {
    requests: SmsRequest[];
    /** The next `count` requests are answered with this status, body and headers (they are still recorded). */
    failNext(status: number, count?: number, body?: string, headers?: Record<string, string>): void;
  };
  close(): Promise<void>;
}

/**
 * One HTTP server on a free loopback port playing the two chat services notifications go to: the
 * Telegram Bot API's sendMessage (answers shaped as core.telegram.org/bots/api documents them) and
 * an SMS gateway that records each request. Both can be scripted to fail.
 */
export async function startChatGatewayTestServer(options: { token?: string } = {}): Promise<ChatGatewayTestServer> {
  const token = options.token ?? '123456789:AAHtestTokenForTheFakeBotApi_x-y';
  const telegramScript: Array<{ status: number; retryAfterS?: number }> = [];
  const smsScript: Array<{ status: number; body: string; headers: Record<string, string> }> = [];
  const telegram: ChatGatewayTestServer['telegram'] = {
    token,
    messages: [],
    chats: new Set(),
    blocked: new Set(),
    throttleNext(retryAfterS, count = 1) {
      for (let i = 0; i < count; i++) telegramScript.push({ status: 429, retryAfterS });
    },
    failNext(status, count = 1) {
      for (let i = 0; i < count; i++) telegramScript.push({ status });
    },
  };
  const sms: ChatGatewayTestServer['sms'] = {
    requests: [],
    failNext(status, count = 1, body = 'gateway error', headers = {}) {
      for (let i = 0; i < count; i++) smsScript.push({ status, body, headers });
    },
  };
  let nextMessageId = 1;

  function botAnswer(res: ServerResponse, status: number, answer: object): void {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  }

  function botError(res: ServerResponse, code: number, description: string, parameters?: object): void {
    botAnswer(res, code, { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) });
  }

  function handleTelegram(req: IncomingMessage, res: ServerResponse, path: string, body: string): void {
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(path);
    if (!match || match[1] !== token) return botError(res, 401, 'Unauthorized');
    if (match[2] !== 'sendMessage') return botError(res, 404, 'Not Found');
    const scripted = telegramScript.shift();
    if (scripted?.status === 429) {
      return botError(res, 429, `Too Many Requests: retry after ${scripted.retryAfterS}`, { retry_after: scripted.retryAfterS });
    }
    if (scripted) return botError(res, scripted.status, scripted.status >= 500 ? 'Internal Server Error' : 'Bad Request');
    let call: Partial<TelegramMessage>;
    try {
      call = req.headers['content-type']?.startsWith('application/json') ? (JSON.parse(body) as Partial<TelegramMessage>) : {};
    } catch {
      return botError(res, 400, 'Bad Request: can\'t parse JSON');
    }
    if (call.chat_id === undefined) return botError(res, 400, 'Bad Request: chat_id is empty');
    if (!call.text) return botError(res, 400, 'Bad Request: message text is empty');
    const chat = String(call.chat_id);
    if (telegram.blocked.has(chat)) return botError(res, 403, 'Forbidden: bot was blocked by the user');
    if (!telegram.chats.has(chat)) return botError(res, 400, 'Bad Request: chat not found');
    telegram.messages.push(call as TelegramMessage);
    botAnswer(res, 200, {
      ok: true,
      result: { message_id: nextMessageId++, from: { id: Number(token.split(':')[0]), is_bot: true, first_name: 'Fleet' }, chat: { id: Number(chat) || chat, type: 'private' }, date: Math.floor(Date.now() / 1000), text: call.text },
    });
  }

  function handleSms(req: IncomingMessage, res: ServerResponse, url: URL, body: string): void {
    sms.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      contentType: req.headers['content-type'],
      authorization: req.headers.authorization,
      body,
    });
    const scripted = smsScript.shift();
    if (scripted) res.writeHead(scripted.status, { 'content-type': 'text/plain', ...scripted.headers }).end(scripted.body);
    else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'queued', id: sms.requests.length }));
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const body = Buffer.concat(chunks).toString('utf8');
      if (url.pathname.startsWith('/sms')) handleSms(req, res, url, body);
      else handleTelegram(req, res, url.pathname, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    telegram,
    sms,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
