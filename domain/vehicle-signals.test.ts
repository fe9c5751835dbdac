import { describe, expect, it } from 'vitest';
import { detectVehicleSignals, type SignalFix, type SignalState, type VehicleSignal } from './vehicle-signals.ts';

const fix = (over: Partial<SignalFix>): SignalFix => ({ valid: true, speedKmh: 0, ignition: null, alarm: null, ...over });
const START: SignalState = { ignition: null, overspeed: false };

function run(state: SignalState, limit: number | null, fixes: SignalFix[]) {
  const out: VehicleSignal[] = [];
  const next = detectVehicleSignals(state, { speedLimitKmh: limit, hysteresisKmh: 5 }, fixes, out);
  return { state: next, signals: out.map((s) => `${s.kind}@${s.fix}`) };
}

describe('detectVehicleSignals', () => {
  it.each([
    ['first report on', START, [true], ['ignition.on@0'], true],
    ['first report off: nothing', START, [false], [], false],
    ['off → on → off', START, [false, true, true, false], ['ignition.on@1', 'ignition.off@3'], false],
    ['unknown fixes change nothing', { ignition: true, overspeed: false }, [null, null, true, null], [], true],
    ['on from the stored state', { ignition: false, overspeed: false }, [true], ['ignition.on@0'], true],
    ['off from the stored state', { ignition: true, overspeed: false }, [null, false], ['ignition.off@1'], false],
  ] as const)('ignition: %s', (_, state, ignitions, signals, last) => {
    const result = run(state, null, ignitions.map((ignition) => fix({ ignition })));
    expect(result.signals).toEqual(signals);
    expect(result.state.ignition).toBe(last);
  });

  it.each([
    ['one stretch around the limit', START, [70, 90, 95, 78, 90], ['overspeed@1'], true],
    ['a second stretch once below limit − hysteresis', { ignition: null, overspeed: true }, [70, 90], ['overspeed@1'], true],
    ['at the limit is not over it', START, [80, 80], [], false],
    ['exactly limit − hysteresis does not end it', { ignition: null, overspeed: true }, [75, 90], [], true],
    ['a stretch from the stored state goes on', { ignition: null, overspeed: true }, [85, 99], [], true],
  ] as const)('overspeed at 80 km/h: %s', (_, state, speeds, signals, last) => {
    const result = run(state, 80, speeds.map((speedKmh) => fix({ speedKmh })));
    expect(result.signals).toEqual(signals);
    expect(result.state.overspeed).toBe(last);
  });

  it('ignores invalid fixes and fixes without speed for overspeed', () => {
    const result = run(START, 80, [fix({ valid: false, speedKmh: 120 }), fix({ speedKmh: null }), fix({ speedKmh: 81 })]);
    expect(result.signals).toEqual(['overspeed@2']);
  });

  it('has no stretch without a limit, and forgets one when the limit goes', () => {
    expect(run(START, null, [fix({ speedKmh: 200 })]).signals).toEqual([]);
    expect(run({ ignition: null, overspeed: true }, null, []).state.overspeed).toBe(false);
  });

  it('reports every alarm, valid fix or not, in fix order with the rest', () => {
    const result = run(START, 80, [fix({ alarm: 'sos', valid: false }), fix({ ignition: true, speedKmh: 90, alarm: 'powerCut' })]);
    expect(result.signals).toEqual(['alarm@0', 'ignition.on@1', 'overspeed@1', 'alarm@1']);
  });
});
