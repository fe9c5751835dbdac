import type { ConnectionOptions } from 'node:tls';
import { createTransport } from 'nodemailer';
import type { Logger } from '../../../runtime/logger.ts';
import type { EmailSettings } from '../notification-config.ts';
import type { ChannelAddress, ChannelResult, ChannelSender } from './channel.ts';

interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
}

/**
 * Email over SMTP (nodemailer), on a small pool of kept connections. smtp:// upgrades with STARTTLS
 * whenever the server offers it (and refuses to go on without it when requireTls); smtps:// is TLS
 * from the first byte. `tls` adds TLS options, such as a private CA (tests, closed networks).
 */
export function createEmailChannel(
  settings: EmailSettings,
  options: { timeoutMs: number; concurrency: number; log: Logger; tls?: ConnectionOptions },
): ChannelSender {
  const transport = createTransport({
    url: settings.url,
    pool: true,
    // One connection per message in flight: each carries one message at a time, five round trips
    // each, so on a busy event loop the pool's size is what bounds email's throughput (mail servers
    // take far more connections per client than this: Postfix's default is 50).
    maxConnections: options.concurrency,
    requireTLS: settings.requireTls,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
    dnsTimeout: options.timeoutMs,
    ...(options.tls ? { tls: options.tls } : {}),
  });
  return {
    channel: 'email',
    async send(address: ChannelAddress, message): Promise<ChannelResult> {
      if (!address.email) return { outcome: 'failed', error: 'no email address set' };
      try {
        await transport.sendMail({
          from: settings.from,
          to: address.email,
          subject: message.subject,
          text: message.text,
          html: message.html,
          attachments: (message.attachments ?? []).map(({ filename, content, contentType }) => ({ filename, content, contentType })),
        });
        return { outcome: 'sent' };
      } catch (error) {
        return smtpResult(error as SmtpError, options.log);
      }
    },
    async close() {
      transport.close();
    },
  };
}

/**
 * 4xx answers (greylisting, a full mailbox, a busy server), lost connections and timeouts are
 * worth another attempt; a 5xx answer to the message or its recipient (550 mailbox unknown) is not.
 * A refused login or TLS is the server's configuration, not the message's: retried, and logged.
 */
function smtpResult(error: SmtpError, log: Logger): ChannelResult {
  const code = error.responseCode;
  const reply = error.response ? oneLine(error.response) : error.message;
  if (error.code === 'EAUTH' || error.code === 'ETLS') {
    log.error('the mail server refused the login or TLS (SMTP_URL, SMTP_REQUIRE_TLS)', { code: error.code, responseCode: code });
    const what = error.code === 'ETLS' ? 'TLS (STARTTLS)' : 'the login';
    return { outcome: 'retry', error: `mail server refused ${what}: ${reply}` };
  }
  if (code !== undefined && code >= 500 && code < 600) return { outcome: 'failed', error: `mail server answered ${reply}` };
  if (code !== undefined && code >= 400 && code < 500) return { outcome: 'retry', error: `mail server answered ${reply}` };
  return { outcome: 'retry', error: `mail server: ${error.code ? `${error.code} ` : ''}${oneLine(error.message)}` };
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
