import { ByteReader } from '../../codec/byte-reader.ts';
import type { DecodedPosition } from '../../protocol.ts';
import { hexOf, text } from './jt808-fields.ts';
import { addAlarm } from './jt808-message.ts';

/**
 * The 0xEB item of several Chinese firmwares: a list of `length (2) | id (2) | value` entries
 * (length counts id and value), carrying fuel, voltages, ICCID and lock alarms.
 */
export function decodeEbItems(r: ByteReader, p: DecodedPosition): void {
  const a = p.attributes;
  while (r.remaining >= 4) {
    const length = r.u16();
    if (length < 2 || length > r.remaining) return;
    const v = new ByteReader(r.bytes, r.offset, r.offset + length);
    r.skip(length);
    const id = v.u16();
    switch (id) {
      case 0x0001:
        a.fuel1 = v.u16() / 10;
        break;
      case 0x0023:
        a.fuel2 = Number.parseFloat(text(v, 6));
        break;
      case 0x002d:
        if (length === 6) a.power = v.u32() / 1000;
        else a.battery = v.u16() / 1000;
        break;
      case 0x0089: {
        const alarms = v.u32();
        if (!(alarms & 0x01)) addAlarm(p, 'powerOff');
        if (!(alarms & (1 << 12))) addAlarm(p, 'removing');
        break;
      }
      case 0x00b2:
        a.iccid = hexOf(v.slice(10)).replace(/f+$/, '');
        break;
      case 0x00c5: {
        const alarms = v.u32();
        if (!(alarms & (1 << 6))) addAlarm(p, 'vibration');
        const motion = (alarms >>> 23) & 0x03;
        if (motion === 0) a.motion = true;
        else if (motion === 1) a.motion = false;
        break;
      }
      case 0x00c6: {
        const batteryAlarm = v.u8();
        if (batteryAlarm === 0x03 || batteryAlarm === 0x04) addAlarm(p, 'lowBattery');
        a.batteryAlarm = batteryAlarm;
        break;
      }
      case 0x00ce:
        a.power = v.u16() / 100;
        break;
      case 0x00a8:
      case 0x00e1:
        a.batteryLevel = v.u8();
        break;
      default:
        break;
    }
  }
}
