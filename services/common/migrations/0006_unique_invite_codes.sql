-- Two waiting private tables never share an invite code: a host whose freshly
-- drawn code is taken draws another. The waiting private tickets by code: the
-- matching loop looks for the private tables that can start.

CREATE UNIQUE INDEX tickets_live_invite_idx ON tickets (invite_code)
    WHERE is_host AND state IN ('queued', 'matching');

CREATE INDEX tickets_queued_invite_idx ON tickets (invite_code)
    WHERE state = 'queued' AND invite_code IS NOT NULL;
