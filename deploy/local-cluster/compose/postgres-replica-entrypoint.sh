#!/bin/bash
# The streaming replica: on its first start a copy of the primary (pg_basebackup -R writes
# standby.signal and primary_conninfo), then PostgreSQL as a hot standby. Runs as the postgres user.
set -euo pipefail
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until pg_isready -q -h "$PRIMARY_HOST" -U "$POSTGRES_USER" -d "$POSTGRES_DB"; do sleep 1; done
  PGPASSWORD="$REPLICATION_PASSWORD" pg_basebackup -h "$PRIMARY_HOST" -U replicator -D "$PGDATA" -R -X stream --checkpoint=fast
  chmod 0700 "$PGDATA"
fi
exec postgres
