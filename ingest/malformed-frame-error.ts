/** A frame that does not follow its protocol: the connection that sent it is closed, others go on. */
export class MalformedFrameError extends Error {
  override name = 'MalformedFrameError';
}
