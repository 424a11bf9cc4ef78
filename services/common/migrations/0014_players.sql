-- Players' records: each finished game's result, each player's part in it and
-- their standing in each rule set (games, wins, streak, rating), for the
-- profile, the history and the leaderboards (PlayerService). Written in the
-- commit that ends a game (`services/game/results.py`), and kept when
-- retention deletes the table with its event log: a history and a profile's
-- counts outlive the replay. No foreign key to `tables` for that reason.

CREATE TABLE game_results (
    table_id    uuid PRIMARY KEY,
    ruleset     text NOT NULL,
    -- The table's finished_at (the same transaction's now()).
    finished_at timestamptz NOT NULL,
    -- The engine's end reason ('went_out', ...); '' when not known.
    end_reason  text NOT NULL DEFAULT '',
    -- NULL when nobody won (every seat left).
    winner_seat smallint,
    -- Every seat a person, two or more: the game moved its players' ratings.
    rated       boolean NOT NULL,
    -- One entry per seat, in seat order: who sat there (bots too), under the
    -- name they had at seating, their final total, their place (0 first; equal
    -- totals share one; seats gone before the end share the last) and whether
    -- they left or were eliminated before the end.
    player_ids  text[] NOT NULL,
    names       text[] NOT NULL,
    bots        boolean[] NOT NULL,
    totals      integer[] NOT NULL,
    places      smallint[] NOT NULL,
    gone        boolean[] NOT NULL
);

-- Each person's seat at a finished game. The key serves ListGames: one
-- player's games, newest first, from where a page ended (keyset pagination).
CREATE TABLE player_games (
    player_id     text NOT NULL,
    finished_at   timestamptz NOT NULL,
    table_id      uuid NOT NULL REFERENCES game_results (table_id) ON DELETE CASCADE,
    seat          smallint NOT NULL,
    place         smallint NOT NULL,
    won           boolean NOT NULL,
    -- The player's rating before and after the game; NULL for an unrated game
    -- and for a rated one recorded here from before ratings were kept.
    rating_before double precision,
    rating_after  double precision,
    PRIMARY KEY (player_id, finished_at, table_id)
);

-- A player's record in one rule set, changed by each game they finish in it.
CREATE TABLE player_standings (
    player_id    text NOT NULL,
    ruleset      text NOT NULL,
    games        integer NOT NULL,
    wins         integer NOT NULL,
    -- Wins in a row (> 0), or games in a row without a win (< 0), up to the last.
    streak       integer NOT NULL,
    rated_games  integer NOT NULL,
    -- The player's rating in this rule set, kept equal to what the ratings'
    -- own store says after each game; and how sure it is (NULL: not kept).
    rating       double precision NOT NULL,
    deviation    double precision,
    last_game_at timestamptz NOT NULL,
    PRIMARY KEY (player_id, ruleset)
);

-- GetLeaderboard: a rule set's ranked players (a rated game there) in rank
-- order (rating, then rated games, then player id, all descending), from where
-- a page ended; and the players ahead of one within their rating bucket.
CREATE INDEX player_standings_rank_idx
    ON player_standings (ruleset, rating DESC, rated_games DESC, player_id DESC)
    WHERE rated_games > 0;

-- A rule set's ranked players counted by the whole part of their rating
-- (floor), changed with the standings in a game's commit: a player's rank is
-- the sum of the buckets above theirs plus the few ahead of them in their own,
-- at a cost that does not grow with the number of players (`standings.py`).
CREATE TABLE rating_buckets (
    ruleset text NOT NULL,
    bucket  bigint NOT NULL,
    players integer NOT NULL,
    -- No CHECK (players >= 0): a player leaving a bucket is written as a count
    -- of -1 by INSERT ... ON CONFLICT DO UPDATE, and PostgreSQL checks the row
    -- proposed for the insert before the conflict turns it into an update. The
    -- count stays whole because a player leaves only the bucket they were
    -- counted in (tests/game/test_player_history.py compares it with the
    -- standings).
    PRIMARY KEY (ruleset, bucket)
);

-- The games finished before this migration, from what their tables still hold:
-- the seats, the GameEnded event (winner, reason, totals) and who left (a seat
-- eliminated or gone has left_at), placed as the engine places them
-- (`rules.rounds.final_places`: rami51's totals count up, the others' down).
-- Their rating changes were never kept: rated ones (every seat a known person,
-- two or more, not ended by the operators) say only that they were.
WITH ended AS (
    SELECT t.id, t.ruleset, t.finished_at, coalesce(e.doc, '{}'::jsonb) AS doc
    FROM tables t
    LEFT JOIN LATERAL (
        SELECT convert_from(payload, 'UTF8')::jsonb AS doc FROM table_events
        WHERE table_id = t.id AND kind = 'GameEnded' ORDER BY seq DESC LIMIT 1
    ) AS e ON true
    WHERE t.status = 'finished'
), seated AS (
    SELECT d.id, d.ruleset, d.finished_at, s.seat, s.player_id, s.display_name, s.is_bot,
           s.left_at IS NOT NULL AS gone,
           coalesce((d.doc -> 'totals' ->> s.seat::int)::integer, 0) AS total,
           coalesce((d.doc ->> 'winner')::integer, -1) AS winner,
           coalesce(d.doc ->> 'reason', '') AS reason,
           p.id IS NOT NULL AS known
    FROM ended d
    JOIN table_seats s ON s.table_id = d.id
    LEFT JOIN players p ON p.id = s.player_id AND NOT s.is_bot
), standing AS (
    SELECT x.*,
           count(*) FILTER (WHERE NOT x.gone) OVER (PARTITION BY x.id) AS playing,
           bool_or(x.seat = x.winner AND NOT x.gone) OVER (PARTITION BY x.id) AS winner_in,
           rank() OVER (
               PARTITION BY x.id, (NOT x.gone AND x.seat <> x.winner)
               ORDER BY CASE WHEN x.ruleset = 'rami51' THEN -x.total ELSE x.total END
           ) AS behind,
           count(*) OVER (PARTITION BY x.id) AS seats,
           count(*) FILTER (WHERE x.known) OVER (PARTITION BY x.id) AS people
    FROM seated x
), placed AS (
    SELECT y.*,
           CASE
               WHEN y.gone THEN y.playing
               WHEN y.seat = y.winner THEN 0
               ELSE y.winner_in::integer + y.behind - 1
           END AS place,
           y.people = y.seats AND y.seats >= 2 AND y.reason <> 'ended_by_operator' AS rated
    FROM standing y
), recorded AS (
    INSERT INTO game_results (table_id, ruleset, finished_at, end_reason, winner_seat, rated,
                              player_ids, names, bots, totals, places, gone)
    SELECT id, min(ruleset), min(finished_at), min(reason),
           CASE WHEN min(winner) >= 0 THEN min(winner) END, bool_and(rated),
           array_agg(player_id ORDER BY seat), array_agg(display_name ORDER BY seat),
           array_agg(is_bot ORDER BY seat), array_agg(total ORDER BY seat),
           array_agg(place::smallint ORDER BY seat), array_agg(gone ORDER BY seat)
    FROM placed GROUP BY id
)
INSERT INTO player_games (player_id, finished_at, table_id, seat, place, won)
SELECT player_id, finished_at, id, seat, place, seat = winner
FROM placed WHERE NOT is_bot;

WITH games AS (
    SELECT g.player_id, r.ruleset, g.won, r.rated, g.finished_at,
           row_number() OVER w AS n,
           first_value(g.won) OVER w AS last_won
    FROM player_games g JOIN game_results r ON r.table_id = g.table_id
    WINDOW w AS (PARTITION BY g.player_id, r.ruleset ORDER BY g.finished_at DESC, g.table_id DESC)
)
-- The deviation is read by name (`results.DEVIATION`): where the ratings keep one.
INSERT INTO player_standings (player_id, ruleset, games, wins, streak, rated_games, rating,
                              deviation, last_game_at)
SELECT x.player_id, x.ruleset, count(*), count(*) FILTER (WHERE x.won),
       (coalesce(min(x.n) FILTER (WHERE x.won <> x.last_won), count(*) + 1) - 1)::integer
           * CASE WHEN bool_and(x.last_won) THEN 1 ELSE -1 END,
       count(*) FILTER (WHERE x.rated), coalesce(min(p.rating), 1500),
       min(coalesce(to_jsonb(p) ->> 'rating_deviation', to_jsonb(p) ->> 'sigma')::float8),
       max(x.finished_at)
FROM games x LEFT JOIN players p ON p.id = x.player_id
GROUP BY x.player_id, x.ruleset;

INSERT INTO rating_buckets (ruleset, bucket, players)
SELECT ruleset, floor(rating)::bigint, count(*) FROM player_standings
WHERE rated_games > 0 GROUP BY 1, 2;
