// The live event stream. A browser's EventSource cannot send an Authorization header, and the key
// must never be in a URL, so each stream is opened with a stream token (POST /events/stream-tokens;
// it opens one stream, once), and resumed after the last event seen when it has to be opened again.

const RETRY_MS = 3_000;

/**
 * Streams the events after `afterId` to `onEvent`, with the connection's state to `onState` ('live',
 * 'reconnecting', 'offline') and failures to `onProblem` (null once it works again).
 */
export function liveEvents(api, { eventTypes, afterId, onEvent, onState, onProblem }) {
  let lastId = afterId;
  let source;
  let retry;
  let stopped = false;

  const reopenLater = (ms) => {
    clearTimeout(retry);
    retry = setTimeout(open, ms);
  };

  async function open() {
    if (stopped) return;
    let token;
    try {
      // Signed in, the stream opens with the session cookie (EventSource sends it to this server).
      if (!api.signedIn) token = (await api.post('/events/stream-tokens')).data.token;
    } catch (error) {
      if (stopped || error.status === 401) return; // the page is going back to the login box
      onState('offline');
      onProblem(`Live events: ${error.message}`);
      // A key without events:read will not gain it by asking again; anything else may pass.
      if (error.status !== 403) reopenLater(Math.max(RETRY_MS, (error.retryAfterS ?? 0) * 1000));
      return;
    }
    if (stopped) return;
    const query = new URLSearchParams(token ? { token } : {});
    if (lastId) query.set('lastEventId', lastId);
    const stream = new EventSource(`/api/v1/events/stream?${query}`);
    source = stream;
    stream.onopen = () => {
      onState('live');
      onProblem(null);
    };
    const receive = (message) => {
      lastId = message.lastEventId || lastId;
      onEvent(JSON.parse(message.data));
    };
    // Each event arrives under its type's name, and EventSource hands it only to that name's listeners.
    for (const type of eventTypes) stream.addEventListener(type, receive);
    stream.onerror = () => {
      if (stopped || source !== stream) return;
      onState('reconnecting');
      // The EventSource's own retry would present the used token again (401): whatever ended the
      // stream (a dropped connection, a restart, the stream's maximum life), a new token opens a new one.
      stream.close();
      reopenLater(RETRY_MS);
    };
  }

  void open();
  return {
    stop() {
      stopped = true;
      clearTimeout(retry);
      source?.close();
    },
  };
}
