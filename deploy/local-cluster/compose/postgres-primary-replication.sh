#!/bin/bash
# Run once by the postgres image's entrypoint (/docker-entrypoint-initdb.d) when the primary's data
# directory is made: a role the replica streams as, and the pg_hba.conf line that lets it.
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -c "CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD '${REPLICATION_PASSWORD:?set REPLICATION_PASSWORD}'"
echo "host replication replicator all scram-sha-256" >> "$PGDATA/pg_hba.conf"
