-- Rating buckets at two levels. A 1-point bucket (level 0, floor(rating)) of a
-- busy rule set holds thousands of players, since ratings cluster near 1500,
-- and a rank counted the players ahead within it one by one: a cost that grew
-- with the number of players. Each 1-point bucket is now cut into 64 fine ones
-- (level 1, floor(rating * 64)); a rank is the level-0 buckets above the
-- player's, plus the fine buckets above theirs within the same point, plus the
-- few ahead of them in their own fine bucket (`services/game/standings.py`).
-- 64, a power of two: rating * 64 is exact in floating point, so a rating is in
-- fine bucket k exactly when k / 64 <= rating < (k + 1) / 64, in SQL as in Python.
--
-- A level column in the same table rather than a table of its own: a game's
-- end moves both levels with one upsert whose rows go in one order (rule set,
-- level, bucket), so two games ending at once still never deadlock there; and
-- the rank sums each level over one range of the same key. The count keeps no
-- CHECK (players >= 0), for the reason 0014 gives (a player leaving a bucket is
-- an upsert of -1).
--
-- The key changes, so a game server of an earlier release cannot record a
-- game's end once this has run (its upsert names the old key): it fails rather
-- than leave the fine buckets uncounted, until the server is replaced.

ALTER TABLE rating_buckets ADD COLUMN level smallint NOT NULL DEFAULT 0;
ALTER TABLE rating_buckets DROP CONSTRAINT rating_buckets_pkey;
ALTER TABLE rating_buckets ADD PRIMARY KEY (ruleset, level, bucket);
COMMENT ON COLUMN rating_buckets.level IS
    '0: bucket = floor(rating); 1: bucket = floor(rating * 64)';

INSERT INTO rating_buckets (ruleset, level, bucket, players)
SELECT ruleset, 1, floor(rating * 64)::bigint, count(*) FROM player_standings
WHERE rated_games > 0 GROUP BY ruleset, floor(rating * 64);
