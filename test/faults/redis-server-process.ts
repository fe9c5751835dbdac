import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';

/**
 * A redis-server of the fault suite's own, on a port of its own, so restarting it disturbs no other
 * suite (the shared Redis on 6379 is never touched). No persistence: `shutdown nosave` then a start
 * is a Redis that lost everything, as a restart without a disk does.
 */
export class RedisServerProcess {
  private child: ChildProcess | undefined;
  private output = '';

  /** `args`: more of redis-server's options (`--replicaof 127.0.0.1 6390`, `--cluster-enabled yes` …). */
  constructor(
    readonly port: number,
    private readonly args: readonly string[] = [],
    /** requirepass (and masterauth, for a replica or a cluster node): clients, the suite's own included, need it. */
    private readonly password?: string,
  ) {}

  get url(): string {
    return `redis://${this.password ? `:${encodeURIComponent(this.password)}@` : ''}127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error('redis-server is already running');
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', ...(this.password ? ['--requirepass', this.password, '--masterauth', this.password] : []), ...this.args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.output = (this.output + chunk).slice(-4000)));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.output = (this.output + chunk).slice(-4000)));
    const failed = new Promise<never>((_, fail) =>
      child.once('error', (error) => fail(new Error(`cannot start redis-server (is it installed?): ${error.message}`))),
    );
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (await Promise.race([this.ping(), failed])) return;
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server on port ${this.port} did not start\n${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** `SHUTDOWN NOSAVE`: every key, queue and job scheduler is gone; resolves once the process has exited. */
  async shutdownNosave(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((done) => (child.exitCode !== null ? done() : child.once('exit', () => done())));
    const client = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.shutdown('NOSAVE').catch(() => undefined); // the connection closes before any answer
    } finally {
      client.disconnect();
    }
    await exited;
    this.child = undefined;
  }

  /** The suite's cleanup between runs: its own server, so everything may go. */
  async flushAll(): Promise<void> {
    const client = new Redis(this.url, { maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
    try {
      await client.flushall();
    } finally {
      client.disconnect();
    }
  }

  async stop(): Promise<void> {
    await this.shutdownNosave();
  }

  private async ping(): Promise<boolean> {
    const client = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  }
}
