/**
 * How a command reaches the process that holds its device's connection. The command itself is a row
 * (db/commands.ts); the bus only says "look at this device's commands again", so a lost message
 * costs a delay (the holder's periodic sweep finds the command), never the command.
 */
export interface CommandBus {
  /** A device's commands changed (one was queued or cancelled): wake whichever process holds its connection. */
  notify(deviceId: number): Promise<void>;
  /** This process holds the device's connection from now on. */
  claim(deviceId: number): void;
  /** This process no longer holds it. */
  release(deviceId: number): void;
  /** Where this process's notifications go: one handler, set by the process's command delivery. */
  listen(handler: (deviceId: number) => void): Promise<void>;
  close(): Promise<void>;
}

/**
 * The embedded default: the API and the tracker connections share one process, so a notification is
 * a function call.
 */
export class InProcessCommandBus implements CommandBus {
  private handler: ((deviceId: number) => void) | undefined;

  async notify(deviceId: number): Promise<void> {
    this.handler?.(deviceId);
  }

  claim(): void {}

  release(): void {}

  async listen(handler: (deviceId: number) => void): Promise<void> {
    this.handler = handler;
  }

  async close(): Promise<void> {
    this.handler = undefined;
  }
}
