-- Ratings for tables of more than two: the Plackett-Luce model (openskill, see
-- services/common/rating.py) replaces pairwise Elo. A rating is a mean, kept in
-- `rating` on Elo's scale (the number players saw stays: 1500 for a newcomer,
-- anyone's former Elo rating as it was), and a deviation, new: how unsure the
-- mean still is, large for a newcomer (2 beta, about 246), shrinking with every
-- game towards a settled level (about 43). The matchmaker's rating window is
-- wider for a larger deviation, so tickets carry it too.
--
-- Carried over: mu = the former Elo rating, unchanged. sigma from the n games
-- behind it: the finished tables without bots (rated ones) the player sat at
-- that are still on record, or ceil(|rating - 1500| / 32) if that is more (a
-- rating that far from 1500 took at least that many Elo steps of at most 32;
-- purged tables are no longer on record):
--     sigma = sqrt(43.15^2 + (new^2 - 43.15^2) * (27 / (27 + n))^2)
-- within a few percent of the model's own deviation after n duels between
-- equals (rating.carried_over_deviation computes the same; both are tested).
-- Players with no game keep the newcomer's deviation, the column's default.

COMMENT ON COLUMN players.rating IS
    'Plackett-Luce mean (mu) on Elo''s scale: the displayed rating';

ALTER TABLE players ADD COLUMN rating_deviation double precision NOT NULL
    DEFAULT 2 * 400 / (ln(10::float8) * sqrt(2::float8));
COMMENT ON COLUMN players.rating_deviation IS
    'Plackett-Luce deviation (sigma) of the rating: shrinks with games played';

WITH rated_games AS (
    SELECT s.player_id, count(*) AS n
    FROM table_seats s JOIN tables t ON t.id = s.table_id
    WHERE t.status = 'finished'
      AND NOT EXISTS (SELECT 1 FROM table_seats b WHERE b.table_id = t.id AND b.is_bot)
    GROUP BY s.player_id
), behind AS (
    SELECT p.id,
           greatest(coalesce(g.n, 0), ceil(abs(p.rating - 1500) / 32)) AS n
    FROM players p LEFT JOIN rated_games g ON g.player_id = p.id
)
UPDATE players p
SET rating_deviation = sqrt(
    power(43.15, 2)
    + (power(p.rating_deviation, 2) - power(43.15, 2)) * power(27 / (27 + b.n), 2)
)
FROM behind b
WHERE b.id = p.id AND b.n > 0;

ALTER TABLE tickets ADD COLUMN rating_deviation double precision NOT NULL
    DEFAULT 2 * 400 / (ln(10::float8) * sqrt(2::float8));

UPDATE tickets t SET rating_deviation = p.rating_deviation
FROM players p
WHERE p.id = t.player_id AND t.state IN ('queued', 'matching');
