import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../runtime/logger.ts';
import { selfSignedCertificate, startSmtpTestServer, type SmtpTestServer } from '../../../test/support/smtp-test-server.ts';
import type { NotificationMessage } from '../../../domain/notifications/notification-message.ts';
import type { ChannelSender } from './channel.ts';
import { createEmailChannel } from './email-channel.ts';

const message: NotificationMessage = {
  subject: 'Truck 7 entered Depot North',
  text: 'Truck 7 entered Depot North at 14:02.',
  html: '<p>Truck 7 entered <b>Depot North</b> at 14:02.</p>',
  short: 'Truck 7 entered Depot North',
  attachments: [{ filename: 'trips.csv', content: 'vehicle,start,end\nTruck 7,08:00,09:15\n', contentType: 'text/csv' }],
};

const certificate = selfSignedCertificate();
let server: SmtpTestServer | undefined;
let channel: ChannelSender | undefined;

afterEach(async () => {
  await channel?.close();
  await server?.close();
  channel = server = undefined;
});

function emailChannel(url: string, extra: { requireTls?: boolean; ca?: string; timeoutMs?: number } = {}): ChannelSender {
  return createEmailChannel(
    { url, from: 'Fleet <fleet@example.com>', requireTls: extra.requireTls ?? false },
    { timeoutMs: extra.timeoutMs ?? 5000, concurrency: 2, log: silentLogger, ...(extra.ca ? { tls: { ca: extra.ca } } : {}) },
  );
}

describe('email channel', () => {
  it('sends the subject, text, HTML and attachments from SMTP_FROM to the recipient', async () => {
    server = await startSmtpTestServer();
    channel = emailChannel(server.url);
    expect(await channel.send({ email: 'ops@example.com' }, message)).toEqual({ outcome: 'sent' });
    expect(server.received).toHaveLength(1);
    const [{ from, to, secure, mail }] = server.received as [SmtpTestServer['received'][number]];
    expect({ from, to, secure }).toEqual({ from: 'fleet@example.com', to: ['ops@example.com'], secure: false });
    expect(mail.from?.text).toBe('"Fleet" <fleet@example.com>');
    expect(mail.subject).toBe(message.subject);
    expect(mail.text?.trim()).toBe(message.text);
    expect(mail.html).toBe(message.html);
    expect(mail.attachments.map((a) => [a.filename, a.contentType, a.content.toString('utf8')])).toEqual([
      ['trips.csv', 'text/csv', message.attachments![0]!.content],
    ]);
  });

  it.skipIf(!certificate)('upgrades with STARTTLS when the server offers it, and logs in over it', async () => {
    server = await startSmtpTestServer({ tls: certificate!, login: { user: 'fleet', pass: 'p@ss word' } });
    channel = emailChannel(server.url, { ca: certificate!.cert });
    expect(await channel.send({ email: 'ops@example.com' }, message)).toEqual({ outcome: 'sent' });
    expect(server.received.map((m) => [m.secure, m.user])).toEqual([[true, 'fleet']]);
  });

  it.skipIf(!certificate)('speaks TLS from the first byte to smtps://', async () => {
    server = await startSmtpTestServer({ tls: certificate!, implicitTls: true });
    expect(server.url).toMatch(/^smtps:/);
    channel = emailChannel(server.url, { ca: certificate!.cert });
    expect(await channel.send({ email: 'ops@example.com' }, message)).toEqual({ outcome: 'sent' });
    expect(server.received.map((m) => m.secure)).toEqual([true]);
  });

  it.skipIf(!certificate)('retries, rather than sends in the clear, when TLS is required and the certificate is not trusted', async () => {
    server = await startSmtpTestServer({ tls: certificate! });
    channel = emailChannel(server.url, { requireTls: true });
    expect(await channel.send({ email: 'ops@example.com' }, message)).toMatchObject({ outcome: 'retry', error: expect.stringMatching(/self-signed certificate/) });
    expect(server.received).toHaveLength(0);
  });

  it('with SMTP_REQUIRE_TLS, sends nothing to a server that does not offer STARTTLS', async () => {
    server = await startSmtpTestServer();
    channel = emailChannel(server.url, { requireTls: true });
    expect(await channel.send({ email: 'ops@example.com' }, message)).toMatchObject({ outcome: 'retry', error: expect.stringMatching(/STARTTLS/i) });
    expect(server.received).toHaveLength(0);
  });

  it('retries a 451 answer and fails for good on a 550', async () => {
    server = await startSmtpTestServer();
    channel = emailChannel(server.url);
    server.refuseNext(451);
    const later = await channel.send({ email: 'ops@example.com' }, message);
    expect(later).toMatchObject({ outcome: 'retry', error: expect.stringContaining('451') });
    server.refuseNext(550);
    const never = await channel.send({ email: 'nobody@example.com' }, message);
    expect(never).toMatchObject({ outcome: 'failed', error: expect.stringContaining('550') });
    expect(await channel.send({ email: 'ops@example.com' }, message)).toEqual({ outcome: 'sent' });
    expect(server.received.map((m) => m.to)).toEqual([['ops@example.com']]);
  });

  it('retries when the mail server cannot be reached', async () => {
    server = await startSmtpTestServer();
    const url = server.url;
    await server.close();
    server = undefined;
    channel = emailChannel(url, { timeoutMs: 2000 });
    expect(await channel.send({ email: 'ops@example.com' }, message)).toMatchObject({ outcome: 'retry', error: expect.stringMatching(/ECONNREFUSED|ECONNECTION|ESOCKET/) });
  });
});
