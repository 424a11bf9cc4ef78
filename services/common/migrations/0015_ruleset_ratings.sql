-- A rating per rule set: a player's rating in a rule set is kept with their
-- standing there (`player_standings.rating` and `deviation`) and moved only by
-- that rule set's rated games (`services/game/results.py`). Until now one
-- rating per player served every rule set, copied into each standing.
--
-- Carried over: each standing keeps the rating it holds (the player's single
-- rating as it was), and `players.rating` with `rating_deviation` stays as the
-- start of the player's rating in a rule set they have not played yet. It no
-- longer changes.

COMMENT ON COLUMN players.rating IS
    'The rating carried over from before ratings were per rule set: the start of '
    'the player''s rating in a rule set they have no standing in (1500 for anyone newer)';
COMMENT ON COLUMN players.rating_deviation IS
    'The deviation of the carried-over rating (players.rating)';
COMMENT ON COLUMN player_standings.rating IS
    'The player''s rating in this rule set (Plackett-Luce mean on Elo''s scale)';

-- A standing with no deviation takes its player's; a newcomer's where the player
-- has no row.
UPDATE player_standings s SET deviation = coalesce(
    (SELECT p.rating_deviation FROM players p WHERE p.id = s.player_id),
    2 * 400 / (ln(10::float8) * sqrt(2::float8))
)
WHERE s.deviation IS NULL;

ALTER TABLE player_standings ALTER COLUMN deviation SET NOT NULL;
COMMENT ON COLUMN player_standings.deviation IS
    'How sure the rule set''s rating is (Plackett-Luce sigma): shrinks with its rated games';
