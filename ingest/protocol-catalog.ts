import type { Protocol } from './protocol.ts';
import { gl200 } from './protocols/gl200/gl200.ts';
import { gt06 } from './protocols/gt06/gt06.ts';
import { h02 } from './protocols/h02/h02.ts';
import { meitrack } from './protocols/meitrack/meitrack.ts';
import { teltonika } from './protocols/teltonika/teltonika.ts';
import { tk103 } from './protocols/tk103/tk103.ts';

/** Every tracker protocol served over TCP, with the variable that moves (or, with 0, disables) its port. */
export const TRACKER_PROTOCOLS: ReadonlyArray<{ protocol: Protocol; portVariable: string }> = [
  { protocol: teltonika, portVariable: 'TELTONIKA_PORT' },
  { protocol: gt06, portVariable: 'GT06_PORT' },
  { protocol: h02, portVariable: 'H02_PORT' },
  { protocol: gl200, portVariable: 'GL200_PORT' },
  { protocol: meitrack, portVariable: 'MEITRACK_PORT' },
  { protocol: tk103, portVariable: 'TK103_PORT' },
];
