import webPush from 'web-push';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../runtime/logger.ts';
import type { NotificationConfig } from '../notification-config.ts';
import { createChannels } from './create-channels.ts';

const delivery = { retryDelaysMs: [1000], timeoutMs: 1000, concurrency: 2, deliveryRetentionMs: 86_400_000, reportCheckMs: 60_000 };

describe('createChannels', () => {
  it('makes a sender for each configured channel only', async () => {
    expect(createChannels(delivery, silentLogger)).toEqual({});
    const keys = webPush.generateVAPIDKeys();
    const config: NotificationConfig = {
      ...delivery,
      email: { url: 'smtp://127.0.0.1:2525', from: 'fleet@example.com', requireTls: false },
      push: { ...keys, subject: 'mailto:ops@example.com', allowPrivate: false },
      telegram: { token: '1:abc', apiUrl: 'http://127.0.0.1:8081' },
      sms: { url: 'http://127.0.0.1:8082/?to={phone}&m={message}', contentType: 'application/x-www-form-urlencoded' },
    };
    const all = createChannels(config, silentLogger);
    expect(Object.entries(all).map(([name, sender]) => [name, sender.channel])).toEqual([
      ['email', 'email'], ['push', 'push'], ['telegram', 'telegram'], ['sms', 'sms'],
    ]);
    await Promise.all(Object.values(all).map((sender) => sender.close()));
    const { email: _email, push: _push, ...chatOnly } = config;
    expect(Object.keys(createChannels(chatOnly, silentLogger))).toEqual(['telegram', 'sms']);
  });
});
