import type { EngineFix } from '../engine-step/engine-state.ts';
import { harshDrivingEvent, idleEndEvent, idleStartEvent, type EventPosition, type NewEvent } from '../events/event-payloads.ts';
import { DEFAULT_HARSH_SETTINGS, detectHarshDriving, harshState, type HarshEvent, type HarshSettings, type HarshState } from './harsh-driving.ts';
import { DEFAULT_IDLE_MIN_S, detectIdling, idleState, type IdleDecision, type IdleState } from './idling.ts';

/** The driving-behaviour settings (docs/configuration.md, "Driving behaviour"). */
export interface DrivingSettings {
  harsh: HarshSettings;
  /** IDLE_MIN_S. */
  idleMinS: number;
}

export const DEFAULT_DRIVING_SETTINGS: DrivingSettings = { harsh: DEFAULT_HARSH_SETTINGS, idleMinS: DEFAULT_IDLE_MIN_S };

/** `device_engine_states.driving`: plain JSON, committed with the cursor. */
export interface DrivingState {
  harsh: HarshState;
  idle: IdleState;
}

export interface DrivingOutcome {
  state: DrivingState;
  /** Harsh events counted at each fix (computed and tracker, each manoeuvre once), for the trip they fall in. */
  harshAt: Uint8Array;
}

const harshEvents: HarshEvent[] = [];
const idleDecisions: IdleDecision[] = [];

const pointPosition = (p: { t: number; lat: number; lng: number; speedKmh: number | null; heading: number | null }): EventPosition => ({ lat: p.lat, lng: p.lng, speedKmh: p.speedKmh, heading: p.heading, fixTime: new Date(p.t) });

/**
 * One device's new fixes (after its cursor, in fix-time order) through the harsh-driving and idling
 * rules: their events appended to `events`, the state to commit, and where the harsh events fell.
 * Late fixes never reach it: they are behind the cursor.
 */
export function evaluateDriving(
  deviceId: number,
  stored: Record<string, unknown> | null | undefined,
  settings: DrivingSettings,
  moving: { movingSpeedKmh: number; maxGapS: number },
  fixes: readonly EngineFix[],
  events: NewEvent[],
): DrivingOutcome {
  const harshAt = new Uint8Array(fixes.length);
  harshEvents.length = 0;
  const harsh = detectHarshDriving(harshState(stored?.harsh), settings.harsh, fixes, harshEvents);
  for (const h of harshEvents) {
    harshAt[h.fix] = harshAt[h.fix]! + 1;
    events.push(harshDrivingEvent(deviceId, h, pointPosition(h.at)));
  }
  idleDecisions.length = 0;
  const idle = detectIdling(idleState(stored?.idle), { minS: settings.idleMinS, movingSpeedKmh: moving.movingSpeedKmh, maxGapS: moving.maxGapS }, fixes, idleDecisions);
  for (const d of idleDecisions) {
    if (d.kind === 'start') events.push(idleStartEvent(deviceId, pointPosition(d.since)));
    else events.push(idleEndEvent(deviceId, new Date(d.since.t), pointPosition(d.at), d.idleSeconds));
  }
  return { state: { harsh, idle }, harshAt };
}
