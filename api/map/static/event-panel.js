// The event list's feed: the newest events first, then the live stream from just after them, so the
// list has no gap and no duplicate.

import { liveEvents } from './live-events.js';

const INITIAL_EVENTS = 50;

/**
 * Fills `events` (the event list) and hands each live event to `onEvent`; the stream's state goes to
 * `onState`, problems to `onProblem` (null once it works again). Resolves with the stream, or with
 * undefined when the session ended first or the key was refused.
 */
export async function startEventFeed(api, { events, eventTypes, onEvent, onState, onProblem, isStopped }) {
  let newest;
  try {
    const page = await api.get(`/events?limit=${INITIAL_EVENTS}`);
    if (isStopped()) return undefined;
    newest = page.data[0]?.id;
    events.add([...page.data].reverse());
  } catch (error) {
    if (isStopped() || error.status === 401) return undefined;
    onProblem(`Events: ${error.message}`);
  }
  if (isStopped()) return undefined;
  return liveEvents(api, {
    eventTypes,
    afterId: newest,
    onEvent: (event) => {
      events.add([event]);
      onEvent(event);
    },
    onState,
    onProblem,
  });
}
