import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotificationMessage } from '../../../domain/notifications/notification-message.ts';
import { silentLogger } from '../../../runtime/logger.ts';
import { startChatGatewayTestServer, type ChatGatewayTestServer } from '../../../test/support/chat-gateway-test-server.ts';
import type { SmsSettings } from '../notification-config.ts';
import { createSmsChannel, fillTemplate } from './sms-channel.ts';

// Characters each escaping must get right: & = + # " \ a line break, and non-ASCII.
const short = 'Truck "7" left Depot #2 & Süd = 5+ min\nback slash \\ end';
const message: NotificationMessage = { subject: 's', text: 't', html: '<p>h</p>', short, url: 'https://fleet.example.com/map' };
const phone = '+4915112345678';
let gateway: ChatGatewayTestServer;

beforeAll(async () => {
  gateway = await startChatGatewayTestServer();
});
afterAll(() => gateway.close());

function sms(settings: Omit<SmsSettings, 'contentType'> & { contentType?: string }) {
  return createSmsChannel({ contentType: 'application/x-www-form-urlencoded', ...settings }, { timeoutMs: 5000, log: silentLogger });
}

describe('SMS channel', () => {
  it('GETs the URL template with {phone} and {message} URL-encoded', async () => {
    const channel = sms({ url: `${gateway.url}/sms/send?to={phone}&text={message}&sender=Fleet`, authorization: 'Bearer sms-secret' });
    expect(await channel.send({ phone }, message)).toEqual({ outcome: 'sent' });
    const request = gateway.sms.requests.at(-1)!;
    expect(request).toMatchObject({ method: 'GET', path: '/sms/send', authorization: 'Bearer sms-secret', body: '' });
    expect(request.query).toEqual({ to: phone, text: short, sender: 'Fleet' });
  });

  it('replaces placeholders in the path too', async () => {
    const channel = sms({ url: `${gateway.url}/sms/{phone}/messages?text={message}` });
    expect(await channel.send({ phone }, message)).toEqual({ outcome: 'sent' });
    expect(gateway.sms.requests.at(-1)).toMatchObject({ path: `/sms/${encodeURIComponent(phone)}/messages`, query: { text: short } });
  });

  it('POSTs a JSON body template with the values JSON-escaped', async () => {
    const channel = sms({ url: `${gateway.url}/sms/json`, body: '{"to": "{phone}", "text": "{message}", "from": "Fleet"}', contentType: 'application/json' });
    expect(await channel.send({ phone }, message)).toEqual({ outcome: 'sent' });
    const request = gateway.sms.requests.at(-1)!;
    expect(request).toMatchObject({ method: 'POST', contentType: 'application/json' });
    expect(JSON.parse(request.body)).toEqual({ to: phone, text: short, from: 'Fleet' });
  });

  it('POSTs a form body template with the values form-encoded', async () => {
    const channel = sms({ url: `${gateway.url}/sms/form`, body: 'to={phone}&body={message}&from=Fleet' });
    expect(await channel.send({ phone }, message)).toEqual({ outcome: 'sent' });
    const request = gateway.sms.requests.at(-1)!;
    expect(request).toMatchObject({ method: 'POST', contentType: 'application/x-www-form-urlencoded' });
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({ to: phone, body: short, from: 'Fleet' });
  });

  it('retries a 500 and a 429 (after its Retry-After), fails for good on another 4xx with the status and the body', async () => {
    const channel = sms({ url: `${gateway.url}/sms/send?to={phone}&text={message}` });
    gateway.sms.failNext(500, 1, 'upstream operator down');
    expect(await channel.send({ phone }, message)).toEqual({ outcome: 'retry', error: 'SMS gateway answered 500: upstream operator down' });
    gateway.sms.failNext(429, 1, 'slow down', { 'retry-after': '30' });
    expect(await channel.send({ phone }, message)).toEqual({ outcome: 'retry', error: 'SMS gateway answered 429: slow down', retryAfterMs: 30_000 });
    gateway.sms.failNext(400, 1, '{"error":"invalid number"}');
    expect(await channel.send({ phone: '+1' }, message)).toEqual({ outcome: 'failed', error: 'SMS gateway answered 400: {"error":"invalid number"}' });
    expect(await channel.send({ phone }, message)).toEqual({ outcome: 'sent' });
  });

  it('retries when the gateway cannot be reached', async () => {
    const closed = await startChatGatewayTestServer();
    await closed.close();
    const channel = sms({ url: `${closed.url}/sms/send?to={phone}&text={message}` });
    expect(await channel.send({ phone }, message)).toMatchObject({ outcome: 'retry', error: expect.stringContaining('ECONNREFUSED') });
  });
});

describe('fillTemplate', () => {
  it('replaces each placeholder once, so a value holding a placeholder stays as it is', () => {
    expect(fillTemplate('{phone}:{message}:{phone}', { phone: '+1', message: 'say {phone}' }, (v) => v)).toBe('+1:say {phone}:+1');
  });
});
