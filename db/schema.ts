import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';
import type { NotificationChannel, NotificationRecipient } from '../domain/notifications/notification-rule.ts';
import type { NotificationSchedule } from '../domain/notifications/notification-schedule.ts';
import type { PendingCrossing } from '../domain/geofences/pending-crossing.ts';
import type { Role as UserRole } from '../domain/access/roles.ts';

/** Written as a Date or ISO string, read back as a Date. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export type DeviceMode = 'live' | 'test';
export type GeofenceKind = 'polygon' | 'circle';
export type GeofenceEventType = 'enter' | 'exit';
export type WaypointStatus = 'pending' | 'completed' | 'cancelled';

/** Numeric codes of travel status; 0 and 1 are the specification's own numbers. */
export const TravelStatus = { Scheduled: 0, InProgress: 1, Completed: 2, Cancelled: 3 } as const;
export type TravelStatusCode = (typeof TravelStatus)[keyof typeof TravelStatus];

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  /** Speed limit of the account's vehicles that have none of their own; null: no overspeed events. */
  speed_limit_kmh: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: CreatedAt;
}

export interface UsersTable {
  id: Generated<number>;
  account_id: number;
  email: string;
  name: string | null;
  timezone: string;
  created_at: CreatedAt;
  /** What the user may do in the account (domain/access/roles.ts); bounds every credential of theirs. */
  role: ColumnType<UserRole, UserRole | undefined, UserRole>;
  /** When the user was removed (kept for the audit log); null while they are a user. */
  removed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** argon2id hash of the user's password (PHC string); null while none is set. Never sent to clients. */
  password_hash: ColumnType<string | null, string | null | undefined, string | null>;
  password_changed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface ApiKeysTable {
  id: Generated<number>;
  user_id: number;
  name: string | null;
  /** First characters of the key, kept in clear so an operator can tell keys apart. */
  prefix: string;
  /** SHA-256 of the whole key, hex. */
  key_hash: string;
  mode: DeviceMode;
  permissions: string[];
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
  created_at: CreatedAt;
  /** The credential that minted it through the API (at most one of the two); revoking that revokes this. */
  parent_api_key_id: number | null;
  parent_oauth_client_id: number | null;
}

export interface DevicesTable {
  id: Generated<number>;
  account_id: number;
  imei: string;
  name: string;
  plates: string;
  protocol: string | null;
  mode: DeviceMode;
  /** This vehicle's speed limit; null: the account's. */
  speed_limit_kmh: ColumnType<number | null, number | null | undefined, number | null>;
  /** The fuel tank's capacity in litres, for fuel levels and changes in litres; null: unknown. */
  fuel_tank_litres: ColumnType<number | null, number | null | undefined, number | null>;
  /** The last driver identifier this vehicle reported that matched no registered driver. */
  unknown_driver_identifier: ColumnType<string | null, string | null | undefined, string | null>;
  unknown_driver_seen_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  created_at: CreatedAt;
}

/** A user's direct grant of one device (written by the vehicles API, `fleet device add`). */
export interface UserDevicesTable {
  user_id: number;
  device_id: number;
}

/**
 * The view `user_devices`: what a user sees, their direct grants united with their groups' vehicles
 * (db/migrations/0025-vehicle-groups.ts). Read-only: write `user_device_grants` or the groups.
 */
export interface UserVisibleDevicesView {
  user_id: ColumnType<number, never, never>;
  device_id: ColumnType<number, never, never>;
}

/** A named set of an account's vehicles of one mode; users granted it see them (docs/api/groups.md). */
export interface VehicleGroupsTable {
  id: Generated<number>;
  account_id: number;
  mode: DeviceMode;
  name: string;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface VehicleGroupDevicesTable {
  group_id: number;
  device_id: number;
}

export interface UserVehicleGroupsTable {
  user_id: number;
  group_id: number;
}

/** The newest fix of a device, with the telemetry the status endpoints show. */
export interface DeviceStatesTable {
  device_id: number;
  /** Null until the device's first fix (the row exists from its registration). */
  fix_time: Timestamp | null;
  /** The fix time before the batch that last moved the state (ingest's late-fix test). */
  previous_fix_time: Timestamp | null;
  /** Server time of the last packet of any kind (fix, heartbeat); moves even when a fix is older. Null before the first. */
  last_report_at: Timestamp | null;
  valid: boolean | null;
  latitude: number | null;
  longitude: number | null;
  altitude: number | null;
  speed_kmh: number | null;
  heading: number | null;
  satellites: number | null;
  ignition: boolean | null;
  motion: boolean | null;
  odometer_km: number | null;
  power_voltage: number | null;
  backup_voltage: number | null;
  signal_strength: number | null;
  connection_type: string | null;
  /** Reverse-geocoded by the engine after the commit (engine/geocoding/address-keeper.ts); null until then or when none was found. */
  address: string | null;
  /** The point `address` was looked up for: a device within the reuse distance of it keeps the address. */
  address_latitude: number | null;
  address_longitude: number | null;
  address_at: Timestamp | null;
  /** Claimed by an engine process until then, or after a failed lookup, not tried again before. */
  address_due_at: Timestamp | null;
  driver_id: string | null;
  attributes: ColumnType<Record<string, unknown>, string | undefined, string>;
}

export interface PositionsTable {
  device_id: number;
  fix_time: Timestamp;
  server_time: ColumnType<Date, Date | string | undefined, never>;
  valid: boolean;
  latitude: number;
  longitude: number;
  altitude: number | null;
  speed_kmh: number | null;
  heading: number | null;
  satellites: number | null;
  ignition: boolean | null;
  attributes: ColumnType<Record<string, unknown>, string | undefined, string>;
}

export interface GeofencesTable {
  id: Generated<number>;
  account_id: number;
  /** Whose keys see it: the account's live or its test keys (the engine matches it to vehicles of this mode). */
  mode: ColumnType<DeviceMode, DeviceMode | undefined, DeviceMode>;
  name: string;
  kind: GeofenceKind;
  center_lat: number;
  center_lng: number;
  radius_m: number;
  vertex_count: number;
  vertices: ColumnType<Array<{ lat: number; lng: number }>, string, string>;
  /** Debounce: a device must stay inside this long before its enter counts (0: at once). */
  enter_dwell_s: ColumnType<number, number | undefined, number>;
  /** Debounce: a device must stay outside this long before its exit counts (0: at once). */
  exit_dwell_s: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface GeofenceEventsTable {
  id: Generated<string>;
  device_id: number;
  geofence_id: number;
  type: GeofenceEventType;
  fix_time: Timestamp;
  latitude: number;
  longitude: number;
  created_at: CreatedAt;
}

export interface GeofenceVisitsTable {
  id: Generated<string>;
  device_id: number;
  geofence_id: number;
  entry_time: Timestamp;
  exit_time: Timestamp | null;
}

export interface TravelsTable {
  id: Generated<number>;
  account_id: number;
  device_id: number;
  created_by_user_id: number;
  status: ColumnType<TravelStatusCode, TravelStatusCode | undefined, TravelStatusCode>;
  start_time: Timestamp;
  start_latitude: number | null;
  start_longitude: number | null;
  started_at: Timestamp | null;
  completed_at: Timestamp | null;
  cancelled_at: Timestamp | null;
  created_at: CreatedAt;
}

export interface TravelWaypointsTable {
  travel_id: number;
  /** The waypoint's `order`; 1 is the vehicle's position at the start time. */
  seq: number;
  geofence_id: number | null;
  /** Kept with the waypoint so a renamed or deleted geofence does not rewrite history. */
  geofence_name: string;
  status: ColumnType<WaypointStatus, WaypointStatus | undefined, WaypointStatus>;
  expected_arrival: Timestamp;
  arrived_at: Timestamp | null;
  estimated_arrival: Timestamp | null;
  estimated_at: Timestamp | null;
  /** When the live estimate first went past the on-time tolerance (`travel.delayed` is logged then, once). */
  delayed_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface DeviceEngineStatesTable {
  device_id: number;
  cursor_fix_time: Timestamp | null;
  inside: ColumnType<number[], number[] | undefined, number[]>;
  pending: ColumnType<PendingCrossing[], string | undefined, string>;
  status: 'Moving' | 'Stopped' | 'Off' | 'Inactive' | null;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** Fixes met after the cursor had passed them: evaluated within the late window, or only counted. */
  late_fixes: ColumnType<number, number | undefined, number>;
  late_fixes_ignored: ColumnType<number, number | undefined, number>;
  /** The last ignition a fix reported (null: none yet), for `vehicle.ignition.*` across batches. */
  ignition: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  /** In a speeding stretch: over the limit, not yet back under it minus the hysteresis. */
  overspeed: ColumnType<boolean, boolean | undefined, boolean>;
  /** The trip segmenter's state (engine/trips/trip-segmenter.ts); null before the first fix. */
  segment: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** The server's odometer and engine hours (domain/accumulators/vehicle-accumulators.ts); null before the first step. */
  accumulators: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** Harsh driving and idling (domain/driving/driving-behaviour.ts); null before the first step. */
  driving: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** Fuel refills and drops (domain/fuel/fuel-events.ts); null for a vehicle never seen with a fuel reading. */
  fuel: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
}

/** An installer's odometer and engine hours for a vehicle, with the server's counts when each was set. */
export interface VehicleBaselinesTable {
  device_id: number;
  odometer_km: number | null;
  odometer_from_m: ColumnType<number, number | undefined, number>;
  odometer_set_at: Timestamp | null;
  engine_hours: number | null;
  engine_from_s: ColumnType<number, number | undefined, number>;
  engine_set_at: Timestamp | null;
}

/** A vehicle's maintenance item (db/migrations/0019-maintenance.ts); dates are read as text (`::text`). */
export interface MaintenanceItemsTable {
  id: Generated<number>;
  device_id: number;
  name: string;
  kind: 'odometer' | 'engineHours' | 'calendar';
  interval: number;
  tolerance: number;
  next_due: number | null;
  next_due_date: string | null;
  due_logged: string | null;
  overdue_logged: string | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** A service recorded against a maintenance item, with the threshold it set. */
export interface MaintenanceServicesTable {
  id: Generated<number>;
  item_id: number;
  performed_on: string;
  odometer_km: number | null;
  engine_hours: number | null;
  note: string | null;
  cost: number | null;
  next_due: number | null;
  next_due_date: string | null;
  created_at: CreatedAt;
}

export interface GeofenceChangesTable {
  id: Generated<number>;
  geofence_id: number;
  account_id: number;
  changed_at: CreatedAt;
  /** The writing transaction's id (xid8, as text): visible changes are told apart from those still to come. */
  xid: ColumnType<string, never, never>;
}

/** The event log: append-only, ids in commit order (see db/event-log.ts). */
export interface EventsTable {
  /** bigint, read as a number; the event log's queries read it as text, since ids are 64-bit. */
  id: ColumnType<number, never, never>;
  account_id: number;
  device_id: number | null;
  user_id: number | null;
  mode: DeviceMode | null;
  type: string;
  occurred_at: Timestamp;
  recorded_at: ColumnType<Date, Date | string | undefined, never>;
  data: ColumnType<Record<string, unknown>, string, string>;
  dedupe_key: string | null;
}

/** A signed-in browser: only the SHA-256 of its cookie's token is kept. */
export interface UserSessionsTable {
  id: string;
  token_hash: string;
  user_id: number;
  created_at: CreatedAt;
  last_seen_at: ColumnType<Date, Date | undefined, Date>;
  expires_at: Timestamp;
  idle_expires_at: Timestamp;
  revoked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  user_agent: string | null;
  address: string | null;
}

/** A one-time link's token (hashed) that lets its user set a password once, before it expires. */
export interface SignInTokensTable {
  token_hash: string;
  user_id: number;
  created_at: CreatedAt;
  expires_at: Timestamp;
}

/** A first-run setup link's token (hashed): creates the first account once, while none exists, before it expires. */
export interface FirstRunTokensTable {
  token_hash: string;
  created_at: CreatedAt;
  expires_at: Timestamp;
}

/** A short-lived token that opens event streams for one API key (a browser's EventSource cannot send headers). */
export interface StreamTokensTable {
  token_hash: string;
  /** The credential the token was made with: an API key or an OAuth access token, one of them. */
  api_key_id: number | null;
  oauth_token_id: string | null;
  expires_at: Timestamp;
}

export interface OauthClientsTable {
  id: Generated<number>;
  client_id: string;
  /** SHA-256 of the secret, hex; the secret itself is shown once. */
  secret_hash: string;
  user_id: number;
  mode: DeviceMode;
  name: string | null;
  /** Permission names the client may ask tokens for. */
  scopes: string[];
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
  created_at: CreatedAt;
  /** The credential that minted it through the API (at most one of the two); revoking that revokes this. */
  parent_api_key_id: number | null;
  parent_oauth_client_id: number | null;
}

export interface OauthTokensTable {
  id: ColumnType<string, never, never>;
  token_hash: string;
  client_id: number;
  scopes: string[];
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  created_at: CreatedAt;
}

export type AuditActorKind = 'api_key' | 'oauth_client' | 'cli' | 'session';

/** Who changed access, webhooks or commands, what, when and from where (db/audit-log.ts). */
export interface AuditLogTable {
  id: ColumnType<string, never, never>;
  account_id: number;
  mode: DeviceMode;
  actor_kind: AuditActorKind;
  api_key_id: number | null;
  oauth_client_id: number | null;
  user_id: number | null;
  action: string;
  target_type: string;
  target_id: string;
  details: ColumnType<Record<string, unknown>, string | undefined, string>;
  remote_address: string | null;
  occurred_at: CreatedAt;
}

/** Telemetry without a fix: alarms, battery, power cut, signal, command answers. */
export interface DeviceReportsTable {
  id: Generated<number>;
  device_id: number;
  report_time: Timestamp;
  received_at: Timestamp;
  attributes: ColumnType<Record<string, unknown>, string, string>;
}

/** A fix stored after a newer fix of its device: the engine evaluated past it, or may have. */
export interface LateFixesTable {
  device_id: number;
  fix_time: Timestamp;
  received_at: ColumnType<Date, Date | string | undefined, never>;
}

/** A record the database refused even after range checks; the tracker was acknowledged. */
export interface IngestDeadLettersTable {
  id: Generated<number>;
  device_id: number | null;
  protocol: string | null;
  record: ColumnType<Record<string, unknown>, string, string>;
  frame: Buffer | null;
  error: string;
  sqlstate: string | null;
  created_at: CreatedAt;
  replayed_at: Timestamp | null;
}

export interface WebhooksTable {
  id: Generated<number>;
  account_id: number;
  user_id: number;
  mode: DeviceMode;
  url: string;
  /** Event kinds and families (ending in `*`) as the user gave them. */
  events: string[];
  description: string | null;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  disabled_reason: string | null;
  disabled_at: Timestamp | null;
  /** `whsec_<base64>`; the previous one also signs until `previous_secret_expires_at`. */
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  consecutive_failures: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveriesTable {
  /** bigint, read as a number (db/database.ts); shown as a string by the API. */
  id: ColumnType<number, never, never>;
  webhook_id: number;
  /** The logged event; null for a test ping, whose payload is kept in `payload`. */
  event_id: ColumnType<number | null, string | number | null | undefined, never>;
  event_type: string;
  payload: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  status: ColumnType<WebhookDeliveryStatus, WebhookDeliveryStatus | undefined, WebhookDeliveryStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp | null;
  claimed_until: Timestamp | null;
  last_attempt_at: Timestamp | null;
  last_status_code: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  created_at: CreatedAt;
}

export interface WebhookDeliveryAttemptsTable {
  delivery_id: number | string;
  attempt: number;
  attempted_at: Timestamp;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export interface EventFanoutCursorTable {
  singleton: ColumnType<boolean, boolean | undefined, never>;
  last_event_id: ColumnType<string, string | number, string | number>;
}

/** An account's notification rule (docs/notifications.md): which events, vehicles, geofences, when, how often, to whom. */
export interface NotificationRulesTable {
  id: Generated<number>;
  account_id: number;
  mode: DeviceMode;
  created_by: number | null;
  name: string;
  /** Event kinds and families (ending in `*`) as the user gave them. */
  events: string[];
  vehicle_scope: 'all' | 'groups' | 'list';
  group_ids: ColumnType<number[], number[] | undefined, number[]>;
  device_ids: ColumnType<number[], number[] | undefined, number[]>;
  /** Null: any geofence (or none, for kinds without one). */
  geofence_ids: number[] | null;
  /** domain/notifications/notification-schedule.ts's NotificationSchedule; null: at any time. */
  schedule: ColumnType<NotificationSchedule | null, string | null, string | null>;
  timezone: string;
  min_interval_s: ColumnType<number, number | undefined, number>;
  recipients: ColumnType<NotificationRecipient[], string, string>;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}


/** A user's own addresses for notifications, and whether they are muted. */
export interface NotificationChannelsTable {
  user_id: number;
  /** Null: the user's sign-in email. */
  email: string | null;
  telegram_chat_id: string | null;
  phone: string | null;
  muted: ColumnType<boolean, boolean | undefined, boolean>;
  muted_until: Timestamp | null;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** A browser a user subscribed for web push (the Push API's subscription). */
export interface PushSubscriptionsTable {
  id: Generated<number>;
  user_id: number;
  endpoint: string;
  p256dh: string;
  auth: string;
  user_agent: string | null;
  created_at: CreatedAt;
}

/** A user's daily or weekly summary by email. */
export interface ReportSubscriptionsTable {
  id: Generated<number>;
  account_id: number;
  user_id: number;
  mode: DeviceMode;
  frequency: 'daily' | 'weekly';
  /** Which reports: `trips`, `geofences`, `maintenance`. */
  reports: string[];
  /** `HH:mm` in `timezone`. */
  local_time: string;
  /** ISO weekday (1 = Monday) for a weekly one. */
  weekday: number | null;
  timezone: string;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  next_run_at: Timestamp;
  last_run_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export type NotificationDeliveryStatus = 'pending' | 'succeeded' | 'failed';

/** One message to send: an event for a recipient on a channel (and browser), or one run of a scheduled report. */
export interface NotificationDeliveriesTable {
  /** bigint, read as a number; shown as a string by the API. */
  id: ColumnType<number, never, never>;
  account_id: number;
  rule_id: number | null;
  report_subscription_id: number | null;
  user_id: number;
  channel: NotificationChannel;
  push_subscription_id: number | null;
  event_id: ColumnType<number | null, string | number | null | undefined, never>;
  event_type: string | null;
  period_start: Timestamp | null;
  period_end: Timestamp | null;
  status: ColumnType<NotificationDeliveryStatus, NotificationDeliveryStatus | undefined, NotificationDeliveryStatus>;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: ColumnType<Date, Date | string | undefined, Date | string>;
  claimed_until: Timestamp | null;
  last_attempt_at: Timestamp | null;
  last_error: string | null;
  delivered_at: Timestamp | null;
  created_at: CreatedAt;
}

export interface NotificationRuleVehiclesTable {
  rule_id: number;
  device_id: number;
  last_notified_at: Timestamp;
}

export interface NotificationFanoutCursorTable {
  last_event_id: ColumnType<string, string | number, string | number>;
}

/** The tracker connection a device was last seen on, while it is open (as far as ingest knows). */
export interface DeviceConnectionsTable {
  device_id: number;
  connection_id: string;
  protocol: string;
  remote_address: string | null;
  connected_at: Timestamp;
}

export interface DriversTable {
  id: Generated<number>;
  account_id: number;
  mode: DeviceMode;
  name: string;
  /** iButton / RFID / card number, as the trackers report it (Teltonika iButton: 16 hex digits). */
  identifier: string;
  phone: string | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export type DriverAssignmentSource = 'telemetry' | 'manual';

/** Who drove which vehicle from when to when; `until` null: the current assignment. */
export interface DriverAssignmentsTable {
  id: ColumnType<number, never, never>;
  driver_id: number;
  device_id: number;
  since: Timestamp;
  until: Timestamp | null;
  source: DriverAssignmentSource;
}

/** A trip as the engine segmented it; `end_time` null while in progress. */
export interface TripsTable {
  id: ColumnType<number, never, never>;
  device_id: number;
  start_time: Timestamp;
  end_time: Timestamp | null;
  last_fix_time: Timestamp;
  start_lat: number;
  start_lng: number;
  end_lat: number;
  end_lng: number;
  start_geofence: string | null;
  end_geofence: string | null;
  distance_m: number;
  driving_s: number;
  idle_s: number;
  overspeed_s: number;
  max_speed_kmh: number;
  harsh_events: number;
  driver_id: number | null;
  /** Reverse-geocoded after the commit; the end's once the trip has ended. Null until then or when none was found. */
  start_address: string | null;
  end_address: string | null;
  address_due_at: Timestamp | null;
}

/** A stop between trips; `end_time` null while the vehicle is still there. */
export interface StopsTable {
  id: ColumnType<number, never, never>;
  device_id: number;
  start_time: Timestamp;
  end_time: Timestamp | null;
  last_fix_time: Timestamp;
  lat: number;
  lng: number;
  geofence: string | null;
  engine_idle_s: number;
  /** Reverse-geocoded after the commit; null until then or when none was found. */
  address: string | null;
  address_due_at: Timestamp | null;
}

/** A photo a tracker sent (db/media.ts); its account and mode are its device's. */
export interface MediaTable {
  id: ColumnType<number, never, never>;
  device_id: number;
  taken_at: Timestamp;
  received_at: ColumnType<Date, Date | string | undefined, never>;
  content_type: string;
  size: number;
  file_name: string;
  /** Hex SHA-256 of `bytes`. */
  sha256: string;
  protocol: string;
  command_id: number | null;
  bytes: Buffer;
}

export type CommandStatus = 'queued' | 'sent' | 'acknowledged' | 'failed' | 'expired' | 'cancelled';

/** A remote command and its state (db/commands.ts). */
export interface CommandsTable {
  id: ColumnType<number, never, never>;
  account_id: number;
  device_id: number;
  api_key_id: number | null;
  user_id: number | null;
  type: string;
  params: ColumnType<Record<string, unknown>, string | undefined, string>;
  text: string | null;
  status: ColumnType<CommandStatus, CommandStatus | undefined, CommandStatus>;
  status_reason: string | null;
  attempts: ColumnType<number, number | undefined, number>;
  idempotency_key: string | null;
  response: string | null;
  created_at: CreatedAt;
  sent_at: Timestamp | null;
  acknowledged_at: Timestamp | null;
  finished_at: Timestamp | null;
  expires_at: Timestamp;
  max_attempts: ColumnType<number, number | undefined, number>;
  requested_from: string | null;
  oauth_client_id: number | null;
}

export interface Database {
  oauth_clients: OauthClientsTable;
  oauth_tokens: OauthTokensTable;
  audit_log: AuditLogTable;
  commands: CommandsTable;
  media: MediaTable;
  drivers: DriversTable;
  driver_assignments: DriverAssignmentsTable;
  trips: TripsTable;
  stops: StopsTable;
  device_connections: DeviceConnectionsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  event_fanout_cursor: EventFanoutCursorTable;
  notification_rules: NotificationRulesTable;
  notification_channels: NotificationChannelsTable;
  push_subscriptions: PushSubscriptionsTable;
  report_subscriptions: ReportSubscriptionsTable;
  notification_deliveries: NotificationDeliveriesTable;
  notification_rule_vehicles: NotificationRuleVehiclesTable;
  notification_fanout_cursor: NotificationFanoutCursorTable;
  device_reports: DeviceReportsTable;
  late_fixes: LateFixesTable;
  ingest_dead_letters: IngestDeadLettersTable;
  device_engine_states: DeviceEngineStatesTable;
  vehicle_baselines: VehicleBaselinesTable;
  maintenance_items: MaintenanceItemsTable;
  maintenance_services: MaintenanceServicesTable;
  geofence_changes: GeofenceChangesTable;
  events: EventsTable;
  stream_tokens: StreamTokensTable;
  user_sessions: UserSessionsTable;
  sign_in_tokens: SignInTokensTable;
  first_run_tokens: FirstRunTokensTable;
  accounts: AccountsTable;
  users: UsersTable;
  api_keys: ApiKeysTable;
  devices: DevicesTable;
  user_device_grants: UserDevicesTable;
  user_devices: UserVisibleDevicesView;
  vehicle_groups: VehicleGroupsTable;
  vehicle_group_devices: VehicleGroupDevicesTable;
  user_vehicle_groups: UserVehicleGroupsTable;
  device_states: DeviceStatesTable;
  positions: PositionsTable;
  geofences: GeofencesTable;
  geofence_events: GeofenceEventsTable;
  geofence_visits: GeofenceVisitsTable;
  travels: TravelsTable;
  travel_waypoints: TravelWaypointsTable;
}

export type Account = Selectable<AccountsTable>;
export type User = Selectable<UsersTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type Device = Selectable<DevicesTable>;
export type DeviceState = Selectable<DeviceStatesTable>;
export type NewPosition = Insertable<PositionsTable>;
export type Geofence = Selectable<GeofencesTable>;
export type Travel = Selectable<TravelsTable>;
export type TravelWaypoint = Selectable<TravelWaypointsTable>;
