#!/usr/bin/env bash
# A tour of the eight detailed endpoints with curl, checking the shape of every answer.
#
#   API_KEY=fc_live_... [BASE_URL=http://localhost:3000] test/curl-tour.sh
#
# Meant for the demo data that `npm start` seeds into an empty DATA_DIR: it creates a travel for
# VEHICLE (default 'Truck 02', which has none) to GEOFENCE (default 'Polanco Customer'), reads it,
# lists the active travels and cancels it again, so the tour can be run any number of times.
# Other data: set VEHICLE, GEOFENCE, IMEI (a device the key sees) and TIMEZONE (the key user's).
#
# Prints one line per check; on the first mismatch prints which check failed, with the response,
# and exits 1. Needs curl and node.
set -uo pipefail

BASE_URL="${BASE_URL:-http://localhost:3000}"
BASE_URL="${BASE_URL%/}"
if [ -z "${API_KEY:-}" ]; then
  echo "curl-tour: API_KEY is required (the demo key printed by 'npm start' on a new DATA_DIR, or one from 'fleet key create')" >&2
  exit 2
fi
export VEHICLE="${VEHICLE:-Truck 02}"
export GEOFENCE="${GEOFENCE:-Polanco Customer}"
export IMEI="${IMEI:-356307042441013}"
export TIMEZONE="${TIMEZONE:-America/Mexico_City}"
API="$BASE_URL/api/v1"

for tool in curl node; do
  command -v "$tool" >/dev/null || { echo "curl-tour: $tool is not installed" >&2; exit 2; }
done

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
BODY="$WORK/body.json"
CHECKS=0

# Checks one response: node -e CHECKER LABEL HTTP_STATUS EXPECTED_STATUS BODY_FILE SHAPE [EXTRA_JS]
# SHAPE names the documented payload; EXTRA_JS is an expression over b (body), d (b.data) and env
# that must be true. Prints the reason and exits 1 on a mismatch.
read -r -d '' CHECKER <<'JS'
const fs = require('node:fs');
const [label, status, expectedStatus, file, shape, extra] = process.argv.slice(1);
const env = process.env;
const text = fs.readFileSync(file, 'utf8');
const problems = [];
const fail = (message) => { throw new Error(message); };

const DMY = /^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const isTime = (v) => v !== null && typeof v === 'object' && DMY.test(v.local) && DMY.test(v.utc);
const TYPES = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  int: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  array: (v) => Array.isArray(v),
  object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
  dmy: (v) => typeof v === 'string' && DMY.test(v),
  iso: (v) => typeof v === 'string' && ISO.test(v),
  time: isTime,
};
function typeOk(value, type) {
  if (type.endsWith('?')) return value === null || typeOk(value, type.slice(0, -1));
  if (type.startsWith('enum:')) return type.slice(5).split('|').includes(value);
  return TYPES[type](value);
}
/** Every field of `spec` is present with its type; `where` says which object for the message. */
function fields(obj, spec, where) {
  if (!TYPES.object(obj)) fail(`${where} is not an object: ${JSON.stringify(obj)}`);
  for (const [name, type] of Object.entries(spec)) {
    if (!(name in obj)) fail(`${where} has no field "${name}"`);
    if (!typeOk(obj[name], type)) fail(`${where}.${name} should be ${type}, got ${JSON.stringify(obj[name])}`);
  }
}
function list(value, where, each) {
  if (!Array.isArray(value)) fail(`${where} is not an array`);
  value.forEach((item, i) => each(item, `${where}[${i}]`));
}

const DEVICE = {
  deviceId: 'string', name: 'string', plates: 'string', status: 'enum:Moving|Stopped|Inactive|Off', engineStatus: 'enum:On|Off',
  latitude: 'number?', longitude: 'number?', address: 'string?', speedKmh: 'int?', heading: 'int?', odometerKm: 'number?',
  satellites: 'int?', powerVoltage: 'string?', backupVoltage: 'string?', signalStrength: 'int?', connectionType: 'string?',
  lastReportUtc: 'iso?', minutesSinceReport: 'int?',
};
const GEOFENCE = { id: 'int', name: 'string', centerLat: 'number', centerLng: 'number', radiusMeters: 'number', vertexCount: 'int', vertices: 'array' };
const REPORT = { range: 'object', deviceCount: 'int', geofenceCount: 'int', included: 'array' };
const REPORT_ITEMS = {
  summary: { deviceId: 'string', deviceName: 'string', geofenceId: 'int', geofenceName: 'string', timesCrossed: 'int', firstCross: 'dmy', lastCross: 'dmy' },
  events: { deviceId: 'string', deviceName: 'string', geofenceName: 'string', eventType: 'enum:Entrada|Salida', dateTime: 'dmy' },
  visits: { deviceId: 'string', deviceName: 'string', geofenceName: 'string', entryTime: 'dmy', exitTime: 'dmy?', duration: 'string' },
};
const TRAVEL = {
  travelId: 'int', vehicle: 'string', status: 'enum:Scheduled|In progress|Completed|Cancelled', timezone: 'string', progress: 'number',
  totalWaypoints: 'int', completedWaypoints: 'int', startTime: 'time', waypoints: 'array',
};
const WAYPOINT = {
  order: 'int', geofence: 'string', status: 'enum:Completed|Pending|Cancelled', expectedArrival: 'time', arrivedAt: 'time?',
  estimatedArrival: 'time?', delayMinutes: 'int?', timing: 'string',
};
const SUMMARY = {
  travelId: 'int', vehicle: 'string', status: 'enum:Scheduled|In progress', progress: 'number', totalWaypoints: 'int',
  completedWaypoints: 'int', nextWaypoint: 'string?', delayMinutes: 'int?', timing: 'string', startTime: 'time',
};

function geofence(g, where) {
  fields(g, GEOFENCE, where);
  if (g.vertices.length !== g.vertexCount) fail(`${where} has vertexCount ${g.vertexCount} but ${g.vertices.length} vertices`);
  list(g.vertices, `${where}.vertices`, (v, w) => fields(v, { lat: 'number', lng: 'number' }, w));
}
function travel(t, where) {
  fields(t, TRAVEL, where);
  if (t.progress < 0 || t.progress > 100) fail(`${where}.progress ${t.progress} is not 0 to 100`);
  if (t.waypoints.length !== t.totalWaypoints) fail(`${where} has totalWaypoints ${t.totalWaypoints} but ${t.waypoints.length} waypoints`);
  list(t.waypoints, `${where}.waypoints`, (w, at) => fields(w, WAYPOINT, at));
  t.waypoints.forEach((w, i) => { if (w.order !== i + 1) fail(`${where}.waypoints[${i}].order is ${w.order}, expected ${i + 1}`); });
  if (t.waypoints[0]?.geofence !== 'Current position') fail(`${where}.waypoints[0].geofence is not "Current position"`);
}

const SHAPES = {
  devices: (d) => list(d, 'data', (x, w) => fields(x, DEVICE, w)),
  device: (d) => fields(d, DEVICE, 'data'),
  geofences: (d) => {
    list(d, 'data', geofence);
    const names = d.map((g) => g.name);
    const sorted = [...names].sort((a, b) => a.localeCompare(b));
    if (names.some((n, i) => n !== sorted[i])) fail(`geofences are not sorted by name: ${JSON.stringify(names)}`);
  },
  report: (d) => {
    fields(d, REPORT, 'data');
    fields(d.range, { from: 'dmy', to: 'dmy' }, 'data.range');
    for (const section of Object.keys(REPORT_ITEMS)) {
      if (d.included.includes(section)) list(d[section], `data.${section}`, (x, w) => fields(x, REPORT_ITEMS[section], w));
      else if (section in d) fail(`data.${section} is present but not in included`);
    }
    for (const v of d.visits ?? []) if (!/^\d+h \d+m$/.test(v.duration)) fail(`visit duration "${v.duration}" is not like "1h 5m"`);
  },
  travel: (d) => travel(d, 'data'),
  travels: (d) => list(d, 'data', (x, w) => fields(x, SUMMARY, w)),
  cancelled: (d) => fields(d, { travelId: 'int', status: 'enum:Cancelled', message: 'string' }, 'data'),
  error: () => undefined,
};
// The samples of travel create, get and cancel omit error and timestamp: there they are optional.
const LOOSE_ENVELOPE = new Set(['travel', 'cancelled']);

try {
  let b;
  try {
    b = JSON.parse(text);
  } catch {
    fail(`the response is not JSON: ${text.slice(0, 200)}`);
  }
  if (status !== expectedStatus) fail(`HTTP ${status}, expected ${expectedStatus}`);
  if (!TYPES.object(b)) fail('the response is not a JSON object');
  if (shape === 'error') {
    if (b.success !== false) fail(`success should be false, got ${JSON.stringify(b.success)}`);
    if (typeof b.error !== 'string' || b.error === '') fail('error should be a message');
    if (b.data != null) fail('data should be null on failure');
  } else {
    if (b.success !== true) fail(`success should be true, got ${JSON.stringify(b.success)} (error: ${JSON.stringify(b.error)})`);
    if (!('data' in b)) fail('the response has no data');
    const loose = LOOSE_ENVELOPE.has(shape);
    if (!(loose && !('error' in b)) && b.error !== null) fail(`error should be null, got ${JSON.stringify(b.error)}`);
    if (!(loose && !('timestamp' in b)) && !ISO.test(b.timestamp)) fail(`timestamp should be ISO 8601 UTC, got ${JSON.stringify(b.timestamp)}`);
  }
  SHAPES[shape](b.data);
  if (extra) {
    const d = b.data;
    if (!eval(extra)) fail(`expected ${extra}`);
  }
} catch (error) {
  console.error(`not ok - ${label}: ${error.message}`);
  console.error(`  response (HTTP ${status}): ${text.slice(0, 1000)}`);
  process.exit(1);
}
console.log(`ok - ${label}`);
JS

# request METHOD PATH [JSON_BODY] [noauth]: the status goes to $STATUS, the body to $BODY.
request() {
  local method="$1" path="$2" data="${3:-}" auth="${4:-}"
  local args=(-sS -X "$method" -o "$BODY" -w '%{http_code}' --max-time 30 -H 'Accept: application/json')
  [ "$auth" = noauth ] || args+=(-H "Authorization: Bearer $API_KEY")
  [ -n "$data" ] && args+=(-H 'Content-Type: application/json' --data "$data")
  if ! STATUS="$(curl "${args[@]}" "$API$path")"; then
    echo "not ok - $method $path: curl failed; is the server running at $BASE_URL?" >&2
    exit 1
  fi
}

# check LABEL EXPECTED_STATUS SHAPE [EXTRA_JS]
check() {
  CHECKS=$((CHECKS + 1))
  node -e "$CHECKER" "$1" "$STATUS" "$2" "$BODY" "$3" "${4:-}" || exit 1
}

# field JS_EXPRESSION: a value out of the last response, with d = its data.
field() {
  node -e 'const b = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8")); const d = b.data; console.log(eval(process.argv[2]));' "$BODY" "$1"
}

# Local times for the travel, in the key user's timezone: dd/MM/yyyy HH:mm, 3 and 4 hours ahead; and today's date.
read -r START ARRIVE TODAY_START TODAY_END TODAY < <(node -e '
  const zone = process.env.TIMEZONE;
  const parts = (ms) => Object.fromEntries(
    new Intl.DateTimeFormat("en-GB", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" })
      .formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  const dmy = (ms) => { const p = parts(ms); return `${p.day}/${p.month}/${p.year}_${p.hour}:${p.minute}`; };
  const now = Date.now();
  const p = parts(now);
  const day = `${p.day}/${p.month}/${p.year}`;
  console.log(dmy(now + 3 * 3600e3), dmy(now + 4 * 3600e3), `${day}_00:00`, `${day}_23:59`, `${p.year}-${p.month}-${p.day}`);
') || { echo "curl-tour: could not compute local times for TIMEZONE $TIMEZONE" >&2; exit 2; }
export START="${START/_/ }" ARRIVE="${ARRIVE/_/ }" TODAY_START="${TODAY_START/_/ }" TODAY_END="${TODAY_END/_/ }"

echo "# fleetcore curl tour against $API"

# 1. GET /devices/status
request GET /devices/status
check "GET /api/v1/devices/status" 200 devices 'd.length > 0 && d.some((x) => x.deviceId === env.IMEI)'

# 2. GET /devices/{imei}/status, and an IMEI nobody has
request GET "/devices/$IMEI/status"
check "GET /api/v1/devices/$IMEI/status" 200 device 'd.deviceId === env.IMEI'
request GET /devices/000000000000000/status
check "GET /api/v1/devices/000000000000000/status is 404" 404 error 'b.error === "Device not found or no access"'

# 3. GET /geofences
request GET /geofences
check "GET /api/v1/geofences" 200 geofences 'd.some((g) => g.name === env.GEOFENCE)'

# 4. GET /reports/geofences, and without `to`
request GET "/reports/geofences?from=$TODAY&to=$TODAY"
check "GET /api/v1/reports/geofences?from=$TODAY&to=$TODAY" 200 report \
  'd.range.from === env.TODAY_START && d.range.to === env.TODAY_END && d.included.join() === "summary,events,visits" && d.geofenceCount === 0'
request GET "/reports/geofences?from=$TODAY"
check "GET /api/v1/reports/geofences without to is 400" 400 error '/required/i.test(b.error)'

# 5. POST /travels
TRAVEL_BODY="$(node -e 'const e = process.env; console.log(JSON.stringify({ vehicle: e.VEHICLE, startTime: e.START, waypoints: [{ geofence: e.GEOFENCE, expectedArrival: e.ARRIVE }] }))')"
request POST /travels "$TRAVEL_BODY"
check "POST /api/v1/travels ($VEHICLE to $GEOFENCE at $ARRIVE)" 200 travel \
  'd.vehicle === env.VEHICLE && d.status === "Scheduled" && d.progress === 0 && d.completedWaypoints === 0 && d.totalWaypoints === 2
   && d.timezone === env.TIMEZONE && d.startTime.local === env.START
   && d.waypoints[1].geofence === env.GEOFENCE && d.waypoints[1].expectedArrival.local === env.ARRIVE
   && d.waypoints.every((w) => w.status === "Pending" && w.arrivedAt === null && w.estimatedArrival === null && w.delayMinutes === null && w.timing === "")'
export TRAVEL_ID="$(field d.travelId)"

# 6. GET /travels/{id}
request GET "/travels/$TRAVEL_ID"
check "GET /api/v1/travels/$TRAVEL_ID" 200 travel 'd.travelId === Number(env.TRAVEL_ID) && d.status === "Scheduled" && d.vehicle === env.VEHICLE'

# 7. GET /travels
request GET /travels
check "GET /api/v1/travels" 200 travels \
  'd.some((t) => t.travelId === Number(env.TRAVEL_ID) && t.status === "Scheduled" && t.vehicle === env.VEHICLE && t.totalWaypoints === 2)'

# 8. DELETE /travels/{id}, then once more
request DELETE "/travels/$TRAVEL_ID"
check "DELETE /api/v1/travels/$TRAVEL_ID" 200 cancelled 'd.travelId === Number(env.TRAVEL_ID) && d.message.length > 0'
request DELETE "/travels/$TRAVEL_ID"
check "DELETE /api/v1/travels/$TRAVEL_ID again is refused" 400 error
request GET /travels
check "GET /api/v1/travels no longer lists $TRAVEL_ID" 200 travels 'd.every((t) => t.travelId !== Number(env.TRAVEL_ID))'

# No key: 401
request GET /devices/status '' noauth
check "GET /api/v1/devices/status without a key is 401" 401 error

echo "# all $CHECKS checks passed"
