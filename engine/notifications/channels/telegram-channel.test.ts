import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotificationMessage } from '../../../domain/notifications/notification-message.ts';
import { createLogger } from '../../../runtime/logger.ts';
import { startChatGatewayTestServer, type ChatGatewayTestServer } from '../../../test/support/chat-gateway-test-server.ts';
import type { ChannelSender } from './channel.ts';
import { createTelegramChannel } from './telegram-channel.ts';

const message: NotificationMessage = {
  subject: 'Truck 7 entered Depot North',
  text: 'Truck 7 entered Depot North at 14:02.',
  html: '<p>Truck 7 entered Depot North at 14:02.</p>',
  short: 'Truck 7 entered Depot North at 14:02',
  url: 'https://fleet.example.com/map?vehicle=356307042441013',
};

const logLines: string[] = [];
const log = createLogger('debug', (line) => logLines.push(line));
let gateway: ChatGatewayTestServer;
let channel: ChannelSender;

beforeAll(async () => {
  gateway = await startChatGatewayTestServer();
  gateway.telegram.chats.add('424242');
  gateway.telegram.chats.add('-1001234567890');
  channel = createTelegramChannel({ token: gateway.telegram.token, apiUrl: gateway.url }, { timeoutMs: 5000, log });
});
afterAll(async () => {
  await channel.close();
  await gateway.close();
});

describe('Telegram channel', () => {
  it('sends the short text and the link to the chat, without a link preview', async () => {
    expect(await channel.send({ telegramChatId: '424242' }, message)).toEqual({ outcome: 'sent' });
    expect(await channel.send({ telegramChatId: '-1001234567890' }, { ...message, url: undefined })).toEqual({ outcome: 'sent' });
    expect(gateway.telegram.messages.slice(-2)).toEqual([
      { chat_id: '424242', text: `${message.short}\n${message.url}`, disable_web_page_preview: true },
      { chat_id: '-1001234567890', text: message.short, disable_web_page_preview: true },
    ]);
  });

  it('retries a 429 after the retry_after the Bot API gives', async () => {
    gateway.telegram.throttleNext(3);
    expect(await channel.send({ telegramChatId: '424242' }, message)).toEqual({
      outcome: 'retry',
      error: 'Telegram answered 429: Too Many Requests: retry after 3',
      retryAfterMs: 3000,
    });
  });

  it('retries a 5xx', async () => {
    gateway.telegram.failNext(502);
    expect(await channel.send({ telegramChatId: '424242' }, message)).toMatchObject({ outcome: 'retry', error: expect.stringContaining('502') });
  });

  it('fails for good, with the Bot API\'s description, when the chat is unknown or blocked the bot', async () => {
    expect(await channel.send({ telegramChatId: '777' }, message)).toEqual({ outcome: 'failed', error: 'Telegram answered 400: Bad Request: chat not found' });
    gateway.telegram.blocked.add('888');
    gateway.telegram.chats.add('888');
    expect(await channel.send({ telegramChatId: '888' }, message)).toEqual({ outcome: 'failed', error: 'Telegram answered 403: Forbidden: bot was blocked by the user' });
  });

  it('never puts the bot token in an error or a log line', async () => {
    const wrongToken = createTelegramChannel({ token: '999:AAwrongwrongwrong', apiUrl: gateway.url }, { timeoutMs: 5000, log });
    const refused = await wrongToken.send({ telegramChatId: '424242' }, message);
    expect(refused).toEqual({ outcome: 'failed', error: 'Telegram answered 401: Unauthorized' });
    const closed = await startChatGatewayTestServer();
    await closed.close();
    const unreachable = createTelegramChannel({ token: gateway.telegram.token, apiUrl: closed.url }, { timeoutMs: 2000, log });
    const lost = await unreachable.send({ telegramChatId: '424242' }, message);
    expect(lost).toMatchObject({ outcome: 'retry', error: expect.stringContaining('ECONNREFUSED') });
    expect(logLines.some((line) => line.includes('TELEGRAM_BOT_TOKEN'))).toBe(true);
    for (const text of [...logLines, JSON.stringify(refused), JSON.stringify(lost)]) {
      expect(text).not.toContain(gateway.telegram.token);
      expect(text).not.toContain('AAwrongwrongwrong');
    }
  });
});
