-- Presence: whether each seated player's connection to the table (their Watch
-- stream) is up, told to the other seats.
--
-- Each stream of a seated player holds a lease, renewed by the replica serving
-- it every few seconds and ended when the stream closes. A replica that dies
-- renews nothing: its leases run out on their own. A seat is told connected as
-- soon as a lease of its appears, and disconnected only once it has had none for
-- a few seconds (a stream moving to another replica, a short blip, is no news).
CREATE TABLE watch_leases (
    stream_id  uuid PRIMARY KEY,
    table_id   uuid NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    seat       smallint NOT NULL,
    -- Renewed while the stream is open; set to the stream's end when it closes.
    expires_at timestamptz NOT NULL,
    -- The stream closed: a renewal on the way (sent before the close) is ignored.
    ended      boolean NOT NULL DEFAULT false
);

-- "Has this seat had a lease lately?"
CREATE INDEX watch_leases_seat_idx ON watch_leases (table_id, seat, expires_at);
-- Old leases are purged by expiry.
CREATE INDEX watch_leases_expires_at_idx ON watch_leases (expires_at);

-- The seats last told connected (a PlayerConnection event in the log), changed
-- under the table's row lock together with last_seq: read with the row, they are
-- exactly what the log says up to its last_seq. Presence never changes `version`.
ALTER TABLE tables ADD COLUMN connected_seats smallint[] NOT NULL DEFAULT '{}';

-- The presence sweep's query: live tables with a seat told connected.
CREATE INDEX tables_connected_seats_idx ON tables (id)
    WHERE status = 'active' AND cardinality(connected_seats) > 0;
