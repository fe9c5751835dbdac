/** The tracker's connection closed while one of its frames waited to be committed: nobody is left to acknowledge. */
export class ConnectionClosedError extends Error {
  override name = 'ConnectionClosedError';
}
