import { REPLACED_REASON } from '../db/device-presence.ts';

/** A live tracker connection, as the registry of devices' connections knows it. */
export interface TrackerLink {
  close(reason: string): void;
}

/**
 * Which connection each device speaks on. A device has one: when it identifies on a new connection
 * (it reconnected, and the old socket is half-open or still draining), the old one is closed, so its
 * frames stop waiting for a commit and the rows it resends are held once. (The commands issue will
 * route commands through the same map.)
 */
export class DeviceConnections {
  private readonly links = new Map<number, TrackerLink>();

  constructor(private readonly onSuperseded: () => void = () => undefined) {}

  claim(deviceId: number, link: TrackerLink): void {
    const previous = this.links.get(deviceId);
    this.links.set(deviceId, link);
    if (previous && previous !== link) {
      this.onSuperseded();
      previous.close(REPLACED_REASON);
    }
  }

  release(deviceId: number, link: TrackerLink): void {
    if (this.links.get(deviceId) === link) this.links.delete(deviceId);
  }

  get size(): number {
    return this.links.size;
  }
}
