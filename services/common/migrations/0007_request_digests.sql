-- A request id names one request: the digest of what it asked is kept with its
-- answer, so the same id sent with another request (a client whose id counter
-- started again) is refused rather than answered with the first request's
-- answer. Answers kept from before have none, and replay as before.

ALTER TABLE action_requests ADD COLUMN digest bytea;
