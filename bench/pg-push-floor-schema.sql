-- The tables, keys and rows bench/pg-push-floor.sql needs: the server's push path's tables as its migrations make them.
CREATE TABLE account (id BIGSERIAL PRIMARY KEY, name TEXT UNIQUE NOT NULL, next_position BIGINT NOT NULL DEFAULT 0, compacted_at_position BIGINT NOT NULL DEFAULT 0);
CREATE TABLE device (account BIGINT NOT NULL, name TEXT NOT NULL, highest_seq BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (account, name));
CREATE TABLE change (account BIGINT NOT NULL, position BIGINT NOT NULL, device TEXT NOT NULL, seq BIGINT NOT NULL, hlc BIGINT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (account, position));
CREATE TABLE server_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE token (hash TEXT PRIMARY KEY, account BIGINT NOT NULL, device TEXT NOT NULL);
INSERT INTO server_meta VALUES ('cursorGeneration', 'abc');
INSERT INTO account (name) VALUES ('bench');
INSERT INTO device (account, name) SELECT 1, 'device-' || i FROM generate_series(1, 8) i;
INSERT INTO token SELECT 'hash-' || i, 1, 'device-' || i FROM generate_series(1, 8) i;
ALTER TABLE change ADD UNIQUE (account, device, seq);
ALTER TABLE device ADD FOREIGN KEY (account) REFERENCES account(id);
ALTER TABLE token ADD FOREIGN KEY (account, device) REFERENCES device(account, name);
