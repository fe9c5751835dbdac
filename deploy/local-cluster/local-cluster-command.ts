import { layoutFromEnvironment, type ClusterLayout } from './cluster-layout.ts';
import { haproxyRunning, haproxyServers } from './haproxy.ts';
import { down, status, up } from './local-cluster.ts';
import { postgresUrl } from './postgres-pair.ts';

// npm run local-cluster -- up | down [--purge] | status
// LOCAL_CLUSTER_DIR (default .local-cluster/ in the repository) and LOCAL_CLUSTER_PORT_BASE (17000).

const USAGE = 'usage: npm run local-cluster -- up | down [--purge] | status';

function printServed(layout: ClusterLayout): void {
  const teltonika = layout.trackers.find((t) => t.protocol === 'teltonika')!;
  console.log(`
API (through HAProxy):  http://127.0.0.1:${layout.apiPort}   (reference: /docs, console: /console)
Trackers (HAProxy):     ${layout.trackers.map((t) => `${t.protocol} ${t.public}`).join(', ')}
                        e.g. Teltonika devices to 127.0.0.1:${teltonika.public}
HAProxy statistics:     http://127.0.0.1:${layout.statsPort}/stats
First account:          DATABASE_URL=${postgresUrl(layout.pgbouncerPort)} PORT=${layout.apiPort} PUBLIC_URL=http://127.0.0.1:${layout.apiPort} npm run fleet -- demo
                        (or account create and user create; or the one-time console link each API node logs, fleet/api-1.log, through HAProxy)
State and logs:         ${layout.dir} (fleet/<node>.log, redis/, postgres/, pgbouncer/, haproxy/)
Stop:                   npm run local-cluster -- down   (add --purge to delete the data too)`);
}

async function printStatus(layout: ClusterLayout): Promise<void> {
  for (const part of status(layout)) console.log(`${part.running ? 'running' : 'stopped'}  ${part.part}${part.ports.length > 0 ? ` (${part.ports[0]})` : ''}`);
  if (haproxyRunning(layout)) {
    const servers = await haproxyServers(layout);
    const down = servers.filter((s) => s.status !== 'UP' && s.backend !== 'stats');
    console.log(down.length === 0 ? 'HAProxy: every server UP' : `HAProxy: ${down.map((s) => `${s.backend}/${s.server} ${s.status}`).join(', ')}`);
  }
}

async function main(argv: string[]): Promise<number> {
  const layout = layoutFromEnvironment();
  const [command, ...flags] = argv;
  if (command === 'up' && flags.length === 0) {
    if (status(layout).every((p) => p.running)) {
      console.log(`the local cluster in ${layout.dir} is already up`);
      printServed(layout);
      return 0;
    }
    // Parts that run are left alone: up after a crash of some parts starts only those.
    await up(layout, { progress: (line) => console.log(`starting ${line}`) });
    printServed(layout);
    return 0;
  }
  if (command === 'down' && flags.every((f) => f === '--purge')) {
    await down(layout, { purge: flags.includes('--purge') });
    console.log(flags.includes('--purge') ? `stopped; deleted ${layout.dir}` : `stopped; data kept in ${layout.dir} (down --purge deletes it)`);
    return 0;
  }
  if (command === 'status' && flags.length === 0) {
    await printStatus(layout);
    return status(layout).every((p) => p.running) ? 0 : 3;
  }
  console.error(USAGE);
  return 2;
}

// A reader that went away (`| head`) must not stop `up` half-way.
process.stdout.on('error', () => undefined);

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(`local-cluster: ${error.message}`);
    process.exit(1);
  },
);
