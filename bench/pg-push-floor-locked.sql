-- The floor under a PostgreSQL push that is not one statement (a retry, a gap, a revoked token): the
-- transaction of PostgresPushStatements.LockDevice then Append (BENCHMARKS.md, "The PostgreSQL push beside its floor").
-- Schema: bench/pg-push-floor-schema.sql. Run: pgbench -n -M prepared -c 8 -j 2 -t 2500 -f bench/pg-push-floor-locked.sql
\set d random(1, 8)
BEGIN;
SELECT (SELECT highest_seq FROM device WHERE account = 1 AND name = 'device-' || :d FOR UPDATE), (SELECT value FROM server_meta WHERE key = 'cursorGeneration'), EXISTS (SELECT 1 FROM token WHERE hash = 'hash-' || :d AND account = 1 AND device = 'device-' || :d);
WITH counter AS (UPDATE account SET next_position = next_position + 1 WHERE id = 1 RETURNING next_position, compacted_at_position), appended AS (INSERT INTO change (account, position, device, seq, hlc, kind, body) SELECT 1, (SELECT next_position FROM counter) - 1 + batch.o, 'device-' || :d, s, h, k, b FROM UNNEST(ARRAY[(SELECT highest_seq + 1 FROM device WHERE account = 1 AND name = 'device-' || :d)]::BIGINT[], ARRAY[1700000000000]::BIGINT[], ARRAY['donation']::TEXT[], ARRAY['{"device":"d","seq":1,"hlc":"018bcfe56800-0000","kind":"donation","event":"e","id":"d:1","date":1700000000000}']::TEXT[]) WITH ORDINALITY AS batch(s, h, k, b, o)), moved AS (UPDATE device SET highest_seq = highest_seq + 1 WHERE account = 1 AND name = 'device-' || :d) SELECT next_position, compacted_at_position, pg_notify('tipsync_changes', '1')::TEXT FROM counter;
COMMIT;
