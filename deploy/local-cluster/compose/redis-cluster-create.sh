#!/bin/sh
# Joins the Redis nodes named as arguments (addresses, port 6379) into a cluster of masters with a
# replica each, once: a cluster that already knows all of them (a second `up`) is left as it is.
set -eu
first="$1"
if redis-cli -h "$first" cluster info | grep -q "^cluster_known_nodes:$#"; then
  echo "the Redis Cluster is already made"
else
  redis-cli --cluster create $(for node in "$@"; do printf '%s:6379 ' "$node"; done) --cluster-replicas 1 --cluster-yes
fi
until redis-cli -h "$first" cluster info | grep -q '^cluster_state:ok'; do sleep 1; done
