import type { DatabaseHandle } from '../../db/database.ts';
import { DeviceSignals } from '../../engine/device-signals.ts';
import type { EngineQueues } from '../../engine/engine-queues.ts';
import type { CommandBus } from '../../ingest/commands/command-bus.ts';
import { CommandDelivery } from '../../ingest/commands/command-delivery.ts';
import type { ProxyProtocolOptions } from '../../ingest/proxied-connection.ts';
import { startIngest } from '../../ingest/start-ingest.ts';
import { publishCommittedFixes, type PositionFeed } from '../../domain/events/position-feed.ts';
import { POSITION_WEBHOOK_DEFAULTS, PositionWebhookSender } from '../../engine/webhooks/position-webhooks.ts';
import type { StoredFix } from '../../domain/stored-rows.ts';
import type { Logger } from '../../runtime/logger.ts';
import { plainAddress, TrustedProxies } from '../../api/trusted-proxies.ts';
import type { Config } from '../config.ts';

export interface RunningIngestRole {
  trackers: Array<{ protocol: string; port: number }>;
  stop(): Promise<void>;
}

/** The ingest role: tracker listeners whose commits signal the engine queues, and that give trackers their commands. */
export async function startIngestRole(
  config: Config,
  log: Logger,
  deps: {
    database: DatabaseHandle; engineQueues: EngineQueues; commandBus: CommandBus; positionFeed: PositionFeed;
    /** Told each committed batch's fixes before the engine is signalled (the engine in this process). */
    fixesCommitted?: (fixes: readonly StoredFix[]) => void;
  },
): Promise<RunningIngestRole> {
  // vehicle.position: webhooks get the fixes this process stores from this process (one sender per
  // vehicle's connection, so each vehicle's order holds); streams get them through the feed, anywhere.
  const positionWebhooks = new PositionWebhookSender(deps.database.db, log, {
    timeoutMs: config.webhooks.timeoutMs, allowPrivate: config.webhooks.allowPrivate, ...POSITION_WEBHOOK_DEFAULTS,
  });
  await positionWebhooks.start();
  const signals = new DeviceSignals(deps.engineQueues, (error) => log.warn('could not signal the engine; sending again in a second', { error: error.message }));
  const commands = new CommandDelivery(deps.database.db, deps.commandBus, log, config.commands);
  let ingest;
  try {
    await commands.start();
    ingest = await startIngest(deps.database, log, {
      host: config.host,
      ports: config.trackerPorts,
      osmandPort: config.osmandPort,
      limits: {
        idleTimeoutMs: config.ingest.idleTimeoutMs,
        maxBufferedBytes: config.ingest.maxBufferedBytes,
        loginTimeoutMs: config.ingest.loginTimeoutMs,
        maxUnidentifiedPerAddress: config.ingest.maxUnidentifiedPerAddress,
      },
      batchRows: config.ingest.batchRows,
      batchDelayMs: config.ingest.batchDelayMs,
      maxWaitingRows: config.ingest.maxWaitingRows,
      maxWaitingBytes: config.ingest.maxWaitingBytes,
      maxConnections: config.ingest.maxConnections,
      onDevicesUpdated: (deviceIds) => signals.add(deviceIds),
      onFixesCommitted: (fixes) => {
        deps.fixesCommitted?.(fixes);
        publishCommittedFixes({ webhooks: positionWebhooks, feed: deps.positionFeed }, fixes);
      },
      commands,
      mediaMaxBytes: config.media.maxBytes,
      proxyProtocol: trackerProxy(config),
    });
  } catch (error) {
    await commands.close();
    await signals.close();
    positionWebhooks.close();
    throw error;
  }
  const running = ingest;
  return {
    trackers: running.listeners.map((l) => ({ protocol: l.protocol, port: l.port })),
    async stop() {
      // Batches in flight commit and are acknowledged first; then their signals go out.
      await running.close();
      await commands.close();
      await signals.close();
      positionWebhooks.close();
    },
  };
}

/** TRACKER_PROXY_PROTOCOL, with TRACKER_PROXY_FROM's blocks (matched as TRUST_PROXY's are) when given. */
function trackerProxy(config: Config): ProxyProtocolOptions | undefined {
  if (!config.ingest.proxyProtocol) return undefined;
  if (config.ingest.proxyFrom.length === 0) return {};
  const proxies = new TrustedProxies(config.ingest.proxyFrom);
  return { trusts: (address) => proxies.trusts(plainAddress(address) ?? address) };
}
