import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export type ReceiverMode = 'answer' | 'stall' | 'refuse';

/**
 * An integrator's webhook endpoint on 127.0.0.1 that verifies every request with the Standard
 * Webhooks library and counts an event delivered once it answered 2xx to a correctly signed request
 * for it (deduplicated by `webhook-id`, as integrators are told to). It can stall (hold every request
 * unanswered, so deliveries back up behind it) and refuse (503), then recover.
 */
export class WebhookReceiver {
  /** Event id → when it was first answered 2xx. */
  readonly delivered = new Map<string, number>();
  requests = 0;
  badSignatures = 0;
  refusals = 0;
  stalled = 0;
  /** Requests whose sender was gone by the time they were answered (it died, or timed out): not delivered. */
  abandoned = 0;
  /** A slow receiver answers each request this long after it arrived. */
  answerDelayMs = 0;
  private mode: ReceiverMode = 'answer';
  private held: Array<{ id: string; res: ServerResponse }> = [];
  private secret: string | undefined;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => receiver.handle(body, req.headers as Record<string, string>, res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/fleet-events`;
  }

  /** The webhook's signing secret, as POST /webhooks returned it. */
  useSecret(secret: string): void {
    this.secret = secret;
  }

  setMode(mode: ReceiverMode): void {
    this.mode = mode;
    if (mode === 'stall') return;
    // Leaving a stall answers what was held, as a receiver that was only slow does.
    const held = this.held;
    this.held = [];
    for (const h of held) this.answer(h.id, h.res);
  }

  private handle(body: string, headers: Record<string, string>, res: ServerResponse): void {
    this.requests++;
    const id = String(headers['webhook-id']);
    try {
      new Webhook(this.secret ?? '').verify(body, {
        'webhook-id': id, 'webhook-timestamp': String(headers['webhook-timestamp']), 'webhook-signature': String(headers['webhook-signature']),
      });
    } catch {
      this.badSignatures++;
      res.writeHead(400).end('bad signature');
      return;
    }
    if (this.mode === 'refuse') {
      this.refusals++;
      res.writeHead(503).end('busy');
    } else if (this.mode === 'stall') {
      this.stalled++;
      this.held.push({ id, res });
    } else if (this.answerDelayMs > 0) {
      setTimeout(() => this.answer(id, res), this.answerDelayMs);
    } else {
      this.answer(id, res);
    }
  }

  private answer(id: string, res: ServerResponse): void {
    if (res.destroyed) {
      this.abandoned++; // the sender gave up (its timeout) or died: not delivered
      return;
    }
    res.writeHead(204).end();
    if (!this.delivered.has(id)) this.delivered.set(id, Date.now());
  }

  async close(): Promise<void> {
    for (const h of this.held) h.res.destroy();
    this.held = [];
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
