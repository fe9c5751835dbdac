import { serve, type Serving } from '../support/fleet-process.ts';

export type RoleName = 'api' | 'ingest' | 'engine';
export const ROLE_NAMES: readonly RoleName[] = ['ingest', 'engine', 'api'];

const READY: Record<RoleName, RegExp> = {
  api: /API listening on/,
  ingest: /trackers on /,
  engine: /running engine/,
};

/**
 * One `fleet serve --roles <role>` process per role, as a deployment splits them, sharing the
 * database and Redis of `env`. Ports are fixed, so a role started again listens where its clients
 * (trackers, API callers) still connect.
 */
export class FleetRoles {
  private readonly running = new Map<RoleName, Serving>();
  /** Every process started, killed ones included, for their logs. */
  private readonly history: Array<{ role: RoleName; serving: Serving }> = [];

  constructor(private readonly env: Record<string, string>) {}

  async startAll(): Promise<void> {
    await Promise.all(ROLE_NAMES.map((role) => this.start(role)));
  }

  async start(role: RoleName): Promise<void> {
    const serving = await serve(this.env, READY[role], ['--roles', role]);
    this.running.set(role, serving);
    this.history.push({ role, serving });
  }

  /** SIGKILL: no shutdown, no flush, no goodbye; resolves once the process is gone. */
  async kill(role: RoleName): Promise<void> {
    const serving = this.running.get(role);
    if (!serving) throw new Error(`${role} is not running`);
    this.running.delete(role);
    serving.process.kill('SIGKILL');
    await serving.exited;
  }

  /** Roles whose process exited without the suite asking (a crash): none, after any fault. */
  crashed(): RoleName[] {
    return [...this.running.entries()].filter(([, s]) => s.process.exitCode !== null || s.process.signalCode !== null).map(([role]) => role);
  }

  /** Processes of the run: started, and started again after a kill. */
  get started(): number {
    return this.history.length;
  }

  output(): string {
    return this.history.map(({ role, serving }) => `--- ${role} (pid ${serving.process.pid})\n${serving.output()}`).join('\n');
  }

  /** Warnings and errors the processes logged (JSON lines on stderr), for the report. */
  logLines(role?: RoleName): string[] {
    return this.history
      .filter((h) => role === undefined || h.role === role)
      .flatMap(({ serving }) => (/stderr:\n([\s\S]*)$/.exec(serving.output())?.[1] ?? '').split('\n').filter((l) => l.startsWith('{')));
  }

  /** SIGTERM to every process, as a deployment stops; a process that hangs is killed after 20 s. */
  async stopAll(): Promise<Array<{ role: RoleName; code: number | null; signal: NodeJS.Signals | null }>> {
    const stopping = [...this.running.entries()].map(async ([role, serving]) => {
      serving.process.kill('SIGTERM');
      const timer = setTimeout(() => serving.process.kill('SIGKILL'), 20_000);
      const { code, signal } = await serving.exited;
      clearTimeout(timer);
      return { role, code, signal };
    });
    this.running.clear();
    return Promise.all(stopping);
  }
}
