import { serve, type Serving } from '../support/fleet-process.ts';

export type RoleName = 'api' | 'ingest' | 'engine';
export const ROLE_NAMES: readonly RoleName[] = ['ingest', 'engine', 'api'];

const READY: Record<RoleName, RegExp> = {
  api: /API listening on/,
  ingest: /trackers on /,
  engine: /running engine/,
};

/** A `fleet serve --roles <role>` process by name (`ingest`, or `ingest-2` where a role has several), with its environment. */
export type FleetNodes = Record<string, { role: RoleName; env: Record<string, string> }>;

/** One process per role, all on the database and Redis of `env`: the three-process setup. */
export function oneNodePerRole(env: Record<string, string>): FleetNodes {
  return Object.fromEntries(ROLE_NAMES.map((role) => [role, { role, env }]));
}

/**
 * `fleet serve --roles` processes, as a deployment splits them, one per node of `nodes`. Ports are
 * fixed, so a node started again listens where its clients (trackers, API callers) still connect.
 */
export class FleetRoles {
  private readonly running = new Map<string, Serving>();
  /** Every process started, killed ones included, for their logs. */
  private readonly history: Array<{ node: string; serving: Serving }> = [];

  constructor(private readonly nodes: FleetNodes) {}

  /** Every node; when one fails to start, the error once the others are up (so stopAll stops them). */
  async startAll(): Promise<void> {
    const started = await Promise.allSettled(Object.keys(this.nodes).map((node) => this.start(node)));
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async start(node: string): Promise<void> {
    const { role, env } = this.nodes[node] ?? {};
    if (!role || !env) throw new Error(`no fleet node named ${node}`);
    const serving = await serve(env, READY[role], ['--roles', role]);
    this.running.set(node, serving);
    this.history.push({ node, serving });
  }

  /** SIGKILL: no shutdown, no flush, no goodbye; resolves once the process is gone. */
  async kill(node: string): Promise<void> {
    const serving = this.running.get(node);
    if (!serving) throw new Error(`${node} is not running`);
    this.running.delete(node);
    serving.process.kill('SIGKILL');
    await serving.exited;
  }

  /** Nodes whose process exited without the suite asking (a crash): none, after any fault. */
  crashed(): string[] {
    return [...this.running.entries()].filter(([, s]) => s.process.exitCode !== null || s.process.signalCode !== null).map(([node]) => node);
  }

  /** Processes of the run: started, and started again after a kill. */
  get started(): number {
    return this.history.length;
  }

  output(): string {
    return this.history.map(({ node, serving }) => `--- ${node} (pid ${serving.process.pid})\n${serving.output()}`).join('\n');
  }

  /** Warnings and errors the processes logged (JSON lines on stderr), for the report. */
  logLines(node?: string): string[] {
    return this.history
      .filter((h) => node === undefined || h.node === node)
      .flatMap(({ serving }) => (/stderr:\n([\s\S]*)$/.exec(serving.output())?.[1] ?? '').split('\n').filter((l) => l.startsWith('{')));
  }

  /** SIGTERM to every process, as a deployment stops; a process that hangs is killed after 20 s. */
  async stopAll(): Promise<Array<{ node: string; code: number | null; signal: NodeJS.Signals | null }>> {
    const stopping = [...this.running.entries()].map(async ([node, serving]) => {
      serving.process.kill('SIGTERM');
      const timer = setTimeout(() => serving.process.kill('SIGKILL'), 20_000);
      const { code, signal } = await serving.exited;
      clearTimeout(timer);
      return { node, code, signal };
    });
    this.running.clear();
    return Promise.all(stopping);
  }
}
