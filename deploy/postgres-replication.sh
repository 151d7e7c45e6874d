#!/bin/sh
# docker-compose.cluster.yml, postgres-1 (run once, at its first start): the standby postgres-2
# replicates with the postgres user and its password; the image's own pg_hba.conf lets it
# connect to the databases but not for replication.
echo "host replication all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
