import type { Gt06Record } from './gt06-message.ts';
import type { ByteReader } from '../../codec/byte-reader.ts';
import { signalFromLevel } from '../../../domain/device-signal.ts';

/** Alarm byte of the status block (Concox "alarm/language" field) to the shared alarm names. */
export function alarmName(code: number): string | undefined {
  switch (code) {
    case 0x01:
      return 'sos';
    case 0x02:
      return 'powerCut';
    case 0x03:
    case 0x09:
      return 'vibration';
    case 0x04:
      return 'geofenceEnter';
    case 0x05:
      return 'geofenceExit';
    case 0x06:
      return 'overspeed';
    case 0x0c:
    case 0x13:
      return 'tampering';
    case 0x0e:
    case 0x0f:
    case 0x19:
      return 'lowBattery';
    case 0x11:
      return 'powerOff';
    case 0x14:
      return 'door';
    case 0x23:
      return 'fallDown';
    case 0x29:
      return 'hardAcceleration';
    case 0x2a:
    case 0x2b:
      return 'hardCornering';
    case 0x2c:
      return 'accident';
    case 0x30:
      return 'hardBraking';
    default:
      return undefined;
  }
}

/** Alarm carried in bits 3-5 of the terminal-information byte. */
function statusAlarm(status: number, overspeedVariant: boolean): string | undefined {
  switch ((status >> 3) & 0x07) {
    case 1:
      return 'vibration';
    case 2:
      return 'powerCut';
    case 3:
      return 'lowBattery';
    case 4:
      return 'sos';
    case 6:
      return 'geofence';
    case 7:
      // VXT01 firmware reuses the "removed" code for overspeed.
      return overspeedVariant ? 'overspeed' : 'removing';
    default:
      return undefined;
  }
}

/** Terminal-information byte: ACC line, charging, fuel/power cut relay, alarm bits. */
export function applyTerminalInfo(p: Gt06Record, status: number, overspeedVariant = false): void {
  p.attributes.status = status;
  p.attributes.ignition = (status & 0x02) !== 0;
  p.attributes.charge = (status & 0x04) !== 0;
  p.attributes.blocked = (status & 0x80) !== 0;
  const alarm = statusAlarm(status, overspeedVariant);
  if (alarm) p.attributes.alarm = alarm;
}

/**
 * Voltage level: older firmwares send a 0-6 scale, 4G models a percentage; a value above 6 can
 * only be the latter.
 */
export function batteryLevel(raw: number): number {
  return raw <= 6 ? Math.trunc((raw * 100) / 6) : raw;
}

/**
 * The GSM signal byte of status blocks and heartbeats: Concox bars, 0 (none) to 4 (strong), kept as
 * `rssi` and given as signal strength on the 0–31 scale.
 */
export function applyGsmLevel(p: Gt06Record, level: number): void {
  p.attributes.rssi = level;
  const signal = signalFromLevel(level, 4);
  if (signal !== undefined) p.signalStrength = signal;
}

/** Status block: terminal info, voltage level, GSM signal, alarm byte (language left to the caller). */
export function readStatusBlock(p: Gt06Record, r: ByteReader, options: { model?: string | undefined } = {}): void {
  applyTerminalInfo(p, r.u8());
  p.attributes.batteryLevel = batteryLevel(r.u8());
  applyGsmLevel(p, r.u8());
  const code = r.u8();
  // LW4G-4B reuses 0x19 (low battery elsewhere) for harsh acceleration.
  const alarm = options.model === 'LW4G-4B' && code === 0x19 ? 'hardAcceleration' : alarmName(code);
  if (alarm) p.attributes.alarm = alarm;
  else if (code !== 0) p.attributes.event = code; // keep codes we cannot name
}
